package mcp

import (
	"strings"
	"testing"
	"time"
)

// TestDialogAnsweredThroughMCP: a prompt() on an allowed page blocks every
// script of the page; browser_handle_dialog still reports it and answers
// it, and the page receives the answer (before, the dialog verb itself
// answered browser_dialog_open and the page stayed locked).
func TestDialogAnsweredThroughMCP(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>dialog</title>
<button onclick="document.getElementById('out').textContent = 'answer:' + prompt('Your name?', 'x')">Ask</button>
<p id="out">none</p>`})
	s := startServer(t, serverOpts{args: []string{"--allow", srv.URL}})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	s.ok("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": "Ask"}})
	var report map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := s.ok("browser_handle_dialog", nil)
		report, _ = res["result"].(map[string]any)
		if report["dialog"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dialog was never reported: %v", report)
		}
		time.Sleep(20 * time.Millisecond) // the dialog event arrives on another goroutine
	}
	if str(report, "dialog", "message") != "Your name?" || str(report, "dialog", "type") != "prompt" {
		t.Fatalf("report = %v", report)
	}
	s.ok("browser_handle_dialog", map[string]any{"accept": true, "promptText": "Ada"})
	v := s.ok("browser_evaluate", map[string]any{"expression": "document.getElementById('out').textContent"})
	if got, _ := v["value"].(string); !strings.Contains(got, "answer:Ada") {
		t.Fatalf("the page saw %v", v)
	}
}

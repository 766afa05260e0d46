package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/internal/waitfor"
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
	// The dialog event arrives on another goroutine.
	waitfor.Until(t, 10*time.Second, "the dialog is reported", func() bool {
		report, _ = s.ok("browser_handle_dialog", nil)["result"].(map[string]any)
		return report["dialog"] != nil
	})
	if str(report, "dialog", "message") != "Your name?" || str(report, "dialog", "type") != "prompt" {
		t.Fatalf("report = %v", report)
	}
	s.ok("browser_handle_dialog", map[string]any{"accept": true, "promptText": "Ada"})
	v := s.ok("browser_evaluate", map[string]any{"expression": "document.getElementById('out').textContent"})
	if got, _ := v["value"].(string); !strings.Contains(got, "answer:Ada") {
		t.Fatalf("the page saw %v", v)
	}
}

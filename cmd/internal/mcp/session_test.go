package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestRunnerSessionsOwnTheirBrowsers: two `mcp --runner` sessions with the
// same owner's flags share one daemon. The second's first call is a
// navigate: it launches a browser of its own instead of taking the first
// session's tab, whose typed draft stays; it sees nothing of the first
// session's browser and cannot reach its page by id. The daemon's audit
// names each session. When the second session ends, its browser is closed
// and the first session's stays.
func TestRunnerSessionsOwnTheirBrowsers(t *testing.T) {
	needChromium(t)
	srv := fixture(t, map[string]string{
		"/":      `<!doctype html><title>first</title><label>Draft <input id=d></label>`,
		"/other": `<!doctype html><title>second</title><p>elsewhere</p>`,
	})
	state := shortDir(t)
	d := startDaemonAt(t, state)
	defer d.stop(t)

	first := startServer(t, serverOpts{state: state, args: []string{"--runner"}})
	nav := first.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	firstPage, _ := nav["page"].(string)
	first.ok("browser_type", map[string]any{"target": map[string]any{"label": "Draft"}, "text": "half a sentence"})

	second := startServer(t, serverOpts{state: state, args: []string{"--runner"}})
	nav2 := second.ok("browser_navigate", map[string]any{"url": srv.URL + "/other"})
	if nav2["page"] == firstPage || nav2["launched_browser"] == nil || nav2["title"] != "second" {
		t.Fatalf("the second session's first navigate = %v; want a browser of its own (the first session's page is %s)", nav2, firstPage)
	}
	v := first.ok("browser_evaluate", map[string]any{"expression": "document.title + '|' + document.getElementById('d').value"})
	if v["value"] != "first|half a sentence" {
		t.Fatalf("the first session's tab after the second session's navigate: %v", v["value"])
	}

	st := second.ok("browser_status", nil)
	raw, _ := json.Marshal(st["browsers"])
	if strings.Contains(string(raw), firstPage) || strings.Count(string(raw), `"mode"`) != 1 {
		t.Fatalf("the second session lists %s", raw)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_snapshot", map[string]any{"page": firstPage}},
		{"browser_evaluate", map[string]any{"page": firstPage, "expression": "document.getElementById('d').value"}},
		{"browser_navigate", map[string]any{"page": firstPage, "url": srv.URL + "/other"}},
		{"browser_tabs", map[string]any{"action": "close", "page": firstPage}},
	} {
		res := second.call(c.tool, c.args)
		if ref := res.refusal(); ref == nil || ref.Code != fsm.NotFound {
			t.Fatalf("%s on the first session's page = %s, want %s", c.tool, res.text, fsm.NotFound)
		}
		if strings.Contains(res.text, "half a sentence") {
			t.Fatalf("%s read the first session's draft", c.tool)
		}
	}

	recs, _ := auditRecords(t, state)
	sessions := map[string]bool{}
	for _, r := range recs {
		if r["tool"] == "browser_navigate" {
			s, _ := r["session"].(string)
			sessions[s] = strings.HasPrefix(s, "mcp-")
		}
	}
	if len(sessions) != 2 {
		t.Errorf("the daemon audited navigations under %v, want the two MCP sessions", sessions)
	}
	for s, ok := range sessions {
		if !ok {
			t.Errorf("a navigation is audited under %q, not an MCP session", s)
		}
	}

	second.cs.Close() // the session ends: its browser is closed, the first's stays
	// The daemon closes it as the session's server exits.
	var left []localapi.BrowserInfo
	if !waitfor.Start(60 * time.Second).Wait(func() bool {
		got, err := localapi.GetStatus.Call(t.Context(), d.c, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		left = got.Browsers
		return len(left) == 1
	}) {
		t.Fatalf("the ended session's browser is still open: %+v", left)
	}
	if raw, _ := json.Marshal(left[0]); !strings.Contains(string(raw), firstPage) {
		t.Fatalf("the browser left is not the first session's: %s", raw)
	}
	if v := first.ok("browser_evaluate", map[string]any{"expression": "document.getElementById('d').value"}); v["value"] != "half a sentence" {
		t.Fatalf("the first session's draft after the second ended: %v", v["value"])
	}
}

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// TestEmbeddedRunnerBesideDaemon: the embedded Runner does not listen on
// the Runner socket, so a daemon starts on the same state root while the
// MCP server runs, and the daemon's start-up does not reap the MCP
// server's live browser (only a dead Runner's browsers are orphans).
func TestEmbeddedRunnerBesideDaemon(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>still here</title>`})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	if _, err := os.Stat(filepath.Join(s.state, localapi.SocketName)); err == nil {
		t.Fatal("the embedded Runner listens on the Runner socket")
	}
	d := startDaemonAt(t, s.state)
	defer d.stop(t)
	if v := s.ok("browser_evaluate", map[string]any{"expression": "document.title"}); v["value"] != "still here" {
		t.Fatalf("after a daemon started beside it: %v", v)
	}
}

// TestRunnerMode: --runner drives the daemon through its local API; its
// approvals come from `webcodex approve` at a terminal, not the host.
func TestRunnerMode(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>through the daemon</title><button>Go</button>`})
	state := shortDir(t)
	d := startDaemonAt(t, state)
	defer d.stop(t)
	s := startServer(t, serverOpts{state: state, args: []string{"--runner", "--allow-attach"}})
	nav := s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	if nav["title"] != "through the daemon" || nav["launched_browser"] == "" {
		t.Fatalf("navigate = %v", nav)
	}
	s.ok("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": "Go"}})
	st := s.ok("browser_status", nil)
	if str(st, "server", "runner") != "daemon" || st["server"].(map[string]any)["host_approval"] != false {
		t.Fatalf("status = %v", st)
	}
	// The daemon has it too.
	got, err := localapi.GetStatus.Call(t.Context(), d.c, struct{}{})
	if err != nil || len(got.Browsers) != 1 {
		t.Fatalf("daemon status = %+v, %v", got, err)
	}
	// Nothing listens there: the browser needs setting up, no owner is wrong.
	ref := s.refused("browser_attach", map[string]any{"endpoint": "127.0.0.1:1"}, fsm.RequiresSetup)
	if strings.Contains(ref.Detail, "127.0.0.1:1") {
		t.Errorf("the refusal echoes the endpoint: %q", ref.Detail)
	}
	recs, _ := auditRecords(t, state)
	if !hasRecord(recs, map[string]string{"tool": "browser_click", "action": "click", "session": str(st, "server", "session"), "outcome": "ok"}) {
		t.Fatalf("the daemon did not audit the click: %v", recs)
	}
}

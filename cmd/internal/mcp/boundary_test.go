package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// TestRunnerModeKeepsTheCreatorsBoundary: a browser launched by the owner
// at a terminal (no allowlist: the open web) on a shared daemon is
// invisible to an `mcp --runner --allow X` session — the session cannot
// list it, read it, navigate it or evaluate in it by id, so a narrower
// session never reaches the secret on a page outside its allowlist — while
// the session's own browser, launched under its own boundary, works.
func TestRunnerModeKeepsTheCreatorsBoundary(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	const secret = "CLI-PAGE-SECRET-5520"
	other := fixture(t, map[string]string{"/": `<!doctype html><title>` + secret + `</title><p>` + secret})
	mine := fixture(t, map[string]string{"/": `<!doctype html><title>mine</title><p>allowed here`})
	state := shortDir(t)
	d := startDaemonAt(t, state)
	defer d.stop(t)
	ctx := t.Context()
	// The owner's browser, as `webcodex launch` and `webcodex open` make it.
	b, err := localapi.Launch.Call(ctx, d.c, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := localapi.Open.Call(ctx, d.c, localapi.OpenRequest{Browser: b.ID, URL: other.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}

	s := startServer(t, serverOpts{state: state, args: []string{"--runner", "--allow", mine.URL}})
	st := s.ok("browser_status", nil)
	if raw, _ := json.Marshal(st); strings.Contains(string(raw), b.ID) || strings.Contains(string(raw), p.ID) {
		t.Fatalf("the session lists the owner's browser: %s", raw)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_snapshot", map[string]any{"page": p.ID}},
		{"browser_evaluate", map[string]any{"page": p.ID, "expression": "document.title"}},
		{"browser_navigate", map[string]any{"page": p.ID, "url": mine.URL + "/"}},
		{"browser_take_screenshot", map[string]any{"page": p.ID}},
		{"browser_close", map[string]any{"browser": b.ID}},
	} {
		res := s.call(c.tool, c.args)
		body, _ := json.Marshal(res.body)
		raw := res.text + string(body)
		if strings.Contains(raw, secret) {
			t.Fatalf("%s reached the owner's page: %s", c.tool, raw)
		}
		if ref := res.refusal(); ref == nil || ref.Code != fsm.NotFound {
			t.Fatalf("%s on the owner's browser = %s, want %s", c.tool, raw, fsm.NotFound)
		}
	}
	// The session's own browser is its to use.
	nav := s.ok("browser_navigate", map[string]any{"url": mine.URL + "/"})
	if nav["title"] != "mine" {
		t.Fatalf("the session's own navigate = %v", nav)
	}
	// And the owner's page is untouched.
	rd, err := localapi.Of(op.ReadText).Call(ctx, d.c, op.ReadIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || !strings.Contains(rd.Text, secret) {
		t.Fatalf("the owner's page after the session = %+v, %v", rd, err)
	}
}

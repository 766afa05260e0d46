package mcp

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// TestVerbTools: through a real MCP client and Chromium, back, forward and
// reload move the tab; scroll and probe act on the page; a download a
// probed click started is listed, waited for and saved into a directory
// of the caller's.
func TestVerbTools(t *testing.T) {
	t.Parallel() // its own server, Runner and browser
	needChromium(t)
	srv := fixture(t, map[string]string{
		"/a":    `<!doctype html><title>A</title><a href="/file" download="notes.txt">Get notes</a><div style="height:3000px"></div>`,
		"/b":    `<!doctype html><title>B</title><p>second</p>`,
		"/file": `plain notes`,
	})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/a"})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/b"})
	if got := str(s.ok("browser_navigate_back", map[string]any{}), "url"); got != srv.URL+"/a" {
		t.Fatalf("back: url %q", got)
	}
	if got := str(s.ok("browser_navigate_forward", map[string]any{}), "title"); got != "B" {
		t.Fatalf("forward: title %q", got)
	}
	if r := s.call("browser_navigate_forward", map[string]any{}); !r.isError || r.refusal() == nil || r.refusal().Code != fsm.NotFound {
		t.Fatalf("forward at the newest entry = %s", r.text)
	}
	if got := str(s.ok("browser_reload", map[string]any{}), "url"); got != srv.URL+"/b" {
		t.Fatalf("reload: url %q", got)
	}
	s.ok("browser_navigate_back", map[string]any{})

	if r := s.call("browser_scroll", map[string]any{"to": "bottom"}); r.isError || !strings.Contains(r.text, "at the bottom") {
		t.Fatalf("scroll: %s", r.text)
	}
	if r := s.call("browser_scroll", map[string]any{}); r.refusal() == nil || r.refusal().Code != fsm.InvalidArgument {
		t.Fatalf("scroll with nothing = %s", r.text)
	}

	snap := s.call("browser_snapshot", map[string]any{})
	m := regexp.MustCompile(`link "Get notes"[^\n]*\[(e[0-9]+)\]`).FindStringSubmatch(snap.text)
	if m == nil {
		t.Fatalf("no ref for the link in %q", snap.text)
	}
	if r := s.call("browser_probe", map[string]any{"action": "click", "ref": m[1]}); r.isError {
		t.Fatalf("probe: %s", r.text)
	}
	r := s.call("browser_downloads", map[string]any{"wait": 20})
	if r.isError || !strings.Contains(r.text, `d1 "notes.txt" completed 11 bytes`) {
		t.Fatalf("downloads: %s", r.text)
	}
	keep := t.TempDir()
	r = s.call("browser_downloads", map[string]any{"id": "d1", "save": keep})
	if r.isError {
		t.Fatalf("save: %s", r.text)
	}
	if got, err := os.ReadFile(filepath.Join(keep, "notes.txt")); err != nil || string(got) != "plain notes" {
		t.Fatalf("saved file: %q, %v", got, err)
	}
	if r := s.call("browser_downloads", map[string]any{"wait": 999}); r.refusal() == nil || r.refusal().Code != fsm.InvalidArgument {
		t.Fatalf("wait over the bound = %s", r.text)
	}
}

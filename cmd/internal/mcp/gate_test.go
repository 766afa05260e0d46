package mcp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// gateSites is an allowed site on 127.0.0.1 and another site (localhost)
// it links to and embeds.
type gateSites struct {
	home, other string // http://127.0.0.1:A, http://localhost:B
	neighbour   string // http://127.0.0.1:C
	allowEntry  string // 127.0.0.1:A
}

func newGateSites(t *testing.T) gateSites {
	t.Helper()
	b := fixture(t, map[string]string{
		"/landing": `<!doctype html><title>landing</title><p>LANDING-SECRET-TEXT</p>`,
		"/frame":   `<!doctype html><title>partner</title><p>FRAME-SECRET-TEXT</p><button>Partner button</button>`,
	})
	other := localhostURL(b)
	// Same site (127.0.0.1), another origin (port): an in-process frame.
	c := fixture(t, map[string]string{
		"/frame": `<!doctype html><title>neighbour</title><p>SAMESITE-SECRET-TEXT</p>`,
	})
	a := fixture(t, map[string]string{
		"/": `<!doctype html><title>home</title><p>home text</p>
<a href="` + other + `/landing">Leave the site</a>
<iframe title="Own" src="/inner"></iframe>
<iframe title="Partner" src="` + other + `/frame" onload="window.partnerLoaded = true"></iframe>
<iframe title="Neighbour" src="` + c.URL + `/frame" onload="window.neighbourLoaded = true"></iframe>`,
		"/inner": `<!doctype html><title>inner</title><p>OWN-FRAME-TEXT</p>`,
	})
	u, _ := url.Parse(a.URL)
	return gateSites{home: a.URL, other: other, neighbour: c.URL, allowEntry: u.Host}
}

// loadedHome navigates to the home page and waits until both frames have
// loaded, so a frame missing from a snapshot is missing by policy, not by
// timing.
func loadedHome(t *testing.T, s *server, g gateSites) string {
	t.Helper()
	s.ok("browser_navigate", map[string]any{"url": g.home + "/"})
	waitfor.Until(t, 15*time.Second, "the partner frame loads", func() bool {
		v := s.ok("browser_evaluate", map[string]any{"expression": "window.partnerLoaded === true && window.neighbourLoaded === true"})
		return v["value"] == true
	})
	var text string
	if !waitfor.Start(15 * time.Second).Wait(func() bool {
		text = s.call("browser_snapshot", map[string]any{}).text
		return strings.Contains(text, "OWN-FRAME-TEXT") && strings.Contains(text, "Partner") && strings.Contains(text, "Neighbour")
	}) {
		t.Fatalf("frames never appeared in the outline:\n%s", text)
	}
	return text
}

// TestCrossSiteFrameInvisible: with the open web (no --allow) the
// cross-site frame's content is in the outline (the control); with an
// allowlist that covers only the embedding site it is not, and raw CDP
// cannot enter it either. The same-origin frame stays visible.
func TestCrossSiteFrameInvisible(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	g := newGateSites(t)

	open := startServer(t, serverOpts{})
	if text := loadedHome(t, open, g); !strings.Contains(text, "FRAME-SECRET-TEXT") || !strings.Contains(text, "Partner button") || !strings.Contains(text, "SAMESITE-SECRET-TEXT") {
		t.Fatalf("control: the cross-site frame is not read on the open web:\n%s", text)
	}

	s := startServer(t, serverOpts{args: []string{"--allow", g.allowEntry}})
	text := loadedHome(t, s, g)
	for _, secret := range []string{"FRAME-SECRET-TEXT", "Partner button", "SAMESITE-SECRET-TEXT"} {
		if strings.Contains(text, secret) {
			t.Fatalf("a frame of a denied origin is visible (%q):\n%s", secret, text)
		}
	}
	if !strings.Contains(text, "OWN-FRAME-TEXT") || !strings.Contains(text, "home text") {
		t.Fatalf("the allowed content is missing:\n%s", text)
	}
	// Its elements cannot be reached semantically either.
	s.refused("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": "Partner button"}}, fsm.ElementNotFound)

	// Raw CDP cannot create a world in a frame at all (the policy withholds
	// Page.createIsolatedWorld); the frame gate covers the surface's own.
	s.refused("browser_cdp", map[string]any{"method": "Page.createIsolatedWorld", "params": map[string]any{"frameId": "x"}}, fsm.PolicyDenied)
}

// TestOriginGateEndToEnd: a navigation to a denied origin is refused
// without naming the allowlist; a click and a script that lead off the
// allowlist are reported and the page is then unreadable and unlisted.
func TestOriginGateEndToEnd(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	g := newGateSites(t)
	s := startServer(t, serverOpts{args: []string{"--allow", g.allowEntry}})
	s.ok("browser_launch", nil)
	s.ok("browser_navigate", map[string]any{"url": g.home + "/"})

	ref := s.refused("browser_navigate", map[string]any{"url": g.other + "/landing"}, fsm.OriginDenied)
	otherOrigin := g.other
	if !strings.Contains(ref.Detail, otherOrigin) {
		t.Errorf("the refusal does not name the requested origin: %q", ref.Detail)
	}
	noSecrets(t, "a navigation refusal", ref.Detail+ref.Next, g.allowEntry, "127.0.0.1")
	// Not an enumeration oracle: another denied origin gets the same words.
	ref2 := s.refused("browser_navigate", map[string]any{"url": "http://example.invalid:81/x"}, fsm.OriginDenied)
	if strings.ReplaceAll(ref.Detail, otherOrigin, "O") != strings.ReplaceAll(ref2.Detail, "http://example.invalid:81", "O") {
		t.Errorf("refusals differ beyond the origin: %q vs %q", ref.Detail, ref2.Detail)
	}
	for _, u := range []string{"file:///etc/passwd", "chrome://settings", "javascript:alert(1)", "http://127.0.0.1.evil.test/", "http://" + g.allowEntry + "@evil.test/"} {
		s.refused("browser_navigate", map[string]any{"url": u}, fsm.OriginDenied)
	}

	// A click that leaves: reported on the next look, then unreadable.
	page := str(s.ok("browser_status", nil), "current", "page")
	s.ok("browser_click", map[string]any{"target": map[string]any{"role": "link", "name": "Leave the site"}})
	left := s.refused("browser_wait_for", map[string]any{"urlIncludes": "/landing", "timeout": 10}, fsm.OriginDenied)
	if !strings.Contains(left.Detail, "left the allowed origins") {
		t.Errorf("the agent is not told the page left: %q", left.Detail)
	}
	for _, tool := range []string{"browser_snapshot", "browser_take_screenshot", "browser_console_messages", "browser_network_requests"} {
		s.refused(tool, map[string]any{"page": page}, fsm.OriginDenied)
	}
	s.refused("browser_evaluate", map[string]any{"expression": "document.body.innerText"}, fsm.OriginDenied)
	s.refused("browser_click", map[string]any{"target": map[string]any{"text": "LANDING-SECRET-TEXT"}}, fsm.OriginDenied)
	tabs := s.ok("browser_tabs", map[string]any{"action": "list"})
	if b, _ := json.Marshal(tabs); strings.Contains(string(b), page) || strings.Contains(string(b), "localhost") {
		t.Errorf("a page off the allowlist is listed: %s", b)
	}

	// Navigating back to an allowed destination recovers the page; a script
	// that leaves is reported the same way.
	s.ok("browser_navigate", map[string]any{"page": page, "url": g.home + "/"})
	s.ok("browser_evaluate", map[string]any{"expression": fmt.Sprintf("setTimeout(() => { location.href = %q }, 50), 'scheduled'", g.other+"/landing")})
	s.refused("browser_wait_for", map[string]any{"condition": "url", "urlIncludes": "/landing", "timeout": 10}, fsm.OriginDenied)
	s.refused("browser_snapshot", map[string]any{}, fsm.OriginDenied)

	s.mu.Lock()
	seen := strings.Join(s.seen, "\n")
	s.mu.Unlock()
	noSecrets(t, "the tool results", seen, "LANDING-SECRET-TEXT", "FRAME-SECRET-TEXT", g.other+"/landing")
	recs, audit := auditRecords(t, s.state)
	for _, want := range []map[string]string{
		{"tool": "browser_navigate", "verdict": string(fsm.OriginDenied), "origin": g.other},
		{"tool": "browser_click", "verdict": string(fsm.OriginDenied), "page": page},
		{"tool": "browser_click", "verdict": "allowed", "outcome": "ok", "page": page, "origin": g.home},
	} {
		if !hasRecord(recs, want) {
			t.Errorf("no audit record %v in\n%s", want, audit)
		}
	}
	noSecrets(t, "the audit trail", audit, "/landing", "LANDING-SECRET-TEXT")
}

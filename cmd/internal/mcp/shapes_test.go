package mcp

import (
	"regexp"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

const shapesPage = `<!doctype html><title>Shapes</title><h1>Shapes</h1>
<label>Email <input id=email></label><label>Code <input id=code onkeydown="window.keys = (window.keys || 0) + 1"></label>
<button onclick="document.getElementById('n').textContent = +document.getElementById('n').textContent + 1">Send</button>
<button>Other</button><button onclick="confirm('Sure?')">Ask</button>
<p id=n>0</p><a href="/next">Next page</a>`

// TestPlaywrightShapes: the element tools take Playwright MCP's arguments
// (a bare ref, with or without element), still fenced by the snapshot the
// ref came from; a snapshot reads as text; actions say what they caused;
// malformed arguments are typed refusals naming the argument; a wait that
// times out is an error with its code; and no hint names a CLI flag.
func TestPlaywrightShapes(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browser
	needChromium(t)
	srv := fixture(t, map[string]string{"/": shapesPage, "/next": `<!doctype html><title>Next</title><p>next</p>`})
	s := startServer(t, serverOpts{args: []string{"--allow", srv.URL}})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})

	snap := s.call("browser_snapshot", nil)
	if snap.isError || !strings.HasPrefix(snap.text, "<page origin=\""+srv.URL+"\" frame=\"main\">\nurl: "+srv.URL+"/\ntitle: Shapes\n") {
		t.Fatalf("the snapshot's text does not open with url and title:\n%s", snap.text)
	}
	if strings.Contains(snap.text, `\"`) || !strings.Contains(snap.text, `button "Send"`) {
		t.Fatalf("the outline is not plain text:\n%s", snap.text)
	}
	if _, outlined := snap.body["text"]; outlined || str(snap.body, "snapshotId") == "" || snap.body["refs"] == nil {
		t.Fatalf("structured content = %v, want the machine fields without the outline", snap.body)
	}
	send, email, next, ask := ref(t, snap.text, `button "Send"`), ref(t, snap.text, `textbox "Email"`), ref(t, snap.text, `link "Next page"`), ref(t, snap.text, `button "Ask"`)

	if tabs := s.call("browser_tabs", map[string]any{"action": "list"}); !strings.Contains(tabs.text, ` (current) "Shapes" `+srv.URL+"/\n") {
		t.Fatalf("the tab list reads %q", tabs.text)
	}

	// A bare ref means the page's latest snapshot; element is a description.
	if r := s.call("browser_click", map[string]any{"ref": send}); r.isError || r.text != "clicked the button\n" {
		t.Fatalf("click {ref} = %q", r.text)
	}
	s.ok("browser_click", map[string]any{"ref": send, "element": "the Send button"})
	if v := s.ok("browser_evaluate", map[string]any{"expression": "document.getElementById('n').textContent"}); v["value"] != "2" {
		t.Fatalf("the two clicks by ref gave %v", v["value"])
	}
	if r := s.call("browser_type", map[string]any{"ref": email, "text": "ada@example.com"}); !strings.Contains(r.text, "entered 15 of 15 characters") || strings.Contains(r.text, "ada@") {
		t.Fatalf("type by ref = %q", r.text)
	}

	// slowly: a key event per character, as a person types.
	code := ref(t, s.call("browser_snapshot", nil).text, `textbox "Code"`)
	if r := s.call("browser_type", map[string]any{"ref": code, "text": "4321", "slowly": true}); !strings.Contains(r.text, "entered 4 of 4 characters") {
		t.Fatalf("type slowly = %q", r.text)
	}
	if v := s.ok("browser_evaluate", map[string]any{"expression": "window.keys + '/' + document.getElementById('code').value"}); v["value"] != "4/4321" {
		t.Fatalf("typed slowly: %v, want 4 key events and the text", v["value"])
	}

	// The project's own refusals, naming the argument.
	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"browser_click", map[string]any{"target": map[string]any{"rol": "button"}}, `{"role":"button","name":"Save"}`},
		{"browser_click", map[string]any{"target": map[string]any{"name": "Send"}}, "target.name goes with target.role"},
		{"browser_click", map[string]any{"ref": send, "target": map[string]any{"label": "Email"}}, "ref or target, not both"},
		{"browser_click", map[string]any{"ref": "Send"}, `ref "Send" is not a ref like e5`},
		{"browser_click", map[string]any{"refs": send}, `unknown argument "refs"; this tool takes button, doubleClick, element, idempotencyKey, modifiers, page, ref, snapshot, snapshotId, target`},
		{"browser_click", map[string]any{}, "name the element: ref"},
		{"browser_wait_for", map[string]any{"text": "x", "timeout": "soon"}, "timeout must be a number"},
		{"browser_fill_form", map[string]any{"fields": []any{map[string]any{"ref": email, "type": "range", "value": "1"}}}, "fields[0].type is one of textbox, checkbox, radio, combobox, slider"},
	} {
		ref := s.refused(c.tool, c.args, fsm.InvalidArgument)
		if !strings.Contains(ref.Detail, c.says) {
			t.Errorf("%s %v: detail %q, want it to say %q", c.tool, c.args, ref.Detail, c.says)
		}
	}

	// Hints name MCP arguments and tools, never the CLI's flags.
	noFlags := func(what string, r result) {
		t.Helper()
		if m := regexp.MustCompile(`--[a-z]|webcodex [a-z]+ `).FindString(r.text); m != "" {
			t.Errorf("%s: the answer names %q: %s", what, m, r.text)
		}
	}
	amb := s.call("browser_click", map[string]any{"target": map[string]any{"role": "button"}})
	if ref := amb.refusal(); ref == nil || ref.Code != fsm.ElementAmbiguous || !strings.Contains(amb.text, "target.index") {
		t.Fatalf("an ambiguous target = %s", amb.text)
	}
	noFlags("ambiguous", amb)
	wait := s.call("browser_wait_for", map[string]any{"text": "never there", "timeout": 0.3})
	if ref := wait.refusal(); !wait.isError || ref == nil || ref.Code != fsm.Timeout || !strings.Contains(wait.text, "browser_snapshot") {
		t.Fatalf("a wait that times out = %s, want an error with %s", wait.text, fsm.Timeout)
	}
	noFlags("wait", wait)
	s.ok("browser_wait_for", map[string]any{"text": "Next page", "timeout": 5})
	denied := s.call("browser_navigate", map[string]any{"url": localhostURL(srv) + "/"})
	if ref := denied.refusal(); ref == nil || ref.Code != fsm.OriginDenied {
		t.Fatalf("navigate off the allowlist = %s", denied.text)
	}
	noFlags("origin denied", denied)

	// Actions say what they caused, a line each.
	if r := s.call("browser_click", map[string]any{"ref": ask}); !strings.Contains(r.text, "a confirm dialog opened") || !strings.Contains(r.text, "\nconfirm dialog: Sure?\n</page>") {
		t.Fatalf("click that opens a dialog = %q", r.text)
	}
	if r := s.call("browser_handle_dialog", map[string]any{"accept": false}); r.text != "dismissed the confirm dialog. Its message:\n<page origin=\""+srv.URL+"\" frame=\"main\">\nSure?\n</page>\n" {
		t.Fatalf("handle_dialog = %q", r.text)
	}
	nav := s.call("browser_click", map[string]any{"ref": next, "element": "Next page"})
	if !strings.Contains(nav.text, "it navigated to "+srv.URL+"/next") || !strings.Contains(nav.text, "\ntitle: Next\n</page>") {
		t.Fatalf("a click that navigates = %q", nav.text)
	}
	// The latest snapshot is the replaced document's: its refs are stale,
	// never rebound to the new page.
	s.refused("browser_click", map[string]any{"ref": send}, fsm.BindingStale)
}

// ref is the ref on the outline line that starts with line.
func ref(t *testing.T, outline, line string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)- ` + regexp.QuoteMeta(line) + `[^\n]*\[(e[0-9]+)\]`).FindStringSubmatch(outline)
	if m == nil {
		t.Fatalf("no ref for %s in:\n%s", line, outline)
	}
	return m[1]
}

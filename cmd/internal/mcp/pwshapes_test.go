package mcp

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
)

const pwPage = `<!doctype html><title>pw</title>
<button id=go onclick="log.push('click')" ondblclick="log.push('dbl')" oncontextmenu="log.push('ctx'); return false"
 onauxclick="log.push('aux' + event.button)" onmousedown="log.push('mods:' + [event.shiftKey, event.ctrlKey, event.altKey])">Go</button>
<button class=dup>A</button><button class=dup>B</button>
<button id=ask onclick="window.answer = prompt('Name?')">Ask</button>
<input id=file type=file>
<label><input type=checkbox id=agree> Agree</label>
<select id=color aria-label=Color><option value=r>Red</option><option value=g>Green</option></select>
<label>Note <input id=note></label>
<ul><li>one <b>deep</b></li></ul>
<img src="/pic.png">
<script>window.log = []; console.log('info msg'); console.debug('debug msg'); console.warn('warn msg'); console.error('err msg'); fetch('/api/data');</script>`

// pageState reads what the page recorded, through the page itself.
func pageState(t *testing.T, s *server, expr string) string {
	t.Helper()
	v := s.ok("browser_evaluate", map[string]any{"expression": expr})
	str, _ := v["value"].(string)
	return str
}

// TestPlaywrightArgumentShapes: the existing tools take @playwright/mcp
// 0.0.83's argument shapes with its meaning, each checked from the page's
// own state in real Chromium: target as a ref or a unique selector (an
// ambiguous or missing one refused with its count), click doubleClick,
// button and modifiers, snapshot depth and target, screenshot type and
// filename (into the session's output directory only), console level and
// all, network static and filter, tabs by index, file_upload paths,
// wait_for time with text, fill_form by name/type/value, select_option by
// option text, handle_dialog with promptText.
func TestPlaywrightArgumentShapes(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := fixture(t, map[string]string{"/": pwPage, "/pic.png": "x", "/api/data": "{}", "/two": `<title>two</title><script>console.log('second page')</script>`})
	uploads := t.TempDir()
	if err := os.WriteFile(filepath.Join(uploads, "doc.txt"), []byte("doc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{args: []string{"--upload-dir", uploads}})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	s.ok("browser_wait_for", map[string]any{"text": "Go"})
	log := func() string { return pageState(t, s, "window.log.join(',')") }

	// target: a selector string; click options.
	s.ok("browser_click", map[string]any{"target": "#go"})
	s.ok("browser_click", map[string]any{"target": "#go", "doubleClick": true})
	s.ok("browser_click", map[string]any{"target": "#go", "button": "right"})
	s.ok("browser_click", map[string]any{"target": "#go", "button": "middle"})
	s.ok("browser_click", map[string]any{"target": "#go", "modifiers": []string{"Shift", "Alt"}})
	want := "mods:false,false,false,click,mods:false,false,false,click,mods:false,false,false,click,dbl,mods:false,false,false,ctx,aux2,mods:false,false,false,aux1,mods:true,false,true,click"
	if got := log(); got != want {
		t.Fatalf("the page logged %q,\nwant %q", got, want)
	}
	// Ambiguous and missing selectors are refused with their count, and the
	// page is untouched.
	if r := s.refused("browser_click", map[string]any{"target": ".dup"}, fsm.ElementAmbiguous); !strings.Contains(r.Detail, "2 visible matches") {
		t.Errorf("an ambiguous selector: %q", r.Detail)
	}
	if r := s.refused("browser_click", map[string]any{"target": "#missing"}, fsm.ElementNotFound); !strings.Contains(r.Detail, "0 elements match") {
		t.Errorf("a missing selector: %q", r.Detail)
	}
	if got := log(); got != want {
		t.Fatalf("refused clicks changed the page: %q", got)
	}
	// A ref from the latest snapshot, as a target string.
	snap := s.call("browser_snapshot", nil).text
	s.ok("browser_click", map[string]any{"target": ref(t, snap, `button "Go"`), "element": "Go"})
	if got := log(); !strings.HasSuffix(got, ",mods:false,false,false,click") || len(got) <= len(want) {
		t.Fatalf("click by ref target: %q", got)
	}

	// Bad input: a one-line invalid_argument refusal naming the argument,
	// never a protocol error, and nothing on the page changes.
	before := log() + "|" + pageState(t, s, "[agree.checked, color.value, note.value, document.title, location.href].join()")
	for _, c := range []struct {
		tool, arg string
		args      map[string]any
	}{
		{"browser_click", "button", map[string]any{"target": "#go", "button": "left2"}},
		{"browser_click", "modifiers[0]", map[string]any{"target": "#go", "modifiers": []string{"Hyper"}}},
		{"browser_click", "doubleClick", map[string]any{"target": "#go", "doubleClick": "yes"}},
		{"browser_click", "target", map[string]any{"target": 42}},
		{"browser_click", "target", map[string]any{"target": "   "}},
		{"browser_hover", "target", map[string]any{"target": ""}},
		{"browser_take_screenshot", "type", map[string]any{"type": "gif"}},
		{"browser_take_screenshot", "scale", map[string]any{"scale": "x"}},
		{"browser_snapshot", "depth", map[string]any{"depth": -1}},
		{"browser_console_messages", "level", map[string]any{"level": "fatal"}},
		{"browser_network_requests", "static", map[string]any{"static": "no"}},
		{"browser_network_requests", "filter", map[string]any{"filter": "(["}},
		{"browser_tabs", "index", map[string]any{"action": "select", "index": "first"}},
		{"browser_file_upload", "paths", map[string]any{"paths": "doc.txt"}},
		{"browser_wait_for", "time", map[string]any{"time": 31, "text": "Go"}},
		{"browser_fill_form", "fields[0].value", map[string]any{"fields": []any{map[string]any{"target": "#note", "type": "textbox", "value": 5}}}},
		{"browser_type", "text", map[string]any{"target": "#note", "text": 5}},
		{"browser_select_option", "values", map[string]any{"target": "#color", "values": "g"}},
		{"browser_handle_dialog", "accept", map[string]any{"accept": "yes"}},
		{"browser_evaluate", "function", map[string]any{"function": 5}},
		{"browser_navigate", "url", map[string]any{"url": 5}},
		{"browser_press_key", "key", map[string]any{"key": []string{"a"}}},
	} {
		r := s.refused(c.tool, c.args, fsm.InvalidArgument)
		if strings.Contains(r.Detail, "\n") || !strings.Contains(r.Detail, c.arg) {
			t.Errorf("%s %v: detail %q, want one line naming %s", c.tool, c.args, r.Detail, c.arg)
		}
	}
	if after := log() + "|" + pageState(t, s, "[agree.checked, color.value, note.value, document.title, location.href].join()"); after != before {
		t.Fatalf("refused calls changed the page: %q, was %q", after, before)
	}

	// evaluate on an element: the function gets it, in the page's own
	// world (the page's globals are there); a disabled one too.
	if v := s.ok("browser_evaluate", map[string]any{"target": "#go", "element": "Go", "function": "(el) => el.textContent + ':' + window.log.length"}); v["value"] != "Go:"+pageState(t, s, "String(window.log.length)") {
		t.Errorf("evaluate on #go = %v", v["value"])
	}
	s.refused("browser_evaluate", map[string]any{"target": "#go", "expression": "1"}, fsm.InvalidArgument)
	s.refused("browser_evaluate", map[string]any{"target": ".dup", "function": "(el) => el.click()"}, fsm.ElementAmbiguous)

	// snapshot depth and target.
	full := s.call("browser_snapshot", nil).text
	shallow := s.call("browser_snapshot", map[string]any{"depth": 1})
	if !strings.Contains(full, `"deep"`) && !strings.Contains(full, "deep") {
		t.Fatalf("the full snapshot lacks the nested text:\n%s", full)
	}
	if strings.Contains(shallow.text, "deep") || shallow.body["depthCut"].(float64) == 0 {
		t.Errorf("depth 1 kept nested lines:\n%s", shallow.text)
	}
	sub := s.call("browser_snapshot", map[string]any{"target": "#color"}).text
	if !strings.Contains(sub, `combobox "Color"`) || strings.Contains(sub, `button "Go"`) {
		t.Errorf("snapshot of target #color:\n%s", sub)
	}

	// screenshot type and filename.
	shot := s.call("browser_take_screenshot", map[string]any{"type": "jpeg", "filename": "page.jpg"})
	img, ok := shot.raw.Content[0].(*sdk.ImageContent)
	if shot.isError || !ok || img.MIMEType != "image/jpeg" || len(img.Data) < 3 || img.Data[0] != 0xFF || img.Data[1] != 0xD8 {
		t.Fatalf("a jpeg screenshot: %s", shot.text)
	}
	saved := str(shot.body, "savedTo")
	if b, err := os.ReadFile(saved); err != nil || len(b) != len(img.Data) || !strings.HasPrefix(saved, s.state) {
		t.Fatalf("savedTo %q (under %q): %v", saved, s.state, err)
	}
	if err := os.Symlink(filepath.Join(uploads, "doc.txt"), filepath.Join(filepath.Dir(saved), "link.png")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../x.png", "/tmp/x.png", "sub/x.png", "link.png"} {
		r := s.refused("browser_take_screenshot", map[string]any{"filename": name}, fsm.InvalidArgument)
		if !strings.Contains(r.Detail, "filename") {
			t.Errorf("filename %q: %q", name, r.Detail)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(uploads, "doc.txt")); string(b) != "doc\n" {
		t.Fatalf("a screenshot was written through the link: %q", b)
	}

	// console level (more severe included) and all.
	console := func(args map[string]any) string { return jsonText(s.ok("browser_console_messages", args)) }
	if c := console(nil); !strings.Contains(c, "info msg") || !strings.Contains(c, "err msg") || strings.Contains(c, "debug msg") {
		t.Errorf("console at the default level (info): %s", c)
	}
	if c := console(map[string]any{"level": "warning"}); !strings.Contains(c, "warn msg") || !strings.Contains(c, "err msg") || strings.Contains(c, "info msg") {
		t.Errorf("console level warning: %s", c)
	}
	if c := console(map[string]any{"level": "debug"}); !strings.Contains(c, "debug msg") {
		t.Errorf("console level debug: %s", c)
	}

	// network static and filter.
	s.ok("browser_wait_for", map[string]any{"text": "Go"})
	netw := func(args map[string]any) string { return jsonText(s.ok("browser_network_requests", args)) }
	if n := netw(nil); strings.Contains(n, "/pic.png") || !strings.Contains(n, "/api/data") {
		t.Errorf("network without static: %s", n)
	}
	if n := netw(map[string]any{"static": true}); !strings.Contains(n, "/pic.png") {
		t.Errorf("network with static: %s", n)
	}
	if n := netw(map[string]any{"static": true, "filter": `/api/.*`}); strings.Contains(n, "/pic.png") || !strings.Contains(n, "/api/data") {
		t.Errorf("network filter /api/.*: %s", n)
	}
	s.refused("browser_network_requests", map[string]any{"filter": "("}, fsm.InvalidArgument)

	// fill_form as Playwright fills it; select_option by the option's text.
	s.ok("browser_fill_form", map[string]any{"fields": []any{
		map[string]any{"name": "Agree", "type": "checkbox", "target": "#agree", "value": "true"},
		map[string]any{"name": "Color", "type": "combobox", "target": "#color", "value": "Green"},
		map[string]any{"name": "Note", "type": "textbox", "target": "#note", "value": "hi"},
	}})
	if got := pageState(t, s, "[agree.checked, color.value, note.value].join()"); got != "true,g,hi" {
		t.Errorf("fill_form left %q", got)
	}
	s.ok("browser_select_option", map[string]any{"target": "#color", "values": []string{"Red"}})
	if got := pageState(t, s, "color.value"); got != "r" {
		t.Errorf("select_option by text left %q", got)
	}

	// file_upload paths (absolute, inside the upload directory), on the
	// page's one file input by default.
	s.ok("browser_file_upload", map[string]any{"paths": []string{filepath.Join(uploads, "doc.txt")}})
	if got := pageState(t, s, "file.files[0] && file.files[0].name"); got != "doc.txt" {
		t.Errorf("file_upload paths: the input holds %q", got)
	}
	s.refused("browser_file_upload", map[string]any{"paths": []string{"/etc/passwd"}}, fsm.UploadDenied)

	// handle_dialog with promptText.
	s.ok("browser_click", map[string]any{"target": "#ask"})
	s.ok("browser_handle_dialog", map[string]any{"accept": true, "promptText": "Ada"})
	if got := pageState(t, s, "window.answer"); got != "Ada" {
		t.Errorf("the prompt answered %q", got)
	}

	// wait_for time beside text: the time, then the text.
	if r := s.call("browser_wait_for", map[string]any{"time": 0.1, "text": "Go"}); r.isError || !regexp.MustCompile(`^waited 0.1s\ntext "Go" appeared`).MatchString(r.text) {
		t.Errorf("wait_for time and text: %q", r.text)
	}

	// tabs by index.
	s.ok("browser_tabs", map[string]any{"action": "new", "url": srv.URL + "/two"})
	s.ok("browser_tabs", map[string]any{"action": "select", "index": 0})
	if got := pageState(t, s, "document.title"); got != "pw" {
		t.Errorf("select index 0 made %q current", got)
	}
	s.ok("browser_tabs", map[string]any{"action": "close", "index": 1})
	tabs := s.ok("browser_tabs", map[string]any{"action": "list"})
	if n := len(tabs["tabs"].([]any)); n != 1 {
		t.Errorf("after close index 1: %d tabs", n)
	}
	if r := s.refused("browser_tabs", map[string]any{"action": "select", "index": 3}, fsm.InvalidArgument); !strings.Contains(r.Detail, "there are 1 tabs") {
		t.Errorf("index out of range: %q", r.Detail)
	}

	// console all: what came before the last navigation only with all.
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/two"})
	if c := console(nil); strings.Contains(c, "info msg") {
		t.Errorf("console after a navigation still shows the previous page's: %s", c)
	}
	if c := console(map[string]any{"all": true}); !strings.Contains(c, "info msg") {
		t.Errorf("console all lacks the previous page's: %s", c)
	}
}

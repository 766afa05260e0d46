package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// eval reads the page's own state back through browser_evaluate.
func eval(t *testing.T, s *server, args map[string]any, expr string) any {
	t.Helper()
	a := map[string]any{"expression": expr}
	for k, v := range args {
		a[k] = v
	}
	return s.ok("browser_evaluate", a)["value"]
}

// refusedNaming calls a tool that must be refused as invalid_argument with
// a detail that names arg, in one line.
func refusedNaming(t *testing.T, s *server, tool string, args map[string]any, arg string) {
	t.Helper()
	ref := s.refused(tool, args, fsm.InvalidArgument)
	if !strings.Contains(ref.Detail, arg) || strings.Contains(ref.Detail, "\n") {
		t.Fatalf("%s(%v): refusal %q does not name %s in one line", tool, args, ref.Detail, arg)
	}
}

// TestResizeAndEmulateMedia: through a real MCP client and Chromium,
// browser_resize sets the viewport the page measures (and the page sees a
// resize event); browser_emulate_media sets what matchMedia answers,
// keeps what is omitted and clears what is null. Bad input is refused
// naming the argument, and the page's state is unchanged after it.
func TestResizeAndEmulateMedia(t *testing.T) {
	t.Parallel() // its own server, Runner and browser
	needChromium(t)
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>media</title><p>hello</p>
<script>window.resizes = 0; addEventListener("resize", () => window.resizes++);
window.mq = q => matchMedia(q).matches;</script>`})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	none := map[string]any{}

	r := s.call("browser_resize", map[string]any{"width": 640, "height": 480})
	if r.isError || !strings.Contains(r.text, "640x480") {
		t.Fatalf("resize: %s", r.text)
	}
	if got := eval(t, s, none, "innerWidth + 'x' + innerHeight"); got != "640x480" {
		t.Fatalf("the page measures %v after resizing to 640x480", got)
	}
	if got := eval(t, s, none, "window.resizes > 0"); got != true {
		t.Fatal("the page saw no resize event")
	}
	refusedNaming(t, s, "browser_resize", map[string]any{"width": 0, "height": 300}, "width")
	refusedNaming(t, s, "browser_resize", map[string]any{"width": 300.5, "height": 300}, "width")
	refusedNaming(t, s, "browser_resize", map[string]any{"width": 300}, "height")
	refusedNaming(t, s, "browser_resize", map[string]any{"width": 300, "height": "tall"}, "height")
	if got := eval(t, s, none, "innerWidth + 'x' + innerHeight"); got != "640x480" {
		t.Fatalf("a refused resize changed the viewport to %v", got)
	}

	media := func() string {
		t.Helper()
		v := eval(t, s, none, `[mq("(prefers-color-scheme: dark)"), mq("(prefers-reduced-motion: reduce)"),
			mq("(forced-colors: active)"), mq("(prefers-contrast: more)"), mq("print")].map(Number).join("")`)
		return fmt.Sprint(v)
	}
	if got := media(); got != "00000" {
		t.Fatalf("before any override: %s", got)
	}
	s.ok("browser_emulate_media", map[string]any{"colorScheme": "dark"})
	if got := media(); got != "10000" {
		t.Fatalf("after colorScheme dark: %s, want 10000", got)
	}
	s.ok("browser_emulate_media", map[string]any{"reducedMotion": "reduce", "contrast": "more", "media": "print"})
	if got := media(); got != "11011" {
		t.Fatalf("after reducedMotion, contrast, media (colorScheme omitted: kept): %s, want 11011", got)
	}
	s.ok("browser_emulate_media", map[string]any{"forcedColors": "active"})
	if got := media(); got != "11111" {
		t.Fatalf("after forcedColors active: %s, want 11111", got)
	}
	r = s.call("browser_emulate_media", map[string]any{"colorScheme": nil, "media": nil, "forcedColors": "none"})
	if r.isError || strings.Contains(r.text, "prefers-color-scheme") {
		t.Fatalf("clearing: %s", r.text)
	}
	if got := media(); got != "01010" {
		t.Fatalf("after colorScheme and media null, forcedColors none: %s, want 01010", got)
	}
	refusedNaming(t, s, "browser_emulate_media", map[string]any{"colorScheme": "purple"}, "colorScheme")
	refusedNaming(t, s, "browser_emulate_media", map[string]any{"contrast": "less", "colorScheme": "dark"}, "contrast")
	s.refused("browser_emulate_media", map[string]any{}, fsm.InvalidArgument)
	refusedNaming(t, s, "browser_emulate_media", map[string]any{"colour": "dark"}, "colour")
	if got := media(); got != "01010" {
		t.Fatalf("a refused call changed the media to %s", got)
	}
}

// pointerPage records every pointer event the page receives, in order.
const pointerPage = `<!doctype html><title>pointer</title>
<style>body{margin:0;height:4000px}</style><p>pad</p>
<script>window.ev = [];
for (const type of ["mousemove", "mousedown", "mouseup", "click", "dblclick", "contextmenu", "auxclick", "wheel"])
  addEventListener(type, e => window.ev.push({type, x: e.clientX, y: e.clientY, button: e.button, buttons: e.buttons,
    detail: e.detail, dy: e.deltaY || 0, t: e.timeStamp}), true);
addEventListener("contextmenu", e => e.preventDefault());</script>`

type pointerEvent struct {
	Type    string  `json:"type"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Button  int     `json:"button"`
	Buttons int     `json:"buttons"`
	Detail  int     `json:"detail"`
	DY      float64 `json:"dy"`
	T       float64 `json:"t"`
}

// events reads the page's event log from index from.
func events(t *testing.T, s *server, args map[string]any, from int) []pointerEvent {
	t.Helper()
	v := eval(t, s, args, fmt.Sprintf("JSON.stringify(window.ev.slice(%d))", from))
	var out []pointerEvent
	if err := json.Unmarshal([]byte(fmt.Sprint(v)), &out); err != nil {
		t.Fatalf("event log %v: %v", v, err)
	}
	return out
}

// kinds is the events' types in order, runs of mousemove as one.
func kinds(evs []pointerEvent) string {
	var ks []string
	for _, e := range evs {
		if e.Type != "mousemove" || len(ks) == 0 || ks[len(ks)-1] != "mousemove" {
			ks = append(ks, e.Type)
		}
	}
	return strings.Join(ks, " ")
}

// clicks is kinds without a leading move: a click needs none (a press at a
// new point fires the boundary events itself).
func clicks(evs []pointerEvent) string { return strings.TrimPrefix(kinds(evs), "mousemove ") }

// TestVisionTools: the vision tools move, click (button, clickCount,
// delay), drag, press, release and wheel at the points given, as the page
// itself records them; bad input is refused naming the argument and sends
// nothing.
func TestVisionTools(t *testing.T) {
	t.Parallel() // its own server, Runner and browser
	needChromium(t)
	srv := fixture(t, map[string]string{"/": pointerPage})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	none := map[string]any{}
	n := 0
	next := func() []pointerEvent {
		t.Helper()
		evs := events(t, s, none, n)
		n += len(evs)
		return evs
	}

	s.ok("browser_mouse_move_xy", map[string]any{"x": 100, "y": 120})
	evs := next()
	if kinds(evs) != "mousemove" || evs[len(evs)-1].X != 100 {
		t.Fatalf("move: %+v", evs)
	}
	s.ok("browser_mouse_click_xy", map[string]any{"x": 110, "y": 130})
	if evs = next(); clicks(evs) != "mousedown mouseup click" || evs[len(evs)-1].X != 110 || evs[len(evs)-1].Y != 130 || evs[len(evs)-1].Button != 0 {
		t.Fatalf("click: %s %+v", kinds(evs), evs)
	}
	s.ok("browser_mouse_click_xy", map[string]any{"x": 110, "y": 130, "clickCount": 2})
	if evs = next(); clicks(evs) != "mousedown mouseup click mousedown mouseup click dblclick" {
		t.Fatalf("double click: %s", kinds(evs))
	}
	s.ok("browser_mouse_click_xy", map[string]any{"x": 60, "y": 70, "button": "right"})
	evs = next()
	if c := clicks(evs); c != "mousedown mouseup contextmenu" && c != "mousedown contextmenu mouseup" && c != "mousedown mouseup auxclick contextmenu" && c != "mousedown contextmenu mouseup auxclick" {
		t.Fatalf("right click: %s", c)
	}
	for _, e := range evs {
		if e.Type == "mousedown" && e.Button != 2 {
			t.Fatalf("right click pressed button %d", e.Button)
		}
	}
	s.ok("browser_mouse_click_xy", map[string]any{"x": 60, "y": 70, "delay": 120})
	var down, up float64
	for _, e := range next() {
		switch e.Type {
		case "mousedown":
			down = e.T
		case "mouseup":
			up = e.T
		}
	}
	if up-down < 100 { // the page's own clock: the release came after the delay
		t.Fatalf("delay 120 ms: the page saw the release %.0f ms after the press", up-down)
	}

	s.ok("browser_mouse_drag_xy", map[string]any{"startX": 20, "startY": 30, "endX": 200, "endY": 150})
	evs = next()
	if k := kinds(evs); k != "mousemove mousedown mousemove mouseup click" && k != "mousemove mousedown mousemove mouseup" {
		t.Fatalf("drag: %s", k)
	}
	pressed := false
	for _, e := range evs {
		switch e.Type {
		case "mousedown":
			pressed = true
			if e.X != 20 || e.Y != 30 {
				t.Fatalf("drag pressed at %v,%v", e.X, e.Y)
			}
		case "mousemove":
			if pressed && (e.Buttons != 1 || e.X != 200 || e.Y != 150) {
				t.Fatalf("drag moved to %v,%v with buttons %d, want 200,150 with the left held", e.X, e.Y, e.Buttons)
			}
		case "mouseup":
			if e.X != 200 || e.Y != 150 {
				t.Fatalf("drag released at %v,%v", e.X, e.Y)
			}
		}
	}

	s.ok("browser_mouse_move_xy", map[string]any{"x": 300, "y": 40})
	next()
	s.ok("browser_mouse_down", map[string]any{})
	evs = next()
	if kinds(evs) != "mousedown" || evs[0].X != 300 || evs[0].Y != 40 || evs[0].Buttons != 1 {
		t.Fatalf("down: %+v", evs)
	}
	s.ok("browser_mouse_move_xy", map[string]any{"x": 320, "y": 60})
	if evs = next(); len(evs) == 0 || evs[len(evs)-1].Buttons != 1 {
		t.Fatalf("a move while pressed: %+v", evs)
	}
	s.ok("browser_mouse_up", map[string]any{"button": "left"})
	if evs = next(); !strings.HasPrefix(kinds(evs), "mouseup") || evs[0].X != 320 {
		t.Fatalf("up: %+v", evs)
	}
	s.ok("browser_mouse_down", map[string]any{"button": "middle"})
	s.ok("browser_mouse_up", map[string]any{"button": "middle"})
	for _, e := range next() {
		if (e.Type == "mousedown" || e.Type == "mouseup") && e.Button != 1 {
			t.Fatalf("middle pressed button %d", e.Button)
		}
	}

	s.ok("browser_mouse_wheel", map[string]any{"deltaX": 0, "deltaY": 300})
	if evs = next(); kinds(evs) != "wheel" || evs[0].DY != 300 || evs[0].X != 320 {
		t.Fatalf("wheel: %+v", evs)
	}
	waitfor.Until(t, 10*time.Second, "the wheel scrolls the page", func() bool { return eval(t, s, none, "scrollY > 0") == true })

	before := n
	refusedNaming(t, s, "browser_mouse_click_xy", map[string]any{"y": 10}, "x")
	refusedNaming(t, s, "browser_mouse_click_xy", map[string]any{"x": 10, "y": 10, "button": "side"}, "button")
	refusedNaming(t, s, "browser_mouse_click_xy", map[string]any{"x": 10, "y": 10, "clickCount": 9}, "clickCount")
	refusedNaming(t, s, "browser_mouse_click_xy", map[string]any{"x": 10, "y": 10, "clickCount": 1.5}, "clickCount")
	refusedNaming(t, s, "browser_mouse_click_xy", map[string]any{"x": 10, "y": 10, "delay": -1}, "delay")
	refusedNaming(t, s, "browser_mouse_move_xy", map[string]any{"x": 1e9, "y": 10}, "x")
	refusedNaming(t, s, "browser_mouse_drag_xy", map[string]any{"startX": 1, "startY": 1, "endX": 5}, "endY")
	refusedNaming(t, s, "browser_mouse_wheel", map[string]any{"deltaY": 5}, "deltaX")
	refusedNaming(t, s, "browser_mouse_down", map[string]any{"button": 1}, "button")
	if evs := events(t, s, none, before); len(evs) != 0 {
		t.Fatalf("a refused call sent input: %+v", evs)
	}
}

// deniedFrame calls a tool whose point is over a denied frame of the
// person's browser: refused as the origin gate words a denied document
// there (not_found: indistinguishable from none), or origin_denied when
// the frame's origin could not be established.
func deniedFrame(t *testing.T, s *server, tool string, args map[string]any) {
	t.Helper()
	r := s.call(tool, args)
	if ref := r.refusal(); !r.isError || ref == nil || (ref.Code != fsm.NotFound && ref.Code != fsm.OriginDenied) {
		t.Fatalf("%s(%v) over a denied frame = %s, want it refused", tool, args, r.text)
	}
}

// frameEventServer serves a page that reports every pointer event it
// receives to its own server: an event delivered into the frame is seen
// even when the agent is told nothing.
type frameEventServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func newFrameEventServer(t *testing.T) *frameEventServer {
	f := &frameEventServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ev" {
			f.mu.Lock()
			f.got = append(f.got, r.URL.Query().Get("t"))
			f.mu.Unlock()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><body style="margin:0;height:3000px;background:#ff00ff"><script>
for (const t of ["mousemove", "mousedown", "mouseup", "click", "wheel", "contextmenu", "dragenter", "dragover", "drop"])
  addEventListener(t, () => fetch("/ev?t=" + t), true);
fetch("/ev?t=loaded");</script>`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *frameEventServer) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// TestVisionToolsRefuseDeniedFrames: the person's tab on the allowed
// origin (127.0.0.1:A) embeds a denied same-site frame (127.0.0.1:B) and a
// denied cross-site one (localhost:C). Every vision tool whose point is
// over either frame is refused (as the gate words a denied document) — a move, a click, a drag
// that starts or ends there, and a press, release or wheel after the page
// moved a frame under the pointer — and the frames' own event logs stay
// empty; the allowed page saw nothing of a refused call. A click on the
// allowed page itself goes through (the control).
func TestVisionToolsRefuseDeniedFrames(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	u := startUsersChrome(t)
	same, cross := newFrameEventServer(t), newFrameEventServer(t)
	crossURL := strings.Replace(cross.srv.URL, "127.0.0.1", "localhost", 1)
	a := fixture(t, map[string]string{"/": fmt.Sprintf(`<!doctype html><title>allowed tab</title>
<style>body{margin:0} iframe{position:absolute;border:0;width:200px;height:100px}</style>
<iframe id="same" src="%s/" style="left:0;top:200px" onload="window.sameLoaded=true"></iframe>
<iframe id="cross" src="%s/" style="left:300px;top:200px" onload="window.crossLoaded=true"></iframe>
<script>window.ev = [];
for (const type of ["mousemove", "mousedown", "mouseup", "click", "wheel"])
  addEventListener(type, e => window.ev.push(type + "@" + e.clientX + "," + e.clientY), true);
window.cover = () => { const f = document.getElementById("same"); f.style.left = "500px"; f.style.top = "0px"; };</script>`,
		same.srv.URL, crossURL)})
	u.openTab(t, a.URL+"/")
	var asked atomic.Int32
	var summary atomic.Value
	s := attachServer(t, u, strings.TrimPrefix(a.URL, "http://"), allowAnswer(&asked, &summary), "--allow-evaluate")
	s.ok("browser_attach", map[string]any{"candidate": "chromium"})
	page := ""
	for _, tab := range s.ok("browser_tabs", map[string]any{"action": "list"})["tabs"].([]any) {
		if tm := tab.(map[string]any); tm["url"] == a.URL+"/" {
			page = tm["page"].(string)
		}
	}
	if page == "" {
		t.Fatal("the allowed tab is not listed")
	}
	on := map[string]any{"page": page}
	with := func(args map[string]any) map[string]any {
		args["page"] = page
		return args
	}
	waitfor.Until(t, 15*time.Second, "the frames load", func() bool {
		return eval(t, s, on, "window.sameLoaded === true && window.crossLoaded === true") == true && len(same.events()) > 0 && len(cross.events()) > 0
	})
	allowedLog := func() string {
		return fmt.Sprint(eval(t, s, on, "window.ev.join(' ')"))
	}

	// The control: a point on the allowed page is clicked.
	s.ok("browser_mouse_click_xy", with(map[string]any{"x": 250, "y": 50}))
	if log := allowedLog(); !strings.Contains(log, "click@250,50") {
		t.Fatalf("the allowed page did not see the click: %s", log)
	}
	base := allowedLog()
	overSame, overCross := map[string]any{"x": 100, "y": 250}, map[string]any{"x": 400, "y": 250}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_mouse_move_xy", overSame},
		{"browser_mouse_move_xy", overCross},
		{"browser_mouse_click_xy", overSame},
		{"browser_mouse_click_xy", map[string]any{"x": 400, "y": 250, "button": "right", "clickCount": 2}},
		{"browser_mouse_drag_xy", map[string]any{"startX": 250, "startY": 50, "endX": 100, "endY": 250}},
		{"browser_mouse_drag_xy", map[string]any{"startX": 400, "startY": 250, "endX": 250, "endY": 50}},
	} {
		args := map[string]any{}
		for k, v := range c.args {
			args[k] = v
		}
		deniedFrame(t, s, c.tool, with(args))
	}
	// The pointer rests on the allowed page; then the page moves the
	// same-site frame under it: what acts where the pointer is is judged
	// again, on the page as it is now.
	s.ok("browser_mouse_move_xy", with(map[string]any{"x": 550, "y": 50}))
	base = allowedLog()
	eval(t, s, on, "window.cover(), true")
	deniedFrame(t, s, "browser_mouse_down", with(map[string]any{}))
	deniedFrame(t, s, "browser_mouse_up", with(map[string]any{}))
	deniedFrame(t, s, "browser_mouse_wheel", with(map[string]any{"deltaX": 0, "deltaY": 200}))
	if log := allowedLog(); log != base {
		t.Fatalf("a refused call reached the allowed page: %q after %q", log, base)
	}
	// Each frame reported its load (its reports reach its server), and
	// nothing else.
	for _, f := range []*frameEventServer{same, cross} {
		if evs := f.events(); len(evs) != 1 || evs[0] != "loaded" {
			t.Fatalf("a denied frame's event log is %q, want only its load: pointer events were delivered into it", evs)
		}
	}
}

// TestFind: browser_find finds text (any case) and a regex (with flags in
// slashes) in a fresh snapshot, shows each match under its path from the
// root with its ref, and that ref acts on the element (the page counts the
// click); bad input is refused naming the argument.
func TestFind(t *testing.T) {
	t.Parallel() // its own server, Runner and browser
	needChromium(t)
	var rows strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&rows, `<li>Row %d <button onclick="window.hit = %d">Delete %d</button></li>`, i, i, i)
	}
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>find</title><main><h1>Orders</h1><nav><a href="#">Help</a></nav>
<ul aria-label="orders">` + rows.String() + `</ul></main>`})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})

	r := s.call("browser_find", map[string]any{"text": "DELETE 17"})
	if r.isError || !strings.HasPrefix(r.text, "1 match(es)") {
		t.Fatalf("find text: %s", r.text)
	}
	if !strings.Contains(r.text, `list "orders"`) || !strings.Contains(r.text, "main") {
		t.Fatalf("the match is not under its path from the root:\n%s", r.text)
	}
	m := regexp.MustCompile(`button "Delete 17" \[(e[0-9]+)\]  <- match`).FindStringSubmatch(r.text)
	if m == nil {
		t.Fatalf("no ref on the match:\n%s", r.text)
	}
	s.ok("browser_click", map[string]any{"ref": m[1]})
	if got := eval(t, s, map[string]any{}, "window.hit"); got != float64(17) {
		t.Fatalf("clicking the found ref hit %v, want 17", got)
	}
	if r := s.call("browser_find", map[string]any{"regex": `/delete 2[0-9]"/i`}); r.isError || !strings.HasPrefix(r.text, "10 match(es)") {
		t.Fatalf("find regex: %s", r.text)
	}
	if r := s.call("browser_find", map[string]any{"regex": `delete 2[0-9]"`}); r.isError || !strings.HasPrefix(r.text, "0 match(es)") {
		t.Fatalf("a regex is case-sensitive without /i: %s", r.text)
	}
	if r := s.call("browser_find", map[string]any{"text": "Delete"}); r.isError || !strings.Contains(r.text, "30 match(es) for \"Delete\", the first 20 shown") {
		t.Fatalf("matches over the bound: %.200s", r.text)
	}
	refusedNaming(t, s, "browser_find", map[string]any{"text": "a", "regex": "b"}, "regex")
	refusedNaming(t, s, "browser_find", map[string]any{"regex": "(unclosed"}, "regex")
	refusedNaming(t, s, "browser_find", map[string]any{"regex": "/x/g"}, "regex")
	refusedNaming(t, s, "browser_find", map[string]any{}, "text")
}

// TestPDFSave: browser_pdf_save prints the page (the page itself sees
// beforeprint) into a PDF file in the session's output directory, under
// the name given or page-TIME.pdf; a filename with a directory, .., an
// absolute path or a link in the output directory is refused before
// anything is printed. Under an allowlist, a page that holds a frame of a
// denied origin — shown, or hidden with display:none — is refused
// (origin_denied) and nothing is written; the same site's page without one
// prints. browser_close then closes the browser, as Playwright's closes
// its page, and the next navigate launches a new one.
func TestPDFSave(t *testing.T) {
	t.Parallel() // its own server, Runner and browser
	needChromium(t)
	other := fixture(t, map[string]string{"/": `<!doctype html><p>DENIED-FRAME</p>`})
	srv := fixture(t, map[string]string{
		"/plain":  `<!doctype html><title>plain</title><p>to print</p><script>window.printed = 0; addEventListener("beforeprint", () => window.printed++);</script>`,
		"/framed": `<!doctype html><title>framed</title><p>a page with a partner</p><iframe src="` + other.URL + `/"></iframe><script>window.printed = 0; addEventListener("beforeprint", () => window.printed++);</script>`,
		"/hidden": `<!doctype html><title>hidden</title><p>print me</p><iframe style="display:none" src="` + localhostURL(other) + `/"></iframe><script>window.printed = 0; addEventListener("beforeprint", () => window.printed++);</script>`,
	})
	s := startServer(t, serverOpts{args: []string{"--allow", strings.TrimPrefix(srv.URL, "http://")}})
	none := map[string]any{}
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/plain"})
	r := s.ok("browser_pdf_save", map[string]any{"filename": "plain.pdf"})
	path := str(r, "savedTo")
	dir := filepath.Dir(path)
	if filepath.Base(path) != "plain.pdf" || !strings.HasPrefix(dir, filepath.Join(s.state, "output")) {
		t.Fatalf("saved to %q, want plain.pdf in the session's output directory under %s", path, s.state)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-")) || len(data) < 500 {
		t.Fatalf("the file is not a PDF (%d bytes, %v): %.20q", len(data), err, data)
	}
	if got := eval(t, s, none, "window.printed"); got != float64(1) {
		t.Fatalf("the page saw %v beforeprint events, want 1", got)
	}
	r = s.ok("browser_pdf_save", none)
	if m, _ := filepath.Match("page-*.pdf", filepath.Base(str(r, "savedTo"))); !m || filepath.Dir(str(r, "savedTo")) != dir {
		t.Fatalf("the default name: %q", str(r, "savedTo"))
	}

	outside := filepath.Join(t.TempDir(), "outside.pdf")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../up.pdf", outside, "sub/x.pdf", ".."} {
		refusedNaming(t, s, "browser_pdf_save", map[string]any{"filename": name}, "filename")
	}
	refusedNaming(t, s, "browser_pdf_save", map[string]any{"filename": "link.pdf"}, "link")
	if got, _ := os.ReadFile(outside); string(got) != "keep" {
		t.Fatalf("a refused save wrote through the link: %q", got)
	}
	if got := eval(t, s, none, "window.printed"); got != float64(2) {
		t.Fatalf("a refused name still printed (beforeprint count %v, want 2)", got)
	}

	for _, p := range []string{"/framed", "/hidden"} {
		s.ok("browser_navigate", map[string]any{"url": srv.URL + p})
		s.ok("browser_wait_for", map[string]any{"condition": "load"})
		s.refused("browser_pdf_save", map[string]any{"filename": "framed.pdf"}, fsm.OriginDenied)
		if got := eval(t, s, none, "window.printed"); got != float64(0) {
			t.Fatalf("%s: the refused page was printed", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "framed.pdf")); !os.IsNotExist(err) {
		t.Fatalf("a refused PDF was written: %v", err)
	}

	s.ok("browser_close", none)
	if st := s.ok("browser_status", none); len(st["browsers"].([]any)) != 0 {
		t.Fatalf("browser_close {} left browsers: %v", st["browsers"])
	}
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/plain"})
}

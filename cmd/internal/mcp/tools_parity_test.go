package mcp

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// dragPage records the drag events its elements receive: #a is draggable
// (it puts "hello" on the drag), #b takes a drop.
const dragPage = `<!doctype html><title>drag</title><style>div{position:absolute;width:80px;height:80px}</style>
<div id=a role=button tabindex=0 draggable=true style="left:10px;top:10px">Apple</div><div id=b role=button tabindex=0 style="left:200px;top:10px">Basket</div>
<script>window.ev = [];
for (const t of ["mousedown", "mouseup", "dragstart", "drop", "dragend"])
  addEventListener(t, e => ev.push(t + ":" + (e.target.id || e.target.nodeName) + (e.isTrusted ? "" : "(untrusted)")), true);
a.addEventListener("dragstart", e => e.dataTransfer.setData("text/plain", "hello"));
b.addEventListener("dragover", e => e.preventDefault());
b.addEventListener("drop", e => { e.preventDefault(); ev.push("data:" + e.dataTransfer.getData("text/plain")); });</script>`

// TestDragTool: browser_drag takes Playwright's startTarget and endTarget,
// as selectors or refs of the latest snapshot, and the page sees
// Chromium's own trusted drag (dragstart, drop with the page's data,
// dragend); the result says the page took the drop. Bad input is refused
// naming the argument, and the page saw nothing of it.
func TestDragTool(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := fixture(t, map[string]string{"/": dragPage})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	none := map[string]any{}
	events := func() string { return fmt.Sprint(eval(t, s, none, "ev.splice(0).join(' ')")) }

	r := s.call("browser_drag", map[string]any{"startElement": "apple", "startTarget": "#a", "endElement": "basket", "endTarget": "#b"})
	if r.isError || !strings.Contains(r.text, "took the drop") {
		t.Fatalf("drag: %s", r.text)
	}
	if got, want := events(), "mousedown:a dragstart:a drop:b data:hello dragend:a"; got != want {
		t.Fatalf("the page saw %q, want %q", got, want)
	}
	snap := s.call("browser_snapshot", nil).text
	ref := func(name string) string {
		m := regexpRef(name).FindStringSubmatch(snap)
		if m == nil {
			t.Fatalf("no ref for %q in %s", name, snap)
		}
		return m[1]
	}
	s.ok("browser_drag", map[string]any{"startTarget": ref("Apple"), "endTarget": ref("Basket")})
	if got, want := events(), "mousedown:a dragstart:a drop:b data:hello dragend:a"; got != want {
		t.Fatalf("by refs: the page saw %q, want %q", got, want)
	}
	refusedNaming(t, s, "browser_drag", map[string]any{"startTarget": "#a"}, "endTarget")
	refusedNaming(t, s, "browser_drag", map[string]any{"endTarget": "#b"}, "startTarget")
	refusedNaming(t, s, "browser_drag", map[string]any{"startTarget": "#a", "endTarget": 5}, "endTarget")
	refusedNaming(t, s, "browser_drag", map[string]any{"startTarget": "#a", "endTarget": "#b", "steps": 3}, "steps")
	if r := s.refused("browser_drag", map[string]any{"startTarget": "#a", "endTarget": "#nothing"}, fsm.ElementNotFound); !strings.Contains(r.Detail, "0 elements match") {
		t.Errorf("a missing end: %q", r.Detail)
	}
	if got := events(); got != "" {
		t.Fatalf("refused drags reached the page: %q", got)
	}
}

// TestDragRefusesDeniedFrames: in the person's tab on the allowed origin,
// a drag that starts or ends over a denied same-site frame (127.0.0.1:B)
// or a denied cross-site one (localhost:C) is refused before the button
// is pressed: the allowed page sees no mouse event, and the frames'
// own logs show nothing but their load. A drag between two allowed
// elements goes through (the control).
func TestDragRefusesDeniedFrames(t *testing.T) {
	t.Parallel()
	u := startUsersChrome(t)
	same, cross := newFrameEventServer(t), newFrameEventServer(t)
	crossURL := strings.Replace(cross.srv.URL, "127.0.0.1", "localhost", 1)
	a := fixture(t, map[string]string{"/": fmt.Sprintf(`<!doctype html><title>allowed tab</title>
<style>body{margin:0} iframe{position:absolute;border:0;width:200px;height:100px}</style>
<iframe id="same" src="%s/" style="left:0;top:200px" onload="window.sameLoaded=true"></iframe>
<iframe id="cross" src="%s/" style="left:300px;top:200px" onload="window.crossLoaded=true"></iframe>`, same.srv.URL, crossURL) +
		strings.TrimPrefix(dragPage, "<!doctype html><title>drag</title>")})
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
	waitfor.Until(t, 15*time.Second, "the frames load", func() bool {
		return eval(t, s, on, "window.sameLoaded === true && window.crossLoaded === true") == true && len(same.events()) > 0 && len(cross.events()) > 0
	})
	events := func() string { return fmt.Sprint(eval(t, s, on, "ev.splice(0).join(' ')")) }
	for _, c := range [][2]string{{"#a", "#same"}, {"#a", "#cross"}, {"#same", "#b"}, {"#cross", "#b"}} {
		deniedFrame(t, s, "browser_drag", map[string]any{"page": page, "startTarget": c[0], "endTarget": c[1]})
		if got := events(); got != "" {
			t.Fatalf("a refused drag %s→%s reached the allowed page: %q", c[0], c[1], got)
		}
	}
	s.ok("browser_drag", map[string]any{"page": page, "startTarget": "#a", "endTarget": "#b"})
	if got, want := events(), "mousedown:a dragstart:a drop:b data:hello dragend:a"; got != want {
		t.Fatalf("the control drag: the page saw %q, want %q", got, want)
	}
	for _, f := range []*frameEventServer{same, cross} {
		if evs := f.events(); len(evs) != 1 || evs[0] != "loaded" {
			t.Fatalf("a denied frame's event log is %q, want only its load", evs)
		}
	}
}

// regexpRef finds the ref of an outline line naming name.
func regexpRef(name string) *regexp.Regexp {
	return regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `"[^\n]*\[(e[0-9]+)\]`)
}

// TestNetworkRequestTool: browser_network_request takes Playwright's index
// (the seq browser_network_requests lists) and part, and answers the
// request's headers and bodies as the page sent and the server answered
// them; an unknown index is not found, bad input is refused naming the
// argument.
func TestNetworkRequestTool(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := fixture(t, map[string]string{
		"/":    `<!doctype html><title>net</title><script>window.done = fetch("/api", {method: "POST", body: "q=1", headers: {"X-Test": "yes"}}).then(r => r.text());</script>`,
		"/api": `{"answer":42}`,
	})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	eval(t, s, map[string]any{}, "window.done")
	var seq float64
	waitfor.Until(t, 10*time.Second, "the /api request is listed", func() bool {
		log := s.ok("browser_network_requests", nil)["log"].(map[string]any)
		for _, e := range log["entries"].([]any) {
			if em := e.(map[string]any); strings.HasSuffix(fmt.Sprint(em["url"]), "/api") && em["status"] != nil {
				seq = em["seq"].(float64)
			}
		}
		return seq != 0
	})
	r := s.call("browser_network_request", map[string]any{"index": seq})
	for _, want := range []string{"POST " + srv.URL + "/api => 200", "X-Test: yes", "request body:\nq=1", `response body:` + "\n" + `{"answer":42}`} {
		if r.isError || !strings.Contains(r.text, want) {
			t.Fatalf("browser_network_request lacks %q:\n%s", want, r.text)
		}
	}
	r = s.call("browser_network_request", map[string]any{"index": seq, "part": "request-body"})
	if r.isError || !strings.Contains(r.text, "q=1") || strings.Contains(r.text, "answer") {
		t.Fatalf("part request-body:\n%s", r.text)
	}
	s.refused("browser_network_request", map[string]any{"index": 999999}, fsm.NotFound)
	refusedNaming(t, s, "browser_network_request", map[string]any{"index": seq, "part": "cookies"}, "part")
	refusedNaming(t, s, "browser_network_request", map[string]any{}, "index")
	refusedNaming(t, s, "browser_network_request", map[string]any{"index": 1.5}, "index")
}

package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// personTab is one tab of the person's browser as the person's own
// connection sees it.
type personTab struct {
	id         target.ID
	url, title string
	window     browser.WindowID
}

// personTabs lists the page targets of the person's browser with the window
// each is in, over a connection of the person's own.
func personTabs(t *testing.T, u *usersChrome) []personTab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, err := cdp.DialWebSocket(ctx, u.proc.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	res, err := cdproto.Call(ctx, c.Browser(), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var out []personTab
	for _, ti := range res.TargetInfos {
		if ti.Type != "page" {
			continue
		}
		w, err := cdproto.Call(ctx, c.Browser(), browser.GetWindowForTarget, browser.GetWindowForTargetParams{TargetID: ti.TargetID})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, personTab{id: ti.TargetID, url: ti.URL, title: ti.Title, window: w.WindowID})
	}
	return out
}

// TestDetachClosesOnlyTheAgentsTabs: over a real attached Chromium, detach
// closes the tabs webcodex opened, keeps the one handed over (and marks it
// with a notice tab, the handed-over page untouched), and never closes,
// moves or changes the person's own tabs.
func TestDetachClosesOnlyTheAgentsTabs(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	srv := fixtureServer(t, new(atomic.Int32))
	// A page of the agent's that opens tabs: one on an allowed origin, one
	// on an origin the agent may not see (the same server named otherwise).
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	opener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>opener</title><a href="%s/effect?popup" target="_blank">Allowed popup</a> <a href="%s/effect?hidden" target="_blank">Hidden popup</a>`, srv.URL, other)
	}))
	defer opener.Close()
	u.openTab(t, srv.URL+"/")
	ctx := context.Background()
	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL, opener.URL}})
	b := res.Browser.ID
	mine := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	before := personTabs(t, u)

	scratch, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b, URL: srv.URL + "/effect?scratch"})
	if err != nil {
		t.Fatal(err)
	}
	given, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b, URL: srv.URL + "/effect?given"})
	if err != nil {
		t.Fatal(err)
	}
	popper, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b, URL: opener.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Allowed popup", "Hidden popup"} {
		if _, err := runAct(ctx, h.r, op.Click, clickOn(popper.ID, localapi.Target{Role: "link", Name: name})); err != nil {
			t.Fatalf("click %s: %v", name, err)
		}
	}
	waitfor.Until(t, 10*time.Second, "both popups are open", func() bool {
		n := 0
		for _, pt := range personTabs(t, u) {
			if strings.HasSuffix(pt.url, "?popup") || strings.HasSuffix(pt.url, "?hidden") {
				n++
			}
		}
		return n == 2
	})
	if _, err := h.r.Activate(ctx, localapi.PageRequest{Page: mine}); !fsm.IsCode(err, fsm.WrongTargetRefused) {
		t.Fatalf("activating the person's tab = %v, want %s", err, fsm.WrongTargetRefused)
	}
	if pi, err := h.r.Activate(ctx, localapi.PageRequest{Page: scratch.ID}); err != nil || pi.ID != scratch.ID {
		t.Fatalf("activating the agent's tab = %+v, %v", pi, err)
	}
	if _, err := h.r.Handover(ctx, localapi.HandoverRequest{Browser: b, Page: mine}); !fsm.IsCode(err, fsm.WrongTargetRefused) {
		t.Fatalf("handing over the person's own tab = %v, want %s", err, fsm.WrongTargetRefused)
	}
	ho, err := h.r.Handover(ctx, localapi.HandoverRequest{Browser: b, Page: given.ID})
	if err != nil || !slices.Equal(ho.Pages, []string{given.ID}) {
		t.Fatalf("handover = %+v, %v", ho, err)
	}
	if _, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: b}); err != nil {
		t.Fatal(err)
	}

	// The notice's title is the browser's once its static page has loaded.
	var after []personTab
	waitfor.Until(t, 10*time.Second, "the handover notice is titled", func() bool {
		after = personTabs(t, u)
		for _, pt := range after {
			if strings.HasPrefix(pt.url, "data:text/html") && pt.title == "webcodex handed over 1 tab" {
				return true
			}
		}
		return false
	})
	byURL := map[string]personTab{}
	for _, pt := range after {
		byURL[pt.url] = pt
	}
	for _, pt := range before {
		got, ok := byURL[pt.url]
		if !ok || got.id != pt.id || got.window != pt.window || got.title != pt.title {
			t.Fatalf("the person's tab %s changed at detach: %+v, want %+v", pt.url, got, pt)
		}
	}
	for _, gone := range []string{srv.URL + "/effect?scratch", opener.URL + "/", srv.URL + "/effect?popup", other + "/effect?hidden"} {
		if _, ok := byURL[gone]; ok {
			t.Fatalf("the agent's tab %s outlived detach: %+v", gone, after)
		}
	}
	kept, ok := byURL[srv.URL+"/effect?given"]
	if !ok || kept.title != "effect" {
		t.Fatalf("the handed-over tab = %+v (ok %v), want it open and its title untouched", kept, ok)
	}
	if len(after) != len(before)+2 {
		t.Fatalf("tabs after detach = %d, want the person's %d, the handed-over one and the notice", len(after), len(before))
	}
	if scratch.ID == given.ID {
		t.Fatal("two opens gave one page")
	}
}

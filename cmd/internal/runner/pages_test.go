package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestNewTabsAreFollowed: a link that opens a new tab gives the agent a new
// page id; closing it retires the id.
func TestNewTabsAreFollowed(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>home</title><a href="/other" target="_blank">Open other</a>`)
	})
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>other</title><p>the new tab</p>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runAct(ctx, h.r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: "Open other"})); err != nil {
		t.Fatal(err)
	}
	var other string
	waitfor.Until(t, 10*time.Second, "the new tab is listed", func() bool {
		pages, _ := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.ID})
		for _, pg := range pages {
			if pg.URL == srv.URL+"/other" {
				other = pg.ID
				return true
			}
		}
		return false
	})
	rd, err := runOp(ctx, h.r, op.ReadText, readIn(other))
	if err != nil || rd.Text != "the new tab" {
		t.Fatalf("read of the new tab = %+v, %v", rd, err)
	}
	if _, err := h.r.ClosePage(ctx, localapi.ClosePageRequest{Page: other}); err != nil {
		t.Fatal(err)
	}
	if _, err := runOp(ctx, h.r, op.ReadText, readIn(other)); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("read of a closed page = %v, want %s", err, fsm.BindingStale)
	}
}

// TestOwnedAllowlist: an owned browser with --allow refuses a navigation
// elsewhere without naming the list, and a page that navigated off the list
// by script is unreadable and unlisted.
func TestOwnedAllowlist(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>ok</title><p>allowed page</p>`)
	}))
	defer allowed.Close()
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{allowed.URL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: allowed.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: "http://localhost:1/x"})
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.OriginDenied {
		t.Fatalf("goto a denied origin = %v", err)
	}
	if got := ref.Error(); strings.Contains(got, allowed.URL) || strings.Contains(got, allowed.Listener.Addr().String()) {
		t.Fatalf("refusal names the allowlist: %s", got)
	}
	// A script navigation off the list: the page is then unreadable and unlisted.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>elsewhere</title><p>not allowed</p>`)
	}))
	defer elsewhere.Close()
	deniedURL := "http://localhost:" + fmt.Sprint(elsewhere.Listener.Addr().(*net.TCPAddr).Port) + "/"
	// The expression may finish after its document was replaced: its value
	// is then discarded (browser_binding_stale), never read from the new one.
	if _, err := runOp(ctx, h.r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "location.href = " + strconv.Quote(deniedURL) + "; 1"}); err != nil && !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the page is unreadable after leaving the list", func() bool {
		_, err := runOp(ctx, h.r, op.ReadText, readIn(p.ID))
		return fsm.IsCode(err, fsm.OriginDenied)
	})
	pages, _ := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.ID})
	for _, pg := range pages {
		if pg.ID == p.ID {
			t.Fatal("a page off the allowlist is still listed")
		}
	}
}

// TestRawCDPStaysInTheMainDocument: raw page CDP passes on the main
// document and is refused when it addresses another frame.
func TestRawCDPStaysInTheMainDocument(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>main</title><iframe srcdoc="<p>inner"></iframe>`)
	}))
	defer srv.Close()
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.r.CDP(ctx, localapi.CDPRequest{Page: p.ID, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"document.title","returnByValue":true}`)})
	if err != nil || !strings.Contains(string(res.Result), `"main"`) {
		t.Fatalf("raw evaluate on the main document = %s, %v", res.Result, err)
	}
	for _, c := range []struct{ method, params string }{
		{"DOM.getDocument", `{"depth":-1,"pierce":true}`},
		{"Runtime.evaluate", `{"expression":"document.body.innerHTML","contextId":2}`},
		{"Page.getFrameTree", `{}`},
	} {
		if _, err := h.r.CDP(ctx, localapi.CDPRequest{Page: p.ID, Method: c.method, Params: json.RawMessage(c.params)}); !fsm.IsCode(err, fsm.PolicyDenied) {
			t.Errorf("%s %s = %v, want %s", c.method, c.params, err, fsm.PolicyDenied)
		}
	}
}

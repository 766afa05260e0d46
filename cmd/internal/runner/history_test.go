package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestHistoryKeepsTheGate: back, forward and reload move the tab and read
// the document back live; an entry on an origin the allowlist denies is
// refused before the tab moves, exactly as navigating there is, and a page
// that left the list can still go back home.
func TestHistoryKeepsTheGate(t *testing.T) {
	t.Parallel() // its own Runner and browser
	loads := map[string]int{}
	var mu sync.Mutex
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		loads[r.URL.Path]++
		n := loads[r.URL.Path]
		mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><title>page %s</title><p>load %d</p>`, strings.TrimPrefix(r.URL.Path, "/"), n)
	}))
	defer allowed.Close()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>elsewhere</title><p>not allowed</p>`)
	}))
	defer elsewhere.Close()
	h := newHarness(t)
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{allowed.URL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: allowed.URL + "/a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: allowed.URL + "/b"}); err != nil {
		t.Fatal(err)
	}
	nav, err := runOp(ctx, h.r, op.Back, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != allowed.URL+"/a" || nav.Title != "page a" {
		t.Fatalf("back = %+v, %v; want page a", nav, err)
	}
	nav, err = runOp(ctx, h.r, op.Forward, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != allowed.URL+"/b" || nav.Title != "page b" {
		t.Fatalf("forward = %+v, %v; want page b", nav, err)
	}
	if _, err := runOp(ctx, h.r, op.Forward, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}}); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("forward at the newest entry = %v, want %s", err, fsm.NotFound)
	}
	nav, err = runOp(ctx, h.r, op.Reload, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != allowed.URL+"/b" {
		t.Fatalf("reload = %+v, %v", nav, err)
	}
	rd, err := runOp(ctx, h.r, op.ReadText, readIn(p.ID))
	if err != nil || rd.Text != "load 3" {
		t.Fatalf("read after reload = %+v, %v; want the third load of page b (goto, forward, reload)", rd, err)
	}

	// The page leaves the list by script: a denied origin is in its history.
	deniedURL := "http://localhost:" + strconv.Itoa(elsewhere.Listener.Addr().(*net.TCPAddr).Port) + "/"
	if _, err := runOp(ctx, h.r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "location.href = " + strconv.Quote(deniedURL) + "; 1"}); err != nil && !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the page is unreadable after leaving the list", func() bool {
		_, err := runOp(ctx, h.r, op.ReadText, readIn(p.ID))
		return fsm.IsCode(err, fsm.OriginDenied)
	})
	if _, err := runOp(ctx, h.r, op.Reload, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}}); !fsm.IsCode(err, fsm.OriginDenied) {
		t.Fatalf("reload of a page off the list = %v, want %s", err, fsm.OriginDenied)
	}
	nav, err = runOp(ctx, h.r, op.Back, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != allowed.URL+"/b" {
		t.Fatalf("back home from the denied page = %+v, %v", nav, err)
	}
	if _, err := runOp(ctx, h.r, op.ReadText, readIn(p.ID)); err != nil {
		t.Fatalf("read back home = %v", err)
	}
	// Forward would land on the denied origin: refused as goto is, and the
	// tab stays readable where it was.
	_, err = runOp(ctx, h.r, op.Forward, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.OriginDenied {
		t.Fatalf("forward to a denied origin = %v, want %s", err, fsm.OriginDenied)
	}
	if strings.Contains(ref.Error(), allowed.Listener.Addr().String()) {
		t.Fatalf("refusal names the allowlist: %s", ref.Error())
	}
	rd, err = runOp(ctx, h.r, op.ReadText, readIn(p.ID))
	if err != nil || !strings.HasPrefix(rd.Text, "load") {
		t.Fatalf("read after the refused forward = %+v, %v", rd, err)
	}
	if pages, _ := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.ID}); pageByURL(t, pages, allowed.URL+"/b") != p.ID {
		t.Fatal("the tab moved on a refused forward")
	}
}

// TestHistoryWithinTheDocument: entries made by the history API are moved
// through without a new document; the tab's URL is the entry's.
func TestHistoryWithinTheDocument(t *testing.T) {
	t.Parallel() // its own Runner and browser
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>app</title><p id=v>start</p>
<script>addEventListener('popstate', e => { document.getElementById('v').textContent = location.hash })</script>`)
	}))
	defer srv.Close()
	h := newHarness(t)
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/app"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runOp(ctx, h.r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "history.pushState({}, '', '#one'); history.pushState({}, '', '#two'); 1"}); err != nil {
		t.Fatal(err)
	}
	nav, err := runOp(ctx, h.r, op.Back, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != srv.URL+"/app#one" {
		t.Fatalf("back within the document = %+v, %v", nav, err)
	}
	waitfor.Until(t, 10*time.Second, "the page saw popstate", func() bool {
		rd, err := runOp(ctx, h.r, op.ReadText, readIn(p.ID))
		return err == nil && rd.Text == "#one"
	})
	nav, err = runOp(ctx, h.r, op.Forward, op.HistoryIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil || nav.URL != srv.URL+"/app#two" {
		t.Fatalf("forward within the document = %+v, %v", nav, err)
	}
}

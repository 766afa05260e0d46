package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestRepeatedKeyAfterCutSocket repeats a click, a type and a navigation
// with the same idempotency key after the socket was cut: the page's own
// journal counts exactly one of each. A click and a type whose
// acknowledgement the cut lost stay outcome_unknown on every repeat; the
// navigation, acknowledged before the cut, answers with its recorded
// result on the new connection's page handle.
func TestRepeatedKeyAfterCutSocket(t *testing.T) {
	t.Parallel() // its own Runner and browsers; the page waits for the cut
	h := newHarness(t)
	u := startUsersChrome(t)
	srv, j := journalServer(t)
	u.openTab(t, srv.URL+"/")
	ctx := context.Background()
	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL}})
	b, _ := h.r.browser(res.Browser.ID)
	page := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	h.waitShows(page, srv.URL+"/")

	cutAndReconnect := func() {
		g := uint64(b.gens.Current()) + 1
		h.dial.cut()
		waitfor.Until(t, 20*time.Second, fmt.Sprintf("reconnected to generation %d", g), func() bool {
			return uint64(b.gens.Current()) == g && b.state() == "ready"
		})
	}
	pageAt := func(path string) string {
		pages, err := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.id})
		if err != nil {
			t.Fatal(err)
		}
		return pageByURL(t, pages, srv.URL+path)
	}

	for _, action := range clickAndType {
		kind := action.kind
		key := "key-" + kind
		release := j.hold(t)
		done := make(chan error, 1)
		go func() { done <- action.run(ctx, h.r, page, key) }()
		waitfor.Until(t, 10*time.Second, kind+" reached the page", func() bool {
			select {
			case err := <-done:
				t.Fatalf("%s returned before the cut: %v", kind, err)
			default:
			}
			return j.get(kind) == 1
		})
		g := uint64(b.gens.Current()) + 1
		h.dial.cut()
		err := <-done
		release()
		if !fsm.IsCode(err, fsm.OutcomeUnknown) {
			t.Fatalf("%s with its ack lost = %v, want %s", kind, err, fsm.OutcomeUnknown)
		}
		waitfor.Until(t, 20*time.Second, fmt.Sprintf("reconnected to generation %d", g), func() bool {
			return uint64(b.gens.Current()) == g && b.state() == "ready"
		})
		// The same key, on the new connection's handle for the same tab:
		// the recorded outcome, and nothing reaches the page.
		page = pageAt("/")
		for range 2 {
			if err := action.run(ctx, h.r, page, key); !fsm.IsCode(err, fsm.OutcomeUnknown) {
				t.Fatalf("%s repeated with its key = %v, want %s (never dispatched again)", kind, err, fsm.OutcomeUnknown)
			}
		}
		if n := j.get(kind); n != 1 {
			t.Fatalf("%s landed %d times, want exactly once", kind, n)
		}
		// The key names that effect only.
		if err := action.other(ctx, h.r, page, key); !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Fatalf("the %s key reused for another request = %v, want %s", kind, err, fsm.InvalidArgument)
		}
	}

	nav := op.GotoIn{OnPage: op.OnPage{Page: page}, URL: srv.URL + "/nav", Keyed: op.Keyed{IdempotencyKey: "key-nav"}}
	first, err := runOp(ctx, h.r, op.Goto, nav)
	if err != nil {
		t.Fatal(err)
	}
	cutAndReconnect()
	nav.Page = pageAt("/nav")
	again, err := runOp(ctx, h.r, op.Goto, nav)
	if err != nil {
		t.Fatalf("navigation repeated with its key: %v", err)
	}
	if again != first {
		t.Fatalf("repeated navigation answered %+v, want the recorded %+v", again, first)
	}
	if n := j.get("navigate"); n != 1 {
		t.Fatalf("navigation landed %d times, want exactly once", n)
	}
	// Without a key each call is its own effect.
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: nav.Page}, URL: srv.URL + "/nav"}); err != nil {
		t.Fatal(err)
	}
	if n := j.get("navigate"); n != 2 {
		t.Fatalf("a navigation without a key landed %d times in all, want 2", n)
	}
}

// TestRawCDPRepeatedKeySendsOnce: a raw command is an effect in the ledger
// too; its key repeated answers with the recorded result and sends nothing.
func TestRawCDPRepeatedKeySendsOnce(t *testing.T) {
	t.Parallel() // its own Runner and browser
	h := newHarness(t)
	srv, j := journalServer(t)
	ctx := context.Background()
	bi, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	req := localapi.CDPRequest{Page: p.ID, Method: "Runtime.evaluate", IdempotencyKey: "key-cdp",
		Params: []byte(`{"expression":"(() => { const x = new XMLHttpRequest(); x.open('POST', '/effect?kind=cdp', false); x.send(); return 7 })()","returnByValue":true}`)}
	first, err := h.r.CDP(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.r.CDP(ctx, req)
	if err != nil || string(again.Result) != string(first.Result) {
		t.Fatalf("repeated raw command = %s, %v; want the recorded %s", again.Result, err, first.Result)
	}
	if n := j.get("cdp"); n != 1 {
		t.Fatalf("the raw command ran %d times, want once", n)
	}
	req.IdempotencyKey = ""
	if _, err := h.r.CDP(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := j.get("cdp"); n != 2 {
		t.Fatalf("without a key the command ran %d times in all, want 2", n)
	}
}

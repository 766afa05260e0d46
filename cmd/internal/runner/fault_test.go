package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// journal counts every effect the page reports to its server, by kind. An
// effect reported while the journal is held keeps its report unanswered,
// and so the page's renderer busy inside the handler (the report is a
// synchronous request), until the test releases it: the CDP
// acknowledgement of the action is then in flight for as long as the test
// needs to cut the socket, however loaded the machine.
type journal struct {
	mu     sync.Mutex
	counts map[string]int
	held   chan struct{} // nil: reports are answered at once
}

// maxHold bounds how long a held report waits for its release.
const maxHold = 2 * time.Minute

func (j *journal) add(kind string) { j.mu.Lock(); j.counts[kind]++; j.mu.Unlock() }
func (j *journal) get(kind string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.counts[kind]
}

// hold makes the next reports wait; the func returned releases them (once;
// the test's cleanup releases them too).
func (j *journal) hold(t *testing.T) (release func()) {
	held := make(chan struct{})
	j.mu.Lock()
	j.held = held
	j.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			j.mu.Lock()
			if j.held == held {
				j.held = nil
			}
			j.mu.Unlock()
			close(held)
		})
	}
	t.Cleanup(release)
	return release
}

// report records an effect and, while the journal is held, waits for the
// release (bounded by maxHold and the request).
func (j *journal) report(r *http.Request) {
	j.mu.Lock()
	j.counts[r.URL.Query().Get("kind")]++
	held := j.held
	j.mu.Unlock()
	if held == nil {
		return
	}
	timer := time.NewTimer(slow.Scale(maxHold))
	defer timer.Stop()
	select {
	case <-held:
	case <-r.Context().Done():
	case <-timer.C:
	}
}

func journalServer(t *testing.T) (*httptest.Server, *journal) {
	j := &journal{counts: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, journalPage) })
	mux.HandleFunc("/effect", func(w http.ResponseWriter, r *http.Request) { j.report(r) })
	mux.HandleFunc("/nav", func(w http.ResponseWriter, r *http.Request) {
		j.add("navigate")
		fmt.Fprint(w, `<!doctype html><title>nav</title><p>navigated</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, j
}

// The page reports each effect synchronously the moment it happens: while
// the journal is held, the renderer stays inside the handler and the CDP
// acknowledgement of the action stays in flight.
const journalPage = `<!doctype html><title>journal</title>
<script>
function effect(kind) {
  const x = new XMLHttpRequest(); x.open("POST", "/effect?kind=" + kind, false); x.send(); // recorded (and held) before we go on
}
</script>
<button id=b onclick="effect('click')">Do it</button>
<label>Note <input id=n oninput="effect('type')"></label>`

// TestCutSocketDuringEffects cuts the one socket before, during and after a
// click, a type and a navigation: every effect lands at most once, a lost
// acknowledgement is outcome_unknown, the reconnect yields a new generation
// and old page handles are refused.
func TestCutSocketDuringEffects(t *testing.T) {
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

	waitGen := func(g uint64) {
		waitfor.Until(t, 20*time.Second, fmt.Sprintf("reconnected to generation %d", g), func() bool {
			return uint64(b.gens.Current()) == g && b.state() == "ready"
		})
	}
	fresh := func() string {
		pages, err := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.id})
		if err != nil {
			t.Fatal(err)
		}
		return pageByURL(t, pages, srv.URL+"/")
	}

	for i, action := range clickAndType {
		kind := action.kind
		// During: cut while the renderer is still handling the effect.
		release := j.hold(t)
		done := make(chan error, 1)
		go func() { done <- action.run(ctx, h.r, page, "") }()
		waitfor.Until(t, 10*time.Second, kind+" reached the page", func() bool {
			select {
			case err := <-done:
				t.Fatalf("%s returned before the cut: %v", kind, err)
			default:
			}
			return j.get(kind) == 1
		})
		h.dial.cut()
		err := <-done
		release()
		if !fsm.IsCode(err, fsm.OutcomeUnknown) {
			t.Fatalf("%s with its ack lost = %v, want %s", kind, err, fsm.OutcomeUnknown)
		}
		gen := uint64(2 + 2*i)
		waitGen(gen)
		if err := action.run(ctx, h.r, page, ""); !fsm.IsCode(err, fsm.BindingStale) {
			t.Fatalf("%s on the old page handle = %v, want %s", kind, err, fsm.BindingStale)
		}
		if n := j.get(kind); n != 1 {
			t.Fatalf("%s landed %d times, want exactly once (never replayed)", kind, n)
		}
		// Before: cut first; the action on the lost connection is refused or
		// fails, and never lands.
		page = fresh()
		h.dial.cut()
		if err := action.run(ctx, h.r, page, ""); err == nil {
			t.Fatalf("%s on a cut connection succeeded", kind)
		}
		waitGen(gen + 1)
		if n := j.get(kind); n != 1 {
			t.Fatalf("%s after a cut landed %d times in all, want 1", kind, n)
		}
		page = fresh()
	}
	// After: a navigation whose ack arrived, then the cut: it landed once.
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: page}, URL: srv.URL + "/nav"}); err != nil {
		t.Fatal(err)
	}
	h.dial.cut()
	waitGen(uint64(b.gens.Current()) + 1)
	if n := j.get("navigate"); n != 1 {
		t.Fatalf("navigation landed %d times, want 1", n)
	}
}

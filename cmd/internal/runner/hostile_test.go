package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/platform"
)

// boundedRunner is a Runner whose calls are bounded by callBound (zero:
// the default), closed when the test ends.
func boundedRunner(t *testing.T, callBound time.Duration) *Runner {
	t.Helper()
	tracecheck.Track(t)
	if _, err := platform.FindChromium(); err != nil {
		if testing.Short() {
			t.Skip("Chromium missing (-short)")
		}
		t.Fatalf("Chromium is required: apt-get install -y chromium (%v)", err)
	}
	logs := &logSink{}
	if callBound == 0 {
		callBound = slow.Scale(DefaultCallBound) // the product's bound, on this machine's speed
	}
	r, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), Logf: logs.logf, CallBound: callBound, StartTimeout: slow.Scale(platform.DefaultStartTimeout)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.Shutdown(ctx)
		if t.Failed() {
			t.Logf("runner log:\n%s", logs.String())
		}
	})
	return r
}

// hostileServer serves a calm page and pages that misbehave.
func hostileServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
	}
	page("/calm", `<!doctype html><title>calm</title><p>the sibling tab</p>`)
	page("/flood", `<!doctype html><title>flood</title><script>
function flood() { console.log('x'.repeat(70 << 20)); console.log('after the flood'); return 'flooded'; }
</script><p>hostile</p>`)
	page("/busy", `<!doctype html><title>busy</title><input aria-label="Draft"><p>a page that will be wedged</p>`)
	// A document whose head arrives at once and whose end never does: it
	// commits and stays loading, as a huge page does.
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>endless</title><p>first chunk</p>`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv
}

func evalValue(t *testing.T, r *Runner, page, expr string) any {
	t.Helper()
	res, err := runOp(context.Background(), r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: page}, Expr: expr})
	if err != nil {
		t.Fatalf("eval %q: %v", expr, err)
	}
	return res.Value
}

func browserState(t *testing.T, r *Runner, id string) localapi.BrowserInfo {
	t.Helper()
	st, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range st.Browsers {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("browser %s is not listed in %+v", id, st.Browsers)
	return localapi.BrowserInfo{}
}

// TestHostilePageCostsOnlyItself: a page that logs 70 MiB and an
// evaluation that returns 66 MiB, each above the 64 MiB limit of one
// browser message, cost those messages only: the evaluation is refused
// naming the limit, the console read carries the loss marker, the browser
// stays ready, and the sibling tab and the hostile tab itself keep working
// (over the owned browser's pipe).
func TestHostilePageCostsOnlyItself(t *testing.T) {
	r := boundedRunner(t, 0)
	srv := hostileServer(t)
	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sib, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/calm"})
	if err != nil {
		t.Fatal(err)
	}
	hos, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/flood"})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if v := evalValue(t, r, hos.ID, "flood()"); v != "flooded" {
		t.Fatalf("flood() = %v", v)
	}
	flood := time.Since(start)
	var log localapi.DiagResult
	waitfor.Until(t, 20*time.Second, "the message after the flood is logged", func() bool {
		var err error
		log, err = localapi.Of(op.Console).Call(ctx, r.Routes(), op.ConsoleIn{OnPage: op.OnPage{Page: hos.ID}})
		if err != nil {
			t.Fatal(err)
		}
		return len(log.Entries) > 0 && log.Entries[len(log.Entries)-1].Text == "after the flood"
	})
	if log.Discarded != fsm.DiagnosticsDiscarded {
		t.Errorf("console read after a discarded 70 MiB message: discarded = %q, want %s", log.Discarded, fsm.DiagnosticsDiscarded)
	}

	start = time.Now()
	_, err = runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: hos.ID}, Expr: "'y'.repeat(66 << 20)"})
	t.Logf("a 70 MiB console.log: the call answered in %s; a 66 MiB evaluation was refused in %s", flood.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.LimitExceeded || !strings.Contains(ref.Detail, fmt.Sprintf("%d MiB", cdp.DefaultMaxMessageSize>>20)) {
		t.Fatalf("eval returning 66 MiB = %v, want %s naming the limit", err, fsm.LimitExceeded)
	}

	if st := browserState(t, r, b.ID); st.State != string(lease.AttachReady) || st.Unresponsive {
		t.Fatalf("browser after the hostile page: state %s, unresponsive %v; want ready", st.State, st.Unresponsive)
	}
	if v := evalValue(t, r, sib.ID, "document.title"); v != "calm" {
		t.Errorf("sibling tab: title %v", v)
	}
	if v := evalValue(t, r, hos.ID, "6 * 7"); v != float64(42) {
		t.Errorf("hostile tab after its oversized messages: 6*7 = %v", v)
	}
}

// TestWedgedTabRecovers: an expression that never yields is terminated at
// the call's bound, the call answers with a timeout that says so, and the
// next snapshot on that tab answers within its own bound.
func TestWedgedTabRecovers(t *testing.T) {
	const bound = 4 * time.Second
	r := boundedRunner(t, 0)
	srv := hostileServer(t)
	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/busy"})
	if err != nil {
		t.Fatal(err)
	}
	r.opts.CallBound = bound // set up under the default bound: a loaded machine is slow to
	start := time.Now()
	_, err = runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "while (true) {}"})
	wedged := time.Since(start)
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.Timeout || !strings.Contains(ref.Detail, "terminated") {
		t.Fatalf("while(true){} = %v, want %s saying the script was terminated", err, fsm.Timeout)
	}
	start = time.Now()
	snap, err := runOp(ctx, r, op.TakeSnapshot, op.SnapshotIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil {
		t.Fatalf("snapshot after the wedge: %v", err)
	}
	if !strings.Contains(snap.Text, "Draft") {
		t.Errorf("snapshot after the wedge does not show the page: %.300s", snap.Text)
	}
	t.Logf("while(true){} answered after %s (bound %s); the next snapshot took %s", wedged.Round(time.Millisecond), bound, time.Since(start).Round(time.Millisecond))
	if wedged > bound+answerReserve+15*time.Second {
		t.Errorf("the wedged call took %s, far beyond its bound %s and reserve %s", wedged, bound, answerReserve)
	}
}

// TestNavigationThatNeverLoadsReturnsLoading: a document that commits but
// never finishes loading returns at the call's bound with what the browser
// knows, marked loading, instead of failing.
func TestNavigationThatNeverLoadsReturnsLoading(t *testing.T) {
	r := boundedRunner(t, 0)
	srv := hostileServer(t)
	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	r.opts.CallBound = 5 * time.Second // set up under the default bound: a loaded machine is slow to
	nav, err := runOp(ctx, r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: srv.URL + "/endless"})
	if err != nil {
		t.Fatalf("goto a page that never finishes loading: %v", err)
	}
	if nav.URL != srv.URL+"/endless" || !nav.Loading {
		t.Errorf("nav = %+v, want the committed URL, loading", nav)
	}
	t.Logf("navigation to a never-ending document: %+v", nav)
}

// TestStoppedBrowserAnswersInTime: a browser stopped (SIGSTOP) past the
// call's bound gives typed refusals (timeout for reads, outcome_unknown for
// an input that may still be delivered), and status answers within its
// bound with the browser and its pages marked unresponsive, not left out;
// once it runs again, so does everything.
func TestStoppedBrowserAnswersInTime(t *testing.T) {
	const bound = 3 * time.Second
	r := boundedRunner(t, 0)
	srv := hostileServer(t)
	ctx := context.Background()
	bi, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/busy"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.browser(bi.ID)
	pid := procOf(b).PID()
	r.opts.CallBound = bound // set up under the default bound: a loaded machine is slow to
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)

	start := time.Now()
	if _, err := runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "1"}); !fsm.IsCode(err, fsm.Timeout) {
		t.Errorf("eval on a stopped browser = %v, want %s", err, fsm.Timeout)
	}
	evalTook := time.Since(start)
	start = time.Now()
	if _, err := runOp(ctx, r, op.TakeSnapshot, op.SnapshotIn{OnPage: op.OnPage{Page: p.ID}}); !fsm.IsCode(err, fsm.Timeout) {
		t.Errorf("snapshot on a stopped browser = %v, want %s", err, fsm.Timeout)
	}
	snapTook := time.Since(start)
	start = time.Now()
	st := browserState(t, r, bi.ID)
	statusTook := time.Since(start)
	marked := func(pages []localapi.PageInfo) bool {
		for _, pi := range pages {
			if pi.ID == p.ID {
				return pi.Unresponsive && pi.URL == srv.URL+"/busy"
			}
		}
		return false
	}
	if !st.Unresponsive || !marked(st.Pages) {
		t.Errorf("status of a stopped browser = %+v, want it and its page marked unresponsive, with the last known URL", st)
	}
	start = time.Now()
	pages, err := r.Pages(ctx, localapi.BrowserRequest{Browser: bi.ID})
	pagesTook := time.Since(start)
	if err != nil || !marked(pages) {
		t.Errorf("pages of a stopped browser = %+v, %v", pages, err)
	}
	t.Logf("stopped browser (bound %s): eval refused after %s, snapshot after %s; status answered in %s, pages in %s",
		bound, evalTook.Round(time.Millisecond), snapTook.Round(time.Millisecond), statusTook.Round(time.Millisecond), pagesTook.Round(time.Millisecond))
	if statusTook > statusBound+10*time.Second || pagesTook > statusBound+10*time.Second {
		t.Errorf("status took %s and pages %s; both are bounded by %s", statusTook, pagesTook, statusBound)
	}

	resume()
	waitfor.Until(t, 20*time.Second, "the resumed browser answers", func() bool {
		_, err := runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "1"})
		return err == nil
	})
	if st := browserState(t, r, bi.ID); st.Unresponsive || st.State != string(lease.AttachReady) {
		t.Errorf("resumed browser: %+v", st)
	}
}

// TestKilledBrowserIsShownLost: a browser killed behind the Runner's back
// stays listed as lost (crashed) until it is closed; its pages refuse with
// attachment_lost; closing it removes it.
func TestKilledBrowserIsShownLost(t *testing.T) {
	r := boundedRunner(t, 0)
	srv := hostileServer(t)
	ctx := context.Background()
	bi, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/calm"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.browser(bi.ID)
	if err := syscall.Kill(procOf(b).PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the killed browser is lost", func() bool {
		return browserState(t, r, bi.ID).State == string(lease.AttachLost)
	})
	if st := browserState(t, r, bi.ID); st.LostReason != "crashed" {
		t.Errorf("lost browser: %+v, want lostReason crashed", st)
	}
	if _, err := runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "1"}); !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Errorf("eval on a lost browser's page = %v, want %s", err, fsm.AttachmentLost)
	}
	if _, err := r.Open(ctx, localapi.OpenRequest{Browser: bi.ID}); !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Errorf("open a page in a lost browser = %v, want %s", err, fsm.AttachmentLost)
	}
	waitfor.Until(t, 20*time.Second, "the lost browser's process group is reaped", func() bool { return !platform.GroupAlive(procOf(b).PGID()) })
	if n := releases(b); n != 0 {
		t.Fatalf("release_attachment ran %d times before the lost browser was closed", n)
	}
	if _, err := r.Close(ctx, localapi.BrowserRequest{Browser: bi.ID}); err != nil {
		t.Fatalf("close a lost browser: %v", err)
	}
	st, _ := r.Status(ctx)
	if len(st.Browsers) != 0 {
		t.Errorf("after close: %+v", st.Browsers)
	}
	// The lost browser's teardown is the machine's: lost --close--> closed
	// ran release_attachment once, which removed what the launch made.
	o := b.life.(*ownedBrowser)
	for _, path := range []string{o.launchDir, o.record} {
		if _, err := os.Stat(path); path != "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the lost browser's launch left something behind its close (%v)", err)
		}
	}
	r.closeBrowser(ctx, b) // a second teardown fires nothing
	if n := releases(b); n != 1 || b.state() != lease.AttachClosed {
		t.Errorf("release_attachment ran %d times, machine in %s; want once, closed", n, b.state())
	}
}

// releases counts the release_attachment effects b's machine returned.
func releases(b *Browser) int {
	n := 0
	for _, rec := range b.life.machine().Trace() {
		if rec.Effect == string(lease.EffectRelease) {
			n++
		}
	}
	return n
}

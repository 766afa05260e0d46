package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/platform"
)

// fakeConsentUI stands in for a desktop accessibility adapter, which cannot
// run here: it shows the candidates a test scripts and, on a press of the
// "allow" candidate, releases the held handshake as Chrome would.
type fakeConsentUI struct {
	mu         sync.Mutex
	cands      func(consent.Identity) []consent.Candidate
	stale      bool
	pressErr   error // returned by Press instead of releasing the handshake
	observeErr error
	observes   atomic.Int32
	presses    atomic.Int32
	firstSeen  time.Time // when Observe first returned candidates
	pressedAt  time.Time
	release    func()
}

func (f *fakeConsentUI) Observe(_ context.Context, id consent.Identity) ([]consent.Candidate, error) {
	f.observes.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.observeErr != nil {
		return nil, f.observeErr
	}
	cands := f.cands(id)
	if len(cands) > 0 && f.firstSeen.IsZero() {
		f.firstSeen = time.Now()
	}
	return cands, nil
}

func (f *fakeConsentUI) Press(_ context.Context, c consent.Candidate) error {
	f.presses.Add(1)
	f.mu.Lock()
	f.pressedAt = time.Now()
	f.mu.Unlock()
	if f.stale {
		return consent.ErrStaleCandidate
	}
	if f.pressErr != nil {
		return f.pressErr
	}
	f.release()
	return nil
}

func exactCandidate(id consent.Identity) consent.Candidate {
	return consent.Candidate{ID: "allow", OwnerPID: id.PID, OwnerStart: id.StartTime, Executable: id.Executable, Role: "push button", Action: "allow", Modal: true}
}

// heldRunner is a Runner whose dials to the user's browser are held, as
// Chrome holds the handshake while its prompt is up.
func heldRunner(t *testing.T, h *harness, ui *fakeConsentUI, deadline time.Duration) (*Runner, chan struct{}) {
	t.Helper()
	hold := make(chan struct{})
	var once sync.Once
	ui.release = func() { once.Do(func() { close(hold) }) }
	h.dial.mu.Lock()
	h.dial.hold = hold
	h.dial.mu.Unlock()
	// The press comes a second or more after the prompt is seen: a loaded
	// machine needs the deadline stretched by its measured factor.
	r := newTestRunner(t, Options{Logf: h.logs.logf, NetDialContext: h.dial.dial, ConsentDeadline: slow.Scale(deadline), ConsentUI: ui})
	return r, hold
}

func TestFakeConsentUIAdversarialPrompts(t *testing.T) {
	u := startUsersChrome(t)
	req := localapi.AttachRequest{ProfileDir: u.profile, PressPrompt: true}
	cases := []struct {
		name    string
		cands   func(consent.Identity) []consent.Candidate
		stale   bool
		want    fsm.Code // "" = attached
		presses int32
	}{
		{"one exact candidate is pressed once", func(id consent.Identity) []consent.Candidate {
			return []consent.Candidate{exactCandidate(id)}
		}, false, "", 1},
		{"a decoy prompt from another process is never pressed", func(id consent.Identity) []consent.Candidate {
			d := exactCandidate(id)
			d.OwnerPID++
			return []consent.Candidate{d}
		}, false, fsm.WrongTargetRefused, 0},
		{"two matching candidates are ambiguous", func(id consent.Identity) []consent.Candidate {
			return []consent.Candidate{exactCandidate(id), exactCandidate(id)}
		}, false, fsm.WrongTargetRefused, 0},
		{"a candidate gone stale before the press is not pressed again", func(id consent.Identity) []consent.Candidate {
			return []consent.Candidate{exactCandidate(id)}
		}, true, fsm.WrongTargetRefused, 1},
		{"no prompt and no answer ends at the deadline", func(consent.Identity) []consent.Candidate { return nil }, false, fsm.ConsentRequired, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			ui := &fakeConsentUI{cands: c.cands, stale: c.stale}
			r, _ := heldRunner(t, h, ui, 3*time.Second) // room for the press, a second after the prompt
			_, err := r.Attach(context.Background(), req)
			r.broker.Approve(requestID(t, err))
			start := time.Now()
			_, err = r.Attach(context.Background(), req)
			if c.want == "" && err != nil || c.want != "" && !fsm.IsCode(err, c.want) {
				t.Fatalf("attach = %v, want %q", err, c.want)
			}
			if got := ui.presses.Load(); got != c.presses {
				t.Fatalf("%d presses, want %d", got, c.presses)
			}
			if took := time.Since(start); took > r.opts.ConsentDeadline+slow.Scale(7*time.Second) {
				t.Fatalf("the attempt took %s, outliving its deadline %s", took, r.opts.ConsentDeadline)
			}
			if c.want != "" && r.handshakes != 0 {
				t.Fatalf("a refused attempt counted %d sockets", r.handshakes)
			}
			if c.presses > 0 {
				if waited := ui.pressedAt.Sub(ui.firstSeen); waited < consent.MinPressDelay {
					t.Fatalf("pressed %s after the prompt was first observed, want at least %s", waited, consent.MinPressDelay)
				}
			}
		})
	}
}

// TestFakeConsentUIOnlyWhenGranted: the adapter is used only when the
// person's approval let webcodex press the prompt; a press the browser
// drops is the attempt's one press; an unavailable adapter leaves the
// prompt to the person and the refusal says why.
func TestFakeConsentUIOnlyWhenGranted(t *testing.T) {
	u := startUsersChrome(t)
	exact := func(id consent.Identity) []consent.Candidate { return []consent.Candidate{exactCandidate(id)} }
	cases := []struct {
		name       string
		press      bool // the attach asks (and the person approves) that webcodex press
		pressErr   error
		observeErr error
		detail     string // in the deadline refusal
		observes   func(int32) bool
		presses    int32
	}{
		{"not granted: never observed, never pressed", false, nil, nil, "not answered in time", func(n int32) bool { return n == 0 }, 0},
		{"a dropped press is not repeated", true, consent.ErrPressDropped, nil, "ignored webcodex's one press", func(n int32) bool { return n >= 1 }, 1},
		{"unavailable: the person answers", true, nil, fmt.Errorf("%w: accessibility was off when it started", consent.ErrUnavailable),
			"could not press it: accessibility was off when it started", func(n int32) bool { return n == 1 }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			ui := &fakeConsentUI{cands: exact, pressErr: c.pressErr, observeErr: c.observeErr}
			r, _ := heldRunner(t, h, ui, 2500*time.Millisecond)
			req := localapi.AttachRequest{ProfileDir: u.profile, PressPrompt: c.press}
			_, err := r.Attach(context.Background(), req)
			r.broker.Approve(requestID(t, err))
			_, err = r.Attach(context.Background(), req)
			ref, ok := fsm.AsRefusal(err)
			if !ok || ref.Code != fsm.ConsentRequired || !strings.Contains(ref.Detail, c.detail) {
				t.Fatalf("attach = %v, want %s saying %q", err, fsm.ConsentRequired, c.detail)
			}
			if n := ui.observes.Load(); !c.observes(n) {
				t.Fatalf("%d observations", n)
			}
			if n := ui.presses.Load(); n != c.presses {
				t.Fatalf("%d presses, want %d", n, c.presses)
			}
		})
	}
}

// TestDismissedPromptRevokesGrant: Chrome answers 403 when the person
// cancels its prompt; the grant is revoked and nothing is retried.
func TestDismissedPromptRevokesGrant(t *testing.T) {
	u := startUsersChrome(t)
	h := newHarness(t)
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Connection rejected", http.StatusForbidden)
	}))
	defer refuse.Close()
	var dials atomic.Int32
	r, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), Logf: h.logs.logf, ConsentDeadline: 5 * time.Second,
		// The person pressed Cancel: the browser answers the upgrade with 403.
		NetDialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, refuse.Listener.Addr().String())
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	req := localapi.AttachRequest{ProfileDir: u.profile}
	_, err = r.Attach(context.Background(), req)
	r.broker.Approve(requestID(t, err))
	if _, err := r.Attach(context.Background(), req); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("attach after Cancel = %v, want %s", err, fsm.ConsentRevoked)
	}
	if dials.Load() != 1 {
		t.Fatalf("%d dials, want exactly 1: a dismissal is never retried", dials.Load())
	}
	if _, err := r.Attach(context.Background(), req); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("attach after a revoked grant = %v, want a new approval (%s)", err, fsm.ConsentRequired)
	}
	if dials.Load() != 1 {
		t.Fatal("a revoked grant dialed again")
	}
}

// TestFakeConsentUIPressesOnReconnect: a reconnect's new connection prompts
// again, and under a grant that lets webcodex press, the adapter presses
// that prompt too: once, a second or more after seeing it.
func TestFakeConsentUIPressesOnReconnect(t *testing.T) {
	u := startUsersChrome(t)
	h := newHarness(t)
	ui := &fakeConsentUI{cands: func(id consent.Identity) []consent.Candidate { return []consent.Candidate{exactCandidate(id)} }}
	r, _ := heldRunner(t, h, ui, 3*time.Second)
	req := localapi.AttachRequest{ProfileDir: u.profile, PressPrompt: true}
	ctx := context.Background()
	_, err := r.Attach(ctx, req)
	r.broker.Approve(requestID(t, err))
	res, err := r.Attach(ctx, req)
	if err != nil || ui.presses.Load() != 1 {
		t.Fatalf("attach = %v with %d presses, want attached with 1", err, ui.presses.Load())
	}
	// The next connection is held again until its prompt is pressed.
	hold := make(chan struct{})
	var once sync.Once
	ui.mu.Lock()
	ui.release = func() { once.Do(func() { close(hold) }) }
	ui.firstSeen = time.Time{}
	ui.mu.Unlock()
	h.dial.mu.Lock()
	h.dial.hold = hold
	h.dial.mu.Unlock()
	rc, err := r.Reconnect(ctx, localapi.BrowserRequest{Browser: res.Browser.ID})
	if err != nil {
		t.Fatalf("reconnect = %v", err)
	}
	if n := ui.presses.Load(); n != 2 || rc.Attempts != 1 || handshakesOf(r) != 2 {
		t.Fatalf("after the reconnect: %d presses, %d attempts, %d handshakes; want 2, 1, 2", n, rc.Attempts, handshakesOf(r))
	}
	if waited := ui.pressedAt.Sub(ui.firstSeen); waited < consent.MinPressDelay {
		t.Fatalf("the reconnect's prompt was pressed %s after it was seen, want at least %s", waited, consent.MinPressDelay)
	}
}

// TestAttachWithoutEndpointRequiresSetup: the person's browser runs, but
// with remote debugging off (no endpoint): attach refuses with
// browser_requires_setup and the exact human step, connects nowhere, does
// not restart the browser and writes nothing into its profile.
func TestAttachWithoutEndpointRequiresSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("real Chromium test skipped under -short")
	}
	profile := filepath.Join(t.TempDir(), "profile")
	if err := platform.EnsurePrivateDir(profile); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := platform.Launch(ctx, platform.LaunchOptions{UserDataDir: profile, Headless: true}) // a pipe: it listens nowhere
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })
	h := newHarness(t)
	_, err = h.r.Attach(ctx, localapi.AttachRequest{ProfileDir: profile, PressPrompt: true})
	h.record(nil, err)
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.RequiresSetup || !strings.Contains(ref.Detail, "chrome://inspect/#remote-debugging") ||
		!strings.Contains(ref.Detail, `tick "Allow remote debugging for this browser instance"`) {
		t.Fatalf("attach to a browser without an endpoint = %v, want %s with the human step", err, fsm.RequiresSetup)
	}
	if d := h.dial.dials.Load(); d != 0 {
		t.Fatalf("%d connections, want none", d)
	}
	if !p.Fingerprint().Alive() {
		t.Fatal("the browser was stopped or restarted")
	}
	if _, _, err := platform.ReadDevToolsActivePort(profile); err == nil {
		t.Fatal("the profile gained a DevToolsActivePort")
	}
	if st, _ := h.r.Status(ctx); len(st.Browsers) != 0 {
		t.Fatalf("a refused attach left browsers: %+v", st.Browsers)
	}
}

func handshakesOf(r *Runner) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handshakes
}

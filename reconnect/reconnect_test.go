package reconnect

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
	"pgregory.net/rapid"
)

func TestReconnectProperties(t *testing.T) { fsmtest.Check(t, Spec) }

// TestGenerationsNeverDecrease walks the machine with an invariant: the
// generation counter never decreases and attempts never exceed the budget.
func TestGenerationsNeverDecrease(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		last := 0
		fsmtest.Walk(rt, Spec, func(rt *rapid.T, _ fsm.Step[State, Trigger], c fsm.Counters) {
			if c["generation"] < last {
				rt.Fatalf("generation went from %d to %d", last, c["generation"])
			}
			last = c["generation"]
		})
	})
}

type recorder struct {
	mu      sync.Mutex
	calls   []string
	dials   atomic.Int32
	presses atomic.Int32
}

func (r *recorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// dialFunc is a test's Dial: it answers with whether the handshake completed.
type dialFunc func(ctx context.Context, attempt int, p Prompt) error

func hooks(r *recorder, dial dialFunc) Hooks {
	return Hooks{
		CloseGates: func() { r.add("close") },
		Revalidate: func(context.Context) (bool, error) { r.add("revalidate"); return true, nil },
		Dial: func(ctx context.Context, a int, p Prompt) (Dialed, error) {
			r.dials.Add(1)
			r.add("dial")
			if err := dial(ctx, a, p); err != nil {
				return Dialed{}, err
			}
			return Dialed{OwnerReproved: true, Adopt: func() { r.add("adopt") }, Close: func() { r.add("close_pending") }}, nil
		},
		Invalidate:  func(Generation) { r.add("invalidate") },
		ReopenGates: func() { r.add("reopen") },
		RevokeGrant: func() { r.add("revoke") },
	}
}

func connects(context.Context, int, Prompt) error { return nil }

func wantCalls(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.list(); !slices.Equal(got, want) {
		t.Fatalf("hooks ran %v, want %v", got, want)
	}
}

func TestConcurrentRequestsOneLeaderOneGeneration(t *testing.T) {
	const n = 16
	rec := &recorder{}
	release := make(chan struct{})
	gens := &Generations{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, _ Prompt) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}), gens)
	results := make(chan Result, n)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			r, err := c.Reconnect(ctx)
			if err != nil {
				t.Errorf("Reconnect: %v", err)
			}
			results <- r
		}()
	}
	waitJoined(t, ctx, c, n-1)
	close(release)
	wg.Wait()
	close(results)
	for r := range results {
		if r.Generation != 1 || !r.CapabilitiesInvalidated {
			t.Fatalf("result %+v, want generation 1 with capabilities invalidated", r)
		}
	}
	if got := rec.dials.Load(); got != 1 {
		t.Fatalf("%d dials for %d concurrent requests, want 1", got, n)
	}
	if gens.Current() != 1 {
		t.Fatalf("generation %d, want 1", gens.Current())
	}
	wantCalls(t, rec, "close", "revalidate", "dial", "adopt", "invalidate", "reopen")
}

// waitJoined waits until n callers joined the running flight.
func waitJoined(t *testing.T, ctx context.Context, c *Coordinator, n int) {
	t.Helper()
	for c.Joined() < n {
		select {
		case <-ctx.Done():
			t.Fatalf("only %d callers joined, want %d", c.Joined(), n)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestJoinersSurviveLeaderCancel: the caller that started the flight goes
// away; the flight and its joiners are not aborted.
func TestJoinersSurviveLeaderCancel(t *testing.T) {
	rec := &recorder{}
	release := make(chan struct{})
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, _ Prompt) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}), &Generations{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leaderCtx, leaderCancel := context.WithCancel(ctx)
	leaderDone := make(chan error, 1)
	go func() { _, err := c.Reconnect(leaderCtx); leaderDone <- err }()
	for rec.dials.Load() == 0 { // the leader's flight is dialing
		select {
		case <-ctx.Done():
			t.Fatal("the flight never dialed")
		case <-time.After(time.Millisecond):
		}
	}
	joinerDone := make(chan struct {
		r   Result
		err error
	}, 1)
	go func() {
		r, err := c.Reconnect(ctx)
		joinerDone <- struct {
			r   Result
			err error
		}{r, err}
	}()
	waitJoined(t, ctx, c, 1)
	leaderCancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v, want its own context's cancellation", err)
	}
	close(release)
	j := <-joinerDone
	if j.err != nil || j.r.Generation != 1 {
		t.Fatalf("joiner after the leader left: %+v %v, want generation 1", j.r, j.err)
	}
	if c.State() != ReadyForRebind {
		t.Fatalf("state %s, want %s", c.State(), ReadyForRebind)
	}
}

func TestOldCapabilitiesRefusedAfterReconnect(t *testing.T) {
	gens := &Generations{}
	minted := gens.Current()
	c := NewCoordinator(hooks(&recorder{}, connects), gens)
	for i := range 3 {
		if _, err := c.Reconnect(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := gens.Check(minted); !fsm.IsCode(err, fsm.BindingStale) {
			t.Fatalf("capability of generation %d after reconnect %d: %v", minted, i+1, err)
		}
		if err := gens.Check(gens.Current()); err != nil {
			t.Fatalf("current capability refused: %v", err)
		}
		minted = gens.Current()
	}
}

func TestThreeFailedAttemptsExhaust(t *testing.T) {
	rec := &recorder{}
	var attempts []int
	c := NewCoordinator(hooks(rec, func(_ context.Context, a int, _ Prompt) error {
		attempts = append(attempts, a)
		return errors.New("connection refused")
	}), &Generations{})
	_, err := c.Reconnect(context.Background())
	if !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("err = %v, want %s", err, fsm.ReconnectExhausted)
	}
	if got := rec.dials.Load(); got != MaxAttempts || MaxAttempts != 3 {
		t.Fatalf("%d dials (MaxAttempts %d), want exactly 3", got, MaxAttempts)
	}
	if !slices.Equal(attempts, []int{1, 2, 3}) {
		t.Fatalf("attempt numbers %v, want 1, 2, 3", attempts)
	}
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("reconnect after exhaustion = %v", err)
	}
	if rec.dials.Load() != MaxAttempts {
		t.Fatal("an exhausted coordinator dialed again")
	}
}

// TestBudgetResetsPerLoss: each loss gets its own three attempts.
func TestBudgetResetsPerLoss(t *testing.T) {
	fail := 2
	c := NewCoordinator(hooks(&recorder{}, func(context.Context, int, Prompt) error {
		if fail > 0 {
			fail--
			return errors.New("connection refused")
		}
		return nil
	}), &Generations{})
	for loss := range 2 {
		fail = 2
		res, err := c.Reconnect(context.Background())
		if err != nil || res.Attempts != 3 {
			t.Fatalf("loss %d: %+v %v, want success on attempt 3", loss+1, res, err)
		}
	}
}

func TestDeadlineBoundsTheTransition(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, _ Prompt) error {
		<-ctx.Done() // a handshake held forever by an unanswered prompt
		return ctx.Err()
	}), &Generations{})
	c.Deadline = 50 * time.Millisecond
	_, err := c.Reconnect(context.Background())
	if !fsm.IsCode(err, fsm.ReconnectExhausted) || c.State() != Exhausted {
		t.Fatalf("err = %v state %s, want %s in exhausted", err, c.State(), fsm.ReconnectExhausted)
	}
	if rec.dials.Load() != 1 {
		t.Fatalf("%d dials, want 1", rec.dials.Load())
	}
}

func TestDefaultDeadlinePinned(t *testing.T) {
	if DefaultDeadline != 30*time.Second {
		t.Fatalf("DefaultDeadline = %v, the design says one 30 s deadline for the whole transition", DefaultDeadline)
	}
	if want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}; !slices.Equal(retryDelay, want) {
		t.Fatalf("retry delays %v, want %v (their sum stays far below the deadline)", retryDelay, want)
	}
}

// TestDismissalRevokesThroughConsentDismissed: a 403 passes through
// consent_dismissed to grant_revoked, revokes once and is never retried.
func TestDismissalRevokesThroughConsentDismissed(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(context.Context, int, Prompt) error { return ErrDismissed }), &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("err = %v, want %s", err, fsm.ConsentRevoked)
	}
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("second reconnect = %v, want %s", err, fsm.ConsentRevoked)
	}
	wantCalls(t, rec, "close", "revalidate", "dial", "revoke")
	wantPath(t, c, Ready, Singleflight, GatesClosed, Revalidated, ConnectingPending, Dismissed, Revoked)
}

// wantPath checks the states the coordinator's machine went through.
func wantPath(t *testing.T, c *Coordinator, want ...State) {
	t.Helper()
	tr := c.Trace()
	var got []State
	for i, r := range tr {
		if i == 0 {
			got = append(got, State(r.From))
		}
		got = append(got, State(r.To))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("path %v, want %v", got, want)
	}
	conf, ok := fsm.LookupConformer(Spec.Name)
	if !ok {
		t.Fatal("no conformer for the reconnect declaration")
	}
	if err := conf.Conform(tr); err != nil {
		t.Fatalf("trace does not conform: %v", err)
	}
}

func TestSessionEndCancels(t *testing.T) {
	rec := &recorder{}
	entered := make(chan struct{})
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, _ Prompt) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}), &Generations{})
	done := make(chan error, 1)
	go func() { _, err := c.Reconnect(context.Background()); done <- err }()
	<-entered
	c.Close()
	// Close waited for the flight: it has ended already.
	if c.State() != Cancelled {
		t.Fatalf("state %s after Close, want cancelled", c.State())
	}
	if err := <-done; !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Fatalf("err = %v, want attachment_lost", err)
	}
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Fatalf("reconnect after the session ended = %v", err)
	}
}

func TestChangedProcessIsLost(t *testing.T) {
	rec := &recorder{}
	h := hooks(rec, connects)
	h.Revalidate = func(context.Context) (bool, error) { return false, nil }
	c := NewCoordinator(h, &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.EndpointOwnerMismatch) {
		t.Fatalf("err = %v", err)
	}
	if rec.dials.Load() != 0 {
		t.Fatal("dialed a browser that failed revalidation")
	}
}

// TestReusedOwnerAfterDialIsLost: the endpoint re-proven before the dial,
// but the live socket's listener is another process (a PID or port reused
// meanwhile): the socket is closed unused, nothing is invalidated or
// reopened, and the generation stays.
func TestReusedOwnerAfterDialIsLost(t *testing.T) {
	rec := &recorder{}
	gens := &Generations{}
	h := hooks(rec, connects)
	h.Dial = func(context.Context, int, Prompt) (Dialed, error) {
		rec.add("dial")
		return Dialed{OwnerReproved: false, Adopt: func() { rec.add("adopt") }, Close: func() { rec.add("close_pending") }}, nil
	}
	c := NewCoordinator(h, gens)
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.EndpointOwnerMismatch) {
		t.Fatalf("err = %v, want %s", err, fsm.EndpointOwnerMismatch)
	}
	wantCalls(t, rec, "close", "revalidate", "dial", "close_pending")
	if gens.Current() != 0 || c.State() != Lost {
		t.Fatalf("generation %d state %s, want 0 in lost", gens.Current(), c.State())
	}
}

// TestOnePressPerAttempt: every attempt sees its prompt; the machine takes
// one press per attempt and refuses a second observation or press.
func TestOnePressPerAttempt(t *testing.T) {
	rec := &recorder{}
	var second []error
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, p Prompt) error {
		if !p.Watching() {
			t.Error("a new attempt does not watch for its prompt")
		}
		press := func(context.Context) error { rec.presses.Add(1); return nil }
		if err := p.Observed(ctx, true, press); err != nil {
			t.Errorf("first observation: %v", err)
		}
		if p.Watching() {
			t.Error("the attempt still watches after its press")
		}
		second = append(second, p.Observed(ctx, true, press))
		return errors.New("the browser ignored the press and the handshake failed")
	}), &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("err = %v, want exhausted", err)
	}
	if got := rec.presses.Load(); got != MaxAttempts {
		t.Fatalf("%d presses over %d attempts, want one each", got, MaxAttempts)
	}
	for i, err := range second {
		if !fsm.IsCode(err, fsm.TransitionRefused) {
			t.Fatalf("attempt %d: second observation = %v, want refused", i+1, err)
		}
	}
}

// TestPressedThenConnected: the handshake the press released completes.
func TestPressedThenConnected(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, p Prompt) error {
		return p.Observed(ctx, true, func(context.Context) error { rec.add("press"); return nil })
	}), &Generations{})
	if _, err := c.Reconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, rec, "close", "revalidate", "dial", "press", "adopt", "invalidate", "reopen")
	wantPath(t, c, Ready, Singleflight, GatesClosed, Revalidated, ConnectingPending, PromptObservedState, Pressed,
		GenerationIncremented, CapabilitiesInvalid, GatesReopened, ReadyForRebind)
}

// TestAmbiguousPromptNeverPressed: no exact candidate, no press, and the
// flight ends browser_wrong_target_refused without retrying.
func TestAmbiguousPromptNeverPressed(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, p Prompt) error {
		return p.Observed(ctx, false, func(context.Context) error { rec.presses.Add(1); return nil })
	}), &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.WrongTargetRefused) {
		t.Fatalf("err = %v, want %s", err, fsm.WrongTargetRefused)
	}
	if rec.presses.Load() != 0 || rec.dials.Load() != 1 || c.State() != Ambiguous {
		t.Fatalf("%d presses %d dials in %s, want 0, 1 in %s", rec.presses.Load(), rec.dials.Load(), c.State(), Ambiguous)
	}
}

// TestStalePressEndsTheFlight: the prompt changed under the press; the
// attempt ends ambiguous, not retried into a second press.
func TestStalePressEndsTheFlight(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, p Prompt) error {
		if err := p.Observed(ctx, true, func(context.Context) error { rec.presses.Add(1); return errors.New("stale") }); err == nil {
			t.Error("the press's error was not returned")
		}
		return fsm.Refuse(fsm.WrongTargetRefused, "the consent prompt changed between observation and press")
	}), &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.WrongTargetRefused) {
		t.Fatalf("err = %v", err)
	}
	if rec.presses.Load() != 1 || rec.dials.Load() != 1 {
		t.Fatalf("%d presses %d dials, want 1, 1", rec.presses.Load(), rec.dials.Load())
	}
}

// TestShorterDeadlineBoundsTheTransition: a deadline a hundredth of the
// default ends a held dial no sooner than itself and far sooner than the
// default (elapsed as ratios of the two bounds: a coordinator that ignored
// its own deadline would take the default's whole 30 s).
func TestShorterDeadlineBoundsTheTransition(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int, _ Prompt) error {
		<-ctx.Done()
		return ctx.Err()
	}), &Generations{})
	c.Deadline = DefaultDeadline / 100
	start := time.Now()
	_, err := c.Reconnect(context.Background())
	elapsed := time.Since(start)
	if !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("err = %v, want %s", err, fsm.ReconnectExhausted)
	}
	if r := float64(elapsed) / float64(c.Deadline); r < 1 {
		t.Fatalf("the flight ended at %.2f of its deadline, before it", r)
	}
	if r := float64(elapsed) / float64(DefaultDeadline); r >= 0.5 {
		t.Fatalf("the flight ended at %.2f of the default deadline: its own (a hundredth) was not used", r)
	}
}

// TestReconnectAfterCloseIsRefused: a session that ended with no flight
// running moves the machine to cancelled, which refuses a later reconnect
// before any hook runs.
func TestReconnectAfterCloseIsRefused(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, connects), &Generations{})
	c.Close()
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Fatalf("reconnect after close = %v, want %s", err, fsm.AttachmentLost)
	}
	if got := rec.list(); len(got) != 0 || c.State() != Cancelled {
		t.Fatalf("after close a reconnect ran %v and left the machine in %s", got, c.State())
	}
	c.Close() // twice is safe
}

// TestEachHookRunsInItsOwnTransition asserts which hook runs at which
// transition, not only their order: each hook records the state the
// machine is in when it runs (effects run after their transition), and
// Invalidate gets the generation it must invalidate below.
func TestEachHookRunsInItsOwnTransition(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	var c *Coordinator
	at := func(hook string) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, hook+"@"+string(c.State()))
	}
	gens := &Generations{}
	c = NewCoordinator(Hooks{
		CloseGates: func() { at("close_gates") },
		Revalidate: func(context.Context) (bool, error) { at("revalidate"); return true, nil },
		Dial: func(context.Context, int, Prompt) (Dialed, error) {
			at("dial")
			return Dialed{OwnerReproved: true, Adopt: func() { at("adopt") }, Close: func() { at("close_pending") }}, nil
		},
		Invalidate: func(g Generation) {
			if g != 1 || gens.Current() != 1 {
				t.Errorf("Invalidate(%d) with the current generation %d, want both 1", g, gens.Current())
			}
			at("invalidate")
		},
		ReopenGates: func() { at("reopen_gates") },
		RevokeGrant: func() { at("revoke_grant") },
	}, gens)
	if _, err := c.Reconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"close_gates@" + string(GatesClosed),
		"revalidate@" + string(GatesClosed),
		"dial@" + string(ConnectingPending),
		"adopt@" + string(GenerationIncremented),
		"invalidate@" + string(CapabilitiesInvalid),
		"reopen_gates@" + string(GatesReopened),
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(ran, want) {
		t.Fatalf("hooks ran %v, want %v", ran, want)
	}
}

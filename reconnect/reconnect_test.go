package reconnect

import (
	"context"
	"errors"
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
	mu    sync.Mutex
	calls []string
	dials atomic.Int32
}

func (r *recorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }

func hooks(r *recorder, dial func(ctx context.Context, attempt int) error) Hooks {
	return Hooks{
		CloseGates:  func() { r.add("close") },
		Revalidate:  func(context.Context) (bool, error) { r.add("revalidate"); return true, nil },
		Dial:        func(ctx context.Context, a int) error { r.dials.Add(1); r.add("dial"); return dial(ctx, a) },
		Invalidate:  func(Generation) { r.add("invalidate") },
		ReopenGates: func() { r.add("reopen") },
		RevokeGrant: func() { r.add("revoke") },
	}
}

func TestConcurrentRequestsOneLeaderOneGeneration(t *testing.T) {
	const n = 16
	rec := &recorder{}
	release := make(chan struct{})
	gens := &Generations{}
	var c *Coordinator
	c = NewCoordinator(hooks(rec, func(ctx context.Context, _ int) error {
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
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			r, err := c.Reconnect(ctx)
			if err != nil {
				t.Errorf("Reconnect: %v", err)
			}
			results <- r
		}()
	}
	// Release the dial only once every other caller has joined the flight.
	for {
		c.mu.Lock()
		joined := 0
		if c.flight != nil {
			joined = c.flight.joined
		}
		c.mu.Unlock()
		if joined == n-1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("only %d callers joined", joined)
		case <-time.After(time.Millisecond):
		}
	}
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
	want := []string{"close", "revalidate", "dial", "invalidate", "reopen"}
	if len(rec.calls) != len(want) {
		t.Fatalf("hook order %v, want %v", rec.calls, want)
	}
	for i := range want {
		if rec.calls[i] != want[i] {
			t.Fatalf("hook order %v, want %v", rec.calls, want)
		}
	}
}

func TestOldCapabilitiesRefusedAfterReconnect(t *testing.T) {
	gens := &Generations{}
	minted := gens.Current()
	c := NewCoordinator(hooks(&recorder{}, func(context.Context, int) error { return nil }), gens)
	for i := 0; i < 3; i++ {
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
	c := NewCoordinator(hooks(rec, func(context.Context, int) error { return errors.New("connection refused") }), &Generations{})
	_, err := c.Reconnect(context.Background())
	if !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("err = %v, want %s", err, fsm.ReconnectExhausted)
	}
	if got := rec.dials.Load(); got != MaxAttempts {
		t.Fatalf("%d dials, want exactly %d", got, MaxAttempts)
	}
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("reconnect after exhaustion = %v", err)
	}
	if rec.dials.Load() != MaxAttempts {
		t.Fatal("an exhausted coordinator dialed again")
	}
}

func TestDeadlineBoundsTheTransition(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int) error {
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

func TestDismissalRevokesAndNeverRetries(t *testing.T) {
	rec := &recorder{}
	c := NewCoordinator(hooks(rec, func(context.Context, int) error { return ErrDismissed }), &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("err = %v, want %s", err, fsm.ConsentRevoked)
	}
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("second reconnect = %v, want %s", err, fsm.ConsentRevoked)
	}
	if rec.dials.Load() != 1 {
		t.Fatalf("%d dials after a dismissal, want 1", rec.dials.Load())
	}
	if rec.calls[len(rec.calls)-1] != "revoke" {
		t.Fatalf("hooks %v: grant not revoked", rec.calls)
	}
}

func TestSessionEndCancels(t *testing.T) {
	rec := &recorder{}
	entered := make(chan struct{})
	c := NewCoordinator(hooks(rec, func(ctx context.Context, _ int) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}), &Generations{})
	done := make(chan error, 1)
	go func() { _, err := c.Reconnect(context.Background()); done <- err }()
	<-entered
	c.Close()
	if err := <-done; !fsm.IsCode(err, fsm.AttachmentLost) || c.State() != Cancelled {
		t.Fatalf("err = %v state %s, want attachment_lost in cancelled", err, c.State())
	}
}

func TestChangedProcessIsLost(t *testing.T) {
	rec := &recorder{}
	h := hooks(rec, func(context.Context, int) error { return nil })
	h.Revalidate = func(context.Context) (bool, error) { return false, nil }
	c := NewCoordinator(h, &Generations{})
	if _, err := c.Reconnect(context.Background()); !fsm.IsCode(err, fsm.EndpointOwnerMismatch) {
		t.Fatalf("err = %v", err)
	}
	if rec.dials.Load() != 0 {
		t.Fatal("dialed a browser that failed revalidation")
	}
}

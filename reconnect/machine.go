package reconnect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// ErrDismissed is wrapped by a Dial hook's error when the person cancelled
// the browser's prompt (Chrome answers 403).
var ErrDismissed = errors.New("reconnect: consent prompt dismissed")

// Hooks are the effects the Coordinator runs; the Runner provides them.
// Each is called from the flight's leader only.
type Hooks struct {
	CloseGates  func()
	Revalidate  func(ctx context.Context) (sameProcess bool, err error)
	Dial        func(ctx context.Context, attempt int) error
	Invalidate  func(gen Generation)
	ReopenGates func()
	RevokeGrant func()
}

// Result is what a reconnect reports.
type Result struct {
	Generation              Generation `json:"generation"`
	CapabilitiesInvalidated bool       `json:"capabilities_invalidated"`
	Attempts                int        `json:"attempts"`
}

// DefaultDeadline bounds one whole reconnect transition.
const DefaultDeadline = 30 * time.Second

// retryDelay is the pause between failed attempts; it is bounded by the
// transition's deadline.
var retryDelay = []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}

// Coordinator runs reconnects for one browser: one leader at a time,
// concurrent requests join the running flight. Safe for concurrent use.
type Coordinator struct {
	Hooks    Hooks
	Gens     *Generations
	Deadline time.Duration // zero means DefaultDeadline

	mu     sync.Mutex // mu guards the fields that follow
	m      *fsm.Machine[State, Trigger, Facts]
	facts  Facts
	flight *flight
	closed bool
	cancel context.CancelFunc
}

type flight struct {
	done   chan struct{}
	res    Result
	err    error
	joined int
}

// NewCoordinator returns a coordinator in the ready state.
func NewCoordinator(h Hooks, gens *Generations) *Coordinator {
	c := &Coordinator{Hooks: h, Gens: gens}
	c.m = Spec.Build(func() Facts { return c.facts })
	return c
}

// State returns the machine's state.
func (c *Coordinator) State() State { return c.m.State() }

// AttemptsLeft returns how many connection attempts the current or next
// flight has left.
func (c *Coordinator) AttemptsLeft() int {
	switch c.m.State() {
	case Ready, ReadyForRebind:
		return MaxAttempts
	case Exhausted, Revoked, Lost, Cancelled:
		return 0
	}
	return MaxAttempts - c.m.Counter("attempts")
}

// Joined returns how many callers joined the running flight (0 when none
// runs).
func (c *Coordinator) Joined() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flight == nil {
		return 0
	}
	return c.flight.joined
}

// Reconnect starts a reconnect or joins the one running, and waits for it
// or for ctx. Only the leader runs hooks; every caller gets the same result.
func (c *Coordinator) Reconnect(ctx context.Context) (Result, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Result{}, fsm.Refuse(fsm.AttachmentLost, "the session that owned this browser ended")
	}
	f := c.flight
	if f != nil {
		f.joined++
	} else {
		if _, err := c.m.Fire(ctx, SocketLost); err != nil {
			c.mu.Unlock()
			return Result{}, c.terminalRefusal(err)
		}
		f = &flight{done: make(chan struct{})}
		c.flight = f
		deadline := c.Deadline
		if deadline == 0 {
			deadline = DefaultDeadline
		}
		// The flight outlives the caller that started it: joiners wait on it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline)
		c.cancel = cancel
		go c.lead(fctx, cancel, f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.res, f.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("reconnect: waiting for the flight: %w", ctx.Err())
	}
}

// Close ends the owning session: a running flight is cancelled and later
// requests are refused. Close waits for nothing but is safe to call twice.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.cancel != nil {
		c.cancel()
	}
}

func (c *Coordinator) fire(ctx context.Context, t Trigger) (fsm.Step[State, Trigger], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m.Fire(ctx, t)
}

func (c *Coordinator) lead(ctx context.Context, cancel context.CancelFunc, f *flight) {
	defer cancel()
	f.res, f.err = c.run(ctx)
	c.mu.Lock()
	c.flight = nil
	c.mu.Unlock()
	close(f.done)
}

// interrupted fires the deadline or session-end trigger and returns the
// matching refusal.
func (c *Coordinator) interrupted(ctx context.Context) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		c.fire(context.Background(), SessionEnded)
		return fsm.Refuse(fsm.AttachmentLost, "the session that owned this browser ended during reconnect")
	}
	c.fire(context.Background(), DeadlineExpired)
	return fsm.Refuse(fsm.ReconnectExhausted, "the reconnect deadline passed").WithCause(ctx.Err())
}

func (c *Coordinator) run(ctx context.Context) (Result, error) {
	if _, err := c.fire(ctx, CloseGates); err != nil {
		return Result{}, err
	}
	c.Hooks.CloseGates()
	if ctx.Err() != nil {
		return Result{}, c.interrupted(ctx)
	}
	same, err := c.Hooks.Revalidate(ctx)
	if ctx.Err() != nil {
		return Result{}, c.interrupted(ctx)
	}
	c.mu.Lock()
	c.facts = Facts{SameProcess: same && err == nil}
	c.mu.Unlock()
	if _, err := c.fire(ctx, Revalidate); err != nil {
		return Result{}, err
	}
	if c.m.State() == Lost {
		return Result{}, fsm.Refuse(fsm.EndpointOwnerMismatch, "the browser process or its endpoint changed; a new approval is needed").WithCause(err)
	}
	for attempt := 1; ; attempt++ {
		if _, err := c.fire(ctx, Dial); err != nil {
			return Result{}, err
		}
		if c.m.State() == Exhausted {
			return Result{}, fsm.Refusef(fsm.ReconnectExhausted, "%d connection attempts failed", MaxAttempts)
		}
		derr := c.Hooks.Dial(ctx, attempt)
		switch {
		case derr == nil:
			if _, err := c.fire(ctx, Connected); err != nil {
				return Result{}, err
			}
			if _, err := c.fire(ctx, Invalidate); err != nil {
				return Result{}, err
			}
			gen := c.Gens.Advance()
			c.Hooks.Invalidate(gen)
			if _, err := c.fire(ctx, ReopenGates); err != nil {
				return Result{}, err
			}
			c.Hooks.ReopenGates()
			if _, err := c.fire(ctx, Rebind); err != nil {
				return Result{}, err
			}
			return Result{Generation: gen, CapabilitiesInvalidated: true, Attempts: attempt}, nil
		case errors.Is(derr, ErrDismissed):
			c.fire(ctx, PromptDismissed)
			c.Hooks.RevokeGrant()
			return Result{}, fsm.Refuse(fsm.ConsentRevoked, "the person dismissed the browser's prompt; the grant is revoked").WithCause(derr)
		case ctx.Err() != nil:
			return Result{}, c.interrupted(ctx)
		}
		if _, err := c.fire(ctx, DialFailed); err != nil {
			return Result{}, err
		}
		if attempt < len(retryDelay) {
			t := time.NewTimer(retryDelay[attempt])
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return Result{}, c.interrupted(ctx)
			}
		}
	}
}

// terminalRefusal explains why a reconnect cannot start.
func (c *Coordinator) terminalRefusal(err error) error {
	switch c.m.State() {
	case Exhausted:
		return fsm.Refuse(fsm.ReconnectExhausted, "the reconnect budget for this attachment is spent; attach again").WithCause(err)
	case Revoked:
		return fsm.Refuse(fsm.ConsentRevoked, "the grant was revoked; a new approval is needed").WithCause(err)
	case Lost:
		return fsm.Refuse(fsm.EndpointOwnerMismatch, "the browser changed; attach again").WithCause(err)
	}
	return fsm.Refuse(fsm.AttachmentLost, "this attachment has ended").WithCause(err)
}

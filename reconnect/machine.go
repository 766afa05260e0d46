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

// Hooks are the Runner's side of the effects. Each is called by the flight's
// leader only, from inside the effect the machine returned.
type Hooks struct {
	CloseGates func()
	// Revalidate re-proves process, profile, endpoint owner and grant
	// before anything is dialed.
	Revalidate func(ctx context.Context) (sameProcess bool, err error)
	// Dial opens one browser-level socket for attempt (1-based), reporting
	// the browser's prompt through prompt while the handshake is held.
	Dial        func(ctx context.Context, attempt int, prompt Prompt) (Dialed, error)
	Invalidate  func(gen Generation)
	ReopenGates func()
	RevokeGrant func()
}

// Dialed is a socket whose handshake completed, not yet the browser's
// connection.
type Dialed struct {
	// OwnerReproved reports that the endpoint's listener, read again after
	// the handshake, is still the approved process (PID and start time): a
	// PID or port reused since the loss is refused.
	OwnerReproved bool
	Adopt         func() // makes it the browser's connection
	Close         func() // closes it unused
}

// Prompt is the reconnect machine's side of the browser's consent prompt
// during one attempt: a Dial hook reports what its ConsentUI adapter sees
// through it, and presses only through it.
type Prompt interface {
	// Watching reports whether the attempt still waits for its first look
	// at the prompt: after one observation nothing is observed or pressed
	// again in this attempt.
	Watching() bool
	// Observed records the look. With exactly one proven candidate the
	// machine takes the attempt's one press and runs press as its effect,
	// returning press's error; otherwise it refuses with
	// browser_wrong_target_refused and the hook must end the attempt.
	Observed(ctx context.Context, exact bool, press func(context.Context) error) error
}

// Result is what a reconnect reports.
type Result struct {
	Generation              Generation `json:"generation"`
	CapabilitiesInvalidated bool       `json:"capabilities_invalidated"`
	Attempts                int        `json:"attempts"`
}

// DefaultDeadline bounds one whole reconnect transition.
const DefaultDeadline = 30 * time.Second

// retryDelay is the pause after a failed attempt (indexed by the attempts
// made); it is bounded by the transition's deadline.
var retryDelay = []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}

// Coordinator owns the reconnect machine of one browser: one leader at a
// time, concurrent requests join the running flight. Safe for concurrent use.
type Coordinator struct {
	Hooks    Hooks
	Gens     *Generations
	Deadline time.Duration // zero means DefaultDeadline

	owner *fsm.Owner[State, Trigger, Facts]

	mu     sync.Mutex // mu guards flight and serializes starting one
	flight *flight

	wg sync.WaitGroup // the flight goroutine

	// Set and read only by the running flight's effects.
	dialed Dialed
}

type flight struct {
	done   chan struct{}
	cancel context.CancelCauseFunc // with errSessionEnded when the session ends
	res    Result
	err    error
	joined int
}

// Why a flight's context ended: the interruption it stands for is read
// from its cause, not from a flag beside the machine.
var (
	errSessionEnded = errors.New("reconnect: the owning session ended")
	errDeadline     = errors.New("reconnect: the transition's deadline passed")
)

// NewCoordinator returns a coordinator in the ready state.
func NewCoordinator(h Hooks, gens *Generations) *Coordinator {
	c := &Coordinator{Hooks: h, Gens: gens}
	c.owner = fsm.NewOwner(Spec, fsm.Effects[State, Trigger]{
		EffectLead:        c.lead,
		EffectCloseGates:  c.closeGates,
		EffectDial:        c.dial,
		EffectPress:       fsm.Takes(c.pressOnce),
		EffectRetry:       c.awaitRetry,
		EffectAdopt:       c.adopt,
		EffectClose:       c.closePending,
		EffectInvalidate:  c.invalidate,
		EffectReopenGates: c.reopenGates,
		EffectRevokeGrant: c.revokeGrant,
	})
	return c
}

// State returns the machine's state.
func (c *Coordinator) State() State { return c.owner.State() }

// Trace returns the machine's latest transitions.
func (c *Coordinator) Trace() []fsm.Record { return c.owner.Trace() }

// AttemptsLeft returns how many connection attempts the current or next
// flight has left.
func (c *Coordinator) AttemptsLeft() int {
	switch c.owner.State() {
	case Ready, ReadyForRebind:
		return MaxAttempts
	case Exhausted, Revoked, Lost, Cancelled, Ambiguous:
		return 0
	}
	return MaxAttempts - c.owner.Counter("attempts")
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
// or for ctx. The flight outlives every caller's ctx (the leader's too):
// only its deadline and Close end it. Every caller gets the same result.
// After Close the machine is cancelled, which takes no socket_lost.
func (c *Coordinator) Reconnect(ctx context.Context) (Result, error) {
	c.mu.Lock()
	f := c.flight
	if f != nil {
		f.joined++
	} else {
		// lead_reconnect starts the flight (c.mu is held for it).
		if _, err := c.owner.Fire(ctx, SocketLost); err != nil {
			c.mu.Unlock()
			return Result{}, c.terminalRefusal(err)
		}
		f = c.flight
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.res, f.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("reconnect: waiting for the flight: %w", ctx.Err())
	}
}

// Close ends the owning session: a running flight is cancelled (it ends in
// cancelled) and waited for; a machine at rest moves to cancelled, so later
// requests are refused by the machine. Safe to call twice.
func (c *Coordinator) Close() {
	for {
		c.mu.Lock()
		f := c.flight
		if f == nil {
			if c.owner.Permitted(SessionEnded) {
				if _, err := c.owner.Fire(context.Background(), SessionEnded); err != nil {
					panic(fmt.Sprintf("reconnect: session end in %s: %v", c.owner.State(), err)) // Permitted said it takes it
				}
			}
			c.mu.Unlock()
			break
		}
		f.cancel(errSessionEnded)
		c.mu.Unlock()
		<-f.done // a reconnect may start another flight meanwhile: look again
	}
	c.wg.Wait()
}

// leaderNext is the trigger the leader fires where the machine rests
// inside a flight without an effect to answer for it.
var leaderNext = map[State]Trigger{
	Singleflight: CloseGates,
	Revalidated:  Dial,
	Dismissed:    Revoke,
}

// run drives the machine from reconnect_singleflight to a rest: it fires,
// stops on a refusal, and runs only the effects the machine returns.
func (c *Coordinator) run(ctx context.Context) (Result, error) {
	c.setCause(nil)
	if _, err := c.owner.Run(ctx, leaderNext, interruption); err != nil {
		return Result{}, err
	}
	return c.outcome(ctx)
}

// setCause states why the flight ends where it will, in the machine's facts.
func (c *Coordinator) setCause(err error) { c.owner.SetFacts(func(f *Facts) { f.Cause = err }) }

// outcome reads the flight's result from the state it ended in and the
// cause its facts hold.
func (c *Coordinator) outcome(ctx context.Context) (Result, error) {
	cause := c.owner.Facts().Cause
	switch c.owner.State() {
	case ReadyForRebind:
		return Result{Generation: c.Gens.Current(), CapabilitiesInvalidated: true, Attempts: c.owner.Counter("attempts")}, nil
	case Lost:
		return Result{}, fsm.Refuse(fsm.EndpointOwnerMismatch, "the browser process or its endpoint changed; a new approval is needed").WithCause(cause)
	case Exhausted:
		if ctx.Err() != nil {
			return Result{}, fsm.Refuse(fsm.ReconnectExhausted, "the reconnect deadline passed").WithCause(ctx.Err())
		}
		return Result{}, fsm.Refusef(fsm.ReconnectExhausted, "%d connection attempts failed", MaxAttempts).WithCause(cause)
	case Revoked:
		return Result{}, fsm.Refuse(fsm.ConsentRevoked, "the person dismissed the browser's prompt; the grant is revoked").WithCause(cause)
	case Ambiguous:
		if _, ok := fsm.AsRefusal(cause); ok {
			return Result{}, cause
		}
		return Result{}, fsm.Refuse(fsm.WrongTargetRefused, "the browser's consent prompt could not be pressed exactly; answer it yourself, then reconnect").WithCause(cause)
	case Cancelled:
		return Result{}, fsm.Refuse(fsm.AttachmentLost, "the session that owned this browser ended during reconnect")
	}
	return Result{}, fmt.Errorf("reconnect: the flight stopped in %s", c.owner.State())
}

// interruption is the trigger an ended flight context stands for, read
// from its cause: Close's, or the deadline's.
func interruption(cause error) Trigger {
	if errors.Is(cause, errSessionEnded) {
		return SessionEnded
	}
	return DeadlineExpired
}

// terminalRefusal explains why a reconnect cannot start.
func (c *Coordinator) terminalRefusal(err error) error {
	switch c.owner.State() {
	case Exhausted:
		return fsm.Refuse(fsm.ReconnectExhausted, "the reconnect budget for this attachment is spent; attach again").WithCause(err)
	case Revoked:
		return fsm.Refuse(fsm.ConsentRevoked, "the grant was revoked; a new approval is needed").WithCause(err)
	case Lost:
		return fsm.Refuse(fsm.EndpointOwnerMismatch, "the browser changed; attach again").WithCause(err)
	case Ambiguous:
		return fsm.Refuse(fsm.WrongTargetRefused, "the browser's prompt could not be pressed exactly; attach again").WithCause(err)
	case Cancelled:
		return fsm.Refuse(fsm.AttachmentLost, "the session that owned this browser ended").WithCause(err)
	}
	return fsm.Refuse(fsm.AttachmentLost, "this attachment has ended").WithCause(err)
}

// The effects below run only through the owner's table.

// lead starts the flight; Reconnect holds c.mu around it.
func (c *Coordinator) lead(ctx context.Context, _ fsm.Step[State, Trigger]) (Trigger, error) {
	deadline := c.Deadline
	if deadline == 0 {
		deadline = DefaultDeadline
	}
	// The flight outlives the caller that started it: joiners wait on it.
	sctx, end := context.WithCancelCause(context.WithoutCancel(ctx))
	fctx, cancel := context.WithTimeoutCause(sctx, deadline, errDeadline)
	f := &flight{done: make(chan struct{}), cancel: end}
	c.flight = f
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer end(nil)
		defer cancel()
		res, err := c.run(fctx)
		c.mu.Lock()
		c.flight = nil
		c.mu.Unlock()
		f.res, f.err = res, err
		close(f.done)
	}()
	return "", nil
}

// closeGates closes every gate, then does the work of
// mutation_gates_closed: re-prove process, profile, endpoint and grant.
func (c *Coordinator) closeGates(ctx context.Context, _ fsm.Step[State, Trigger]) (Trigger, error) {
	c.Hooks.CloseGates()
	if ctx.Err() != nil {
		return interruption(context.Cause(ctx)), nil
	}
	same, err := c.Hooks.Revalidate(ctx)
	if ctx.Err() != nil {
		return interruption(context.Cause(ctx)), nil
	}
	c.owner.SetFacts(func(f *Facts) { f.SameProcess, f.Cause = same && err == nil, err })
	return Revalidate, nil
}

func (c *Coordinator) dial(ctx context.Context, _ fsm.Step[State, Trigger]) (Trigger, error) {
	d, err := c.Hooks.Dial(ctx, c.owner.Counter("attempts"), attemptPrompt{c})
	if err == nil {
		c.dialed = d
		c.owner.SetFacts(func(f *Facts) { f.OwnerReproved = d.OwnerReproved })
		return Connected, nil
	}
	c.setCause(err)
	if r, ok := fsm.AsRefusal(err); ok && r.Code == fsm.WrongTargetRefused {
		if c.owner.State() == Ambiguous {
			return "", nil
		}
		return PromptUnclear, nil
	}
	switch {
	case errors.Is(err, ErrDismissed):
		return PromptDismissed, nil
	case ctx.Err() != nil:
		return interruption(context.Cause(ctx)), nil
	}
	return DialFailed, nil
}

// pressOnce is press_consent: the press the adapter handed to Observed,
// run as the machine's effect.
func (c *Coordinator) pressOnce(ctx context.Context, _ fsm.Step[State, Trigger], press func(context.Context) error) (Trigger, error) {
	return "", press(ctx)
}

func (c *Coordinator) awaitRetry(ctx context.Context, _ fsm.Step[State, Trigger]) (Trigger, error) {
	if made := c.owner.Counter("attempts"); made < len(retryDelay) {
		t := time.NewTimer(retryDelay[made])
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return interruption(context.Cause(ctx)), nil
		}
	}
	return Dial, nil
}

func (c *Coordinator) adopt(context.Context, fsm.Step[State, Trigger]) (Trigger, error) {
	c.dialed.Adopt()
	c.dialed = Dialed{}
	return Invalidate, nil
}

func (c *Coordinator) closePending(context.Context, fsm.Step[State, Trigger]) (Trigger, error) {
	c.dialed.Close()
	c.dialed = Dialed{}
	c.setCause(errors.New("the endpoint's owner changed while the socket was dialed"))
	return "", nil
}

func (c *Coordinator) invalidate(context.Context, fsm.Step[State, Trigger]) (Trigger, error) {
	c.Hooks.Invalidate(c.Gens.Advance())
	return ReopenGates, nil
}

func (c *Coordinator) reopenGates(context.Context, fsm.Step[State, Trigger]) (Trigger, error) {
	c.Hooks.ReopenGates()
	return Rebind, nil
}

func (c *Coordinator) revokeGrant(context.Context, fsm.Step[State, Trigger]) (Trigger, error) {
	c.Hooks.RevokeGrant()
	return "", nil
}

// attemptPrompt is the running attempt's Prompt.
type attemptPrompt struct{ c *Coordinator }

func (p attemptPrompt) Watching() bool { return p.c.owner.State() == ConnectingPending }

func (p attemptPrompt) Observed(ctx context.Context, exact bool, press func(context.Context) error) error {
	c := p.c
	c.owner.SetFacts(func(f *Facts) { f.ExactCandidate = exact })
	if _, err := c.owner.Fire(ctx, PromptObserved); err != nil {
		return err
	}
	if c.owner.State() == Ambiguous {
		return fsm.Refuse(fsm.WrongTargetRefused, "the browser's consent prompt could not be identified exactly (a decoy, several prompts, or a structure or language webcodex does not know); answer it yourself, then reconnect")
	}
	_, err := fsm.FireWith(ctx, c.owner, Press, press)
	return err
}

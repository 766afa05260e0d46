package runner

import (
	"context"
	"errors"
	"time"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/fsm"
)

// Deadlines. Every call ends in an answer the client receives: a result or
// a typed refusal (timeout, outcome_unknown), never a client-side
// "deadline exceeded".
const (
	// DefaultCallBound bounds one call that reaches a browser, whatever its
	// client allows. It is shorter than every client's own deadline (the
	// CLI's 60 s, an MCP tool's 90 s), and a client's declared deadline
	// (localapi.DeadlineHeader) shortens it further.
	DefaultCallBound = 45 * time.Second
	// answerReserve is kept from a call's deadline to answer: classify the
	// failure, recover a wedged page (surface.UnwedgeBound), read the
	// origin for the audit record (2 s at most) and write the reply.
	answerReserve = surface.UnwedgeBound + 3*time.Second
	// statusBound bounds status and pages whatever the browsers do: a page
	// that does not answer within it is marked, never left out.
	statusBound = 2 * time.Second
)

// callBound is this Runner's bound on one call.
func (r *Runner) callBound() time.Duration {
	if r.opts.CallBound > 0 {
		return r.opts.CallBound
	}
	return DefaultCallBound
}

// bound returns ctx bounded to most, or less when the caller's own deadline
// is nearer, keeping answerReserve of it to answer in.
func bound(ctx context.Context, most time.Duration) (context.Context, context.CancelFunc) {
	d := most
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		d = min(d, left-answerReserve)
		if d <= 0 {
			d = left / 2 // a client that allows less than the reserve: answer in time anyway
		}
	}
	return context.WithTimeout(ctx, d)
}

// call bounds one call on a page (or "" for none) and returns the bounded
// context and the function that settles the call's error: a deadline that
// passed ends in a typed refusal saying what was waited for, and a page
// whose main thread no longer answers is recovered (surface.Page.Unwedge)
// before the answer, so the next call on the tab works.
func (r *Runner) call(ctx context.Context, page, what string, most time.Duration) (context.Context, func(error) error) {
	bctx, cancel := bound(ctx, most)
	return bctx, func(err error) error {
		defer cancel()
		if err == nil || !errors.Is(bctx.Err(), context.DeadlineExceeded) {
			return err
		}
		ref, isRefusal := fsm.AsRefusal(err)
		if isRefusal && ref.Code != fsm.Timeout && ref.Code != fsm.OutcomeUnknown {
			return err
		}
		if page != "" && !errors.Is(err, surface.ErrRecoveryTried) {
			r.unwedge(ctx, page)
		}
		if isRefusal {
			return err
		}
		return fsm.Refusef(fsm.Timeout, "%s did not finish within the call's bound", what).WithCause(err)
	}
}

// unwedge recovers the page id when its main thread no longer answers.
func (r *Runner) unwedge(ctx context.Context, id string) {
	r.mu.Lock()
	p := r.pages[id]
	r.mu.Unlock()
	if p == nil || p.surf == nil {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), surface.UnwedgeBound)
	defer cancel()
	if terminated, _ := p.surf.Unwedge(uctx); terminated {
		r.logf("runner: page %s: a script that did not yield was terminated", id)
	}
}

package surface

import (
	"context"
	"errors"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// Probe bounds.
const (
	// DefaultSettle bounds how long a probe waits for the page to settle.
	DefaultSettle = 3 * time.Second
	// settleQuiet is how long the DOM must stay unchanged to count as
	// settled.
	settleQuiet = 200 * time.Millisecond
)

// ProbeAction is the one action a probe performs: the caller's own
// action, typed by the caller (the probe does not name actions).
type ProbeAction struct {
	// Act performs the action once.
	Act func(ctx context.Context) (*ActionResult, error)
	// Settle bounds the wait for the page to settle; 0 means DefaultSettle.
	Settle time.Duration
}

// ProbeResult reports one action for diagnosing a UI: the document before
// and after, the action's own result or refusal, the console errors raised
// after it started, and whether the page settled (DOM quiet for 200 ms and
// no request in flight) within the bound.
type ProbeResult struct {
	Before          *DocIdentity  `json:"before"`
	After           *DocIdentity  `json:"after,omitempty"`
	DocumentChanged bool          `json:"documentChanged"`
	Action          *ActionResult `json:"action,omitempty"`
	Refusal         *fsm.Refusal  `json:"refusal,omitempty"`
	ConsoleErrors   []DiagEntry   `json:"consoleErrors"`
	// ConsoleDiscarded is diagnostic_events_discarded when the console log
	// dropped entries: the list above may then be incomplete.
	ConsoleDiscarded fsm.Code `json:"consoleDiscarded,omitempty"`
	Settled          bool     `json:"settled"`
	InFlight         int      `json:"inFlight"`
}

// Probe performs exactly one action and observes its effect. The action is
// never replayed; its refusal is part of the result, not an error. The
// error is for failures to observe (page closed, deadline).
//
// Under a Judge the main document is judged before the action, after it,
// and whenever the main frame commits a new document while the probe
// settles: a page that leaves for a denied origin ends the probe at once
// with the Judge's refusal and no result (the action was dispatched once,
// all the same). Console errors and requests in flight count only entries
// of allowed origins.
func (p *Page) Probe(ctx context.Context, a ProbeAction) (*ProbeResult, error) {
	if a.Act == nil {
		return nil, fsm.Refuse(fsm.InvalidArgument, "a probe needs its action")
	}
	if err := p.judgeMain(); err != nil {
		return nil, err
	}
	before, err := p.Identity(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.judge(before.URL); err != nil {
		return nil, err
	}
	out := &ProbeResult{Before: before, ConsoleErrors: []DiagEntry{}}
	cursor := p.diag.cursor()
	res, aerr := a.Act(ctx)
	if err := p.judgeMain(); err != nil {
		return nil, err // the action left for a denied origin
	}
	out.Action = res
	if aerr != nil {
		var r *fsm.Refusal
		if !errors.As(aerr, &r) {
			return out, aerr
		}
		out.Refusal = r
	}
	settle := a.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	if res == nil || res.Dialog == nil {
		if out.Settled, err = p.settle(ctx, settle); err != nil {
			return nil, err
		}
	}
	if id, err := p.Identity(ctx); err == nil {
		if err := p.judge(id.URL); err != nil {
			return nil, err
		}
		out.After = id
		out.DocumentChanged = id.Document != before.Document
	} else if p.isGone() {
		return out, err
	}
	c := p.Console(DiagOptions{Since: cursor, ErrorsOnly: true})
	out.ConsoleErrors = c.Entries
	out.ConsoleDiscarded = c.Discarded
	out.InFlight, _ = p.diag.inFlight(p.opts.Judge)
	if err := p.judgeMain(); err != nil {
		return nil, err
	}
	return out, nil
}

// settle waits, up to max, for a finished load, a quiet DOM and no request
// of an allowed origin in flight. It returns the Judge's refusal as soon as
// the main frame commits a document of a denied origin, and never observes
// one: how such a page behaves cannot change how long a probe takes.
func (p *Page) settle(ctx context.Context, max time.Duration) (bool, error) {
	deadline := time.Now().Add(max)
	for i := 0; i < 100; i++ {
		if err := p.judgeMain(); err != nil {
			return false, err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 || p.live() != nil {
			return false, nil
		}
		p.mu.Lock()
		loadCh, loading, nav := p.loadCh, p.loading, p.mainNav
		p.mu.Unlock()
		if loading {
			if !waitChan(loadCh, deadline, ctx) {
				return false, nil
			}
			continue
		}
		w, err := p.mainWorld(ctx)
		if err != nil {
			return false, nil
		}
		if err := p.judgeMainWorld(ctx, w); err != nil {
			if errors.Is(err, errWorldGone) {
				continue
			}
			if errors.Is(err, errUnjudged) {
				return false, nil
			}
			return false, err // the Judge's refusal
		}
		cctx, cancel := context.WithTimeout(ctx, remaining+time.Second)
		r, err := invokeUntilNav(cctx, p, w, jsSettle, settleArgs{QuietMs: settleQuiet.Milliseconds(), MaxMs: remaining.Milliseconds()}, nav)
		cancel()
		if errors.Is(err, errWorldGone) || errors.Is(err, errMainNavigated) || r.Err == fsm.BindingStale {
			continue
		}
		if err != nil || !r.Settled {
			return false, nil
		}
		if n, _ := p.diag.inFlight(p.opts.Judge); n == 0 {
			return true, nil // quiet now, though the log may have dropped entries
		}
		p.diag.mu.Lock()
		changed := p.diag.changed
		p.diag.mu.Unlock()
		if !waitEither(changed, nav, deadline, ctx) {
			return false, nil
		}
	}
	return false, nil
}

// waitEither waits until a or b closes (true), or the deadline passes or
// ctx ends (false).
func waitEither(a, b <-chan struct{}, deadline time.Time, ctx context.Context) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-a:
		return true
	case <-b:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

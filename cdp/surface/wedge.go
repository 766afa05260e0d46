package surface

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
)

// Bounds of recovering a wedged page.
const (
	// wedgeProbe bounds the trivial evaluation that tells a busy main
	// thread from one that answers: it runs no page code.
	wedgeProbe = 1500 * time.Millisecond
	// terminateWait bounds Runtime.terminateExecution, which the browser
	// runs as an interrupt even while the script loops.
	terminateWait = 3 * time.Second
	// UnwedgeBound is the most Unwedge takes: a caller keeps this much of
	// its deadline to recover the page before it answers.
	UnwedgeBound = wedgeProbe + terminateWait
)

// Unwedge recovers a page whose main thread does not yield, after a call on
// it ran out of time: when a trivial evaluation does not answer within a
// short bound, the running script is terminated (Runtime.terminateExecution)
// so the next call on the tab works. It reports whether it terminated one.
//
// It terminates nothing on a page that answers, nor while a JavaScript
// dialog is open (the dialog, not a script, holds the page; it is the
// caller's to answer): Runtime.terminateExecution with no script running
// would end the next one instead.
func (p *Page) Unwedge(ctx context.Context) (bool, error) {
	if p.isGone() || p.Dialog() != nil {
		return false, nil
	}
	// Only a page whose browser answers is wedged by its script: when the
	// browser itself does not answer (stopped, overloaded), a terminate
	// would wait in its queue and end whatever script runs next. Both are
	// asked at once.
	browserErr := make(chan error, 1)
	go func() {
		bctx, cancel := context.WithTimeout(ctx, wedgeProbe)
		defer cancel()
		_, err := cdproto.Call(bctx, p.sess, browser.GetVersion, cdproto.Empty{})
		browserErr <- err
	}()
	pageAnswers := p.answers(ctx)
	if err := <-browserErr; err != nil {
		return false, fmt.Errorf("surface: the browser does not answer: %w", err)
	}
	if pageAnswers {
		return false, nil
	}
	tctx, cancel := context.WithTimeout(ctx, terminateWait)
	defer cancel()
	if _, err := cdproto.Call(tctx, p.sess, runtime.TerminateExecution, cdproto.Empty{}); err != nil {
		return false, fmt.Errorf("surface: terminate the page's script: %w", err)
	}
	return true, nil
}

// answers reports whether the page's main thread runs a trivial evaluation
// within wedgeProbe. An error reply is an answer too.
func (p *Page) answers(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, wedgeProbe)
	defer cancel()
	_, err := cdproto.Call(pctx, p.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "0", Silent: new(true)})
	return err == nil || pctx.Err() == nil
}

// ErrRecoveryTried is wrapped by the cause of a timeout refusal whose call
// already tried to recover the page (Unwedge): a caller need not again.
var ErrRecoveryTried = errors.New("surface: the page's recovery was tried")

// timedOut is the refusal for a call on the page that ran out of time
// waiting for what: the page is recovered first when it is wedged (see
// Unwedge), with a bound of its own, so the caller keeps UnwedgeBound of
// its deadline for this.
func (p *Page) timedOut(ctx context.Context, what string, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), UnwedgeBound)
	defer cancel()
	terminated, err := p.Unwedge(rctx)
	cause = fmt.Errorf("%w: %w", ErrRecoveryTried, cause)
	switch {
	case terminated:
		return fsm.Refusef(fsm.Timeout, "%s did not finish before the call's deadline; the page's script was terminated (Runtime.terminateExecution), so the tab answers again", what).WithCause(cause)
	case err != nil:
		return fsm.Refusef(fsm.Timeout, "%s did not finish before the call's deadline, and the browser does not answer", what).WithCause(cause)
	}
	return fsm.Refusef(fsm.Timeout, "%s did not finish before the call's deadline", what).WithCause(cause)
}

// tooLarge is the refusal for a reply the transport discarded because it
// was above the limit of one browser message, or nil when err is not one.
func tooLarge(what string, err error) error {
	tl, ok := errors.AsType[*cdp.InboundTooLargeError](err)
	if !ok {
		return nil
	}
	return fsm.Refusef(fsm.LimitExceeded, "%s was %d MiB, above the limit of %d MiB for one browser message, and was discarded; ask for less", what, tl.Size>>20, tl.Limit>>20).WithCause(err)
}

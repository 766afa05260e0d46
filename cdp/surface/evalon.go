package surface

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/webcodex/webcodex/fsm"
)

// EvaluateOn calls fn, a JavaScript function's source, with the target
// element as its argument, in the main world of the element's document
// (where the page's own scripts run), as Playwright evaluates on an
// element; its value is bounded as Evaluate's. The element must be in the
// main frame's document: a frame's document is not evaluated in. The
// document is admitted again afterwards, and a value read across a change
// is discarded.
func (p *Page) EvaluateOn(ctx context.Context, t Target, fn string) (*EvalResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	w, _, err := p.prepare(ctx, t, prepareArgs{Kind: "evaluate"})
	if err != nil {
		return nil, err
	}
	if w.frame != p.main || w.sess != p.sess {
		return nil, fsm.Refuse(fsm.InvalidArgument, "the element is inside a frame; evaluate on an element of the page's own document")
	}
	if err := p.admit(ctx, w); err != nil {
		return nil, p.readErr(ctx, err)
	}
	el, err := p.invokeObject(ctx, w, jsPendingElement, none{})
	if err != nil || el == nil || el.ObjectID == "" {
		if err == nil {
			err = errors.New("no element")
		}
		return nil, p.readErr(ctx, fmt.Errorf("surface: evaluate: %w", err))
	}
	defer p.release(ctx, w.sess, el.ObjectID)
	node, err := cdproto.Call(ctx, w.sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: el.ObjectID})
	if err != nil || node.Node == nil {
		if err == nil {
			err = errors.New("no node")
		}
		return nil, p.readErr(ctx, fmt.Errorf("surface: evaluate: %w", err))
	}
	// Without a context, DOM.resolveNode answers in the main world of the
	// node's frame: the page's own objects, as Playwright evaluates.
	main, err := cdproto.Call(ctx, w.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: node.Node.BackendNodeID, ObjectGroup: "webcodex-eval"})
	if err != nil || main.Object == nil || main.Object.ObjectID == "" {
		if err == nil {
			err = errors.New("no object")
		}
		return nil, p.readErr(ctx, fmt.Errorf("surface: evaluate: %w", err))
	}
	defer func() {
		_, _ = cdproto.Call(ctx, p.sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: "webcodex-eval"})
	}()
	res, err := cdproto.Call(ctx, w.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: main.Object.ObjectID, Arguments: []*runtime.CallArgument{{ObjectID: main.Object.ObjectID}},
		AwaitPromise: new(true), ObjectGroup: "webcodex-eval",
	})
	if err != nil {
		if r := tooLarge("the value (the function did run)", err); r != nil {
			return nil, r
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, p.timedOut(ctx, "the function", err)
		}
		if isContextGone(err) {
			return nil, fsm.Refuse(fsm.BindingStale, "the document was replaced before the function ran").WithCause(err)
		}
		if isProtocolError(err) {
			return nil, fsm.Refuse(fsm.InvalidArgument, "the browser refused the function: give a function's source, e.g. (element) => element.textContent").WithCause(err)
		}
		return nil, p.dispatchErr(ctx, err)
	}
	out, err := p.evalValue(ctx, runtime.EvaluateResult{Result: res.Result, ExceptionDetails: res.ExceptionDetails})
	if err != nil {
		return nil, err
	}
	if err := p.admit(ctx, w); err != nil {
		if errors.Is(err, errWorldGone) {
			return nil, fsm.Refuse(fsm.BindingStale, "the document was replaced while the function ran (it did run); its value is discarded").WithCause(err)
		}
		return nil, p.readErr(ctx, err)
	}
	return out, nil
}

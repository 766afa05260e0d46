package surface

import (
	"context"
	"errors"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"

	"github.com/webcodex/webcodex/fsm"
)

// dragHandover bounds the wait for Chromium to hand over a drag the page
// has started (Input.dragIntercepted), once the page says it started one.
const dragHandover = 5 * time.Second

// dragOps are the operations a drag allows: copy, link and move.
const dragOps = 1 | 2 | 16

// dragStateArgs ends the watch (done) or only reads it.
type dragStateArgs struct {
	Done bool `json:"done,omitempty"`
}

type dragStateResult struct {
	pageErr
	Started bool `json:"started"`
	Dropped bool `json:"dropped"`
}

// Drag drags from the element from to the element to with real mouse
// input, as a person does: the button is pressed over from, the mouse
// moves to to and is released there. Both elements are found, scrolled
// into view and hit tested, and both points are judged like every pointer
// input (over a frame of a refused origin nothing is sent), before the
// button is pressed. When the page starts an HTML drag (its dragstart is
// not cancelled), Chromium hands the drag over (Input.setInterceptDrags)
// and it is delivered as Chromium's own drag events (dragenter, dragover,
// drop, dragend); Dropped then says whether the page took the drop. A
// drag the page implements with mouse events gets those events only.
func (p *Page) Drag(ctx context.Context, from, to Target) (*ActionResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	// The end first: refused before anything is sent, and in view.
	if _, err := p.dragPoint(ctx, to); err != nil {
		return nil, err
	}
	wf, pf, err := p.prepare(ctx, from, prepareArgs{Kind: "click"})
	if err != nil {
		return nil, err
	}
	if err := p.pointerAllowedAfter(ctx, pf.X, pf.Y, pf); err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "drag", Role: pf.Role, Tag: pf.Tag, Rebound: pf.Rebound}
	mark = p.withNav(mark, wf, pf)
	d, err := p.dispatch(ctx, func(ctx context.Context) error {
		if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, pf.X, pf.Y, input.MouseButtonNone, 0, 0); err != nil {
			return err
		}
		return p.mouse(ctx, input.DispatchMouseEventTypeMousePressed, pf.X, pf.Y, input.MouseButtonLeft, 1, 1)
	})
	if out.Dialog = d; err != nil || d != nil {
		return out, p.inputErr(ctx, err)
	}
	// The button is down: the end is found again (the page may have moved
	// it) and judged again; a refusal now releases the button where it was
	// pressed.
	pt, err := p.dragPoint(ctx, to)
	if err != nil {
		p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, pf.X, pf.Y, input.MouseButtonLeft, 0, 1)
		return nil, err
	}
	if out.Dropped, err = p.dragTo(ctx, wf, pt); err != nil {
		return out, err
	}
	p.mu.Lock()
	p.ptr = pointerState{x: pt.X, y: pt.Y}
	p.mu.Unlock()
	p.collectEffects(ctx, mark, out)
	return out, nil
}

// dragPoint finds the end of a drag, in view and hit tested, and judges
// the point.
func (p *Page) dragPoint(ctx context.Context, t Target) (*prepResult, error) {
	_, pt, err := p.prepare(ctx, t, prepareArgs{Kind: "click"})
	if err != nil {
		return nil, err
	}
	if err := p.pointerAllowedAfter(ctx, pt.X, pt.Y, pt); err != nil {
		return nil, err
	}
	return pt, nil
}

// inputErr is the error of input that was dispatched: a refusal as it is,
// anything else as the dispatch failure it is.
func (p *Page) inputErr(ctx context.Context, err error) error {
	var r *fsm.Refusal
	if err == nil || errors.As(err, &r) {
		return err
	}
	return p.dispatchErr(ctx, err)
}

// dragTo moves the pressed mouse to pt with drags intercepted. When the
// page (watched in wf, the start's world) started an HTML drag, the drag
// Chromium handed over is entered, moved over and dropped at pt, and the
// result says whether the page took the drop; otherwise the button is
// released at pt (nil: no HTML drag).
func (p *Page) dragTo(ctx context.Context, wf *world, pt *prepResult) (*bool, error) {
	if _, err := invoke(ctx, p, wf, jsArmDrag, none{}); err != nil {
		return nil, p.readErr(ctx, err)
	}
	evs, stop := p.sess.Events(input.DragIntercepted.Method)
	defer stop()
	if _, err := cdproto.Call(ctx, p.sess, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: true}); err != nil {
		return nil, p.dispatchErr(ctx, err)
	}
	moved := p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, pt.X, pt.Y, input.MouseButtonLeft, 1, 0)
	st, serr := invoke(ctx, p, wf, jsDragState, dragStateArgs{})
	var data *input.DragData
	if moved == nil && serr == nil && st.Started {
		data = awaitDrag(ctx, evs)
	}
	// Off again whatever happened: later drags are the page's own.
	cdproto.Call(context.WithoutCancel(ctx), p.sess, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: false})
	if moved != nil {
		return nil, p.dispatchErr(ctx, moved)
	}
	if data == nil {
		invoke(ctx, p, wf, jsDragState, dragStateArgs{Done: true})
		if serr == nil && st.Started {
			cdproto.Call(ctx, p.sess, input.CancelDragging, cdproto.Empty{})
		}
		if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, pt.X, pt.Y, input.MouseButtonLeft, 0, 1); err != nil {
			return nil, p.dispatchErr(ctx, err)
		}
		if serr == nil && st.Started {
			return nil, fsm.Refuse(fsm.OutcomeUnknown, "the page started a drag but Chromium did not hand it over in time; it was cancelled and the button released")
		}
		return nil, nil
	}
	data.DragOperationsMask = dragOps
	if err := p.dropData(ctx, pt.X, pt.Y, data); err != nil {
		return nil, p.dispatchErr(ctx, err)
	}
	end, err := invoke(ctx, p, wf, jsDragState, dragStateArgs{Done: true})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return &end.Dropped, nil
}

// awaitDrag waits for the drag Chromium intercepted, within dragHandover.
func awaitDrag(ctx context.Context, evs <-chan any) *input.DragData {
	t := time.NewTimer(dragHandover)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				return nil
			}
			if di, ok := ev.(*input.EventDragIntercepted); ok && di.Data != nil {
				return di.Data
			}
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// dropData enters, moves over and drops data at (x, y): Chromium delivers
// dragenter, dragover and, when the page accepts it, drop (and dragend to
// the drag's source).
func (p *Page) dropData(ctx context.Context, x, y float64, data *input.DragData) error {
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := cdproto.Call(ctx, p.sess, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

package surface

import (
	"context"
	"errors"
	"math"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"

	"github.com/webcodex/webcodex/fsm"
)

// Bounds of raw pointer input (Playwright's vision tools).
const (
	// MaxPointerCoord bounds a coordinate, in CSS pixels, either way.
	MaxPointerCoord = 100000
	// MaxClickCount bounds the clicks of one pointer click.
	MaxClickCount = 3
	// MaxClickDelay bounds the wait between a press and its release.
	MaxClickDelay = 5 * time.Second
	// MaxWheelDelta bounds one wheel step, in CSS pixels, either way.
	MaxWheelDelta = 100000
)

// Pointer is raw pointer input at viewport coordinates (CSS pixels), as
// Playwright's vision tools send it. Kind is move, click, drag, down, up or
// wheel; down, up and wheel act where the pointer is (where the last move,
// click or drag left it; 0,0 at first).
type Pointer struct {
	Kind string  `json:"kind"`
	X    float64 `json:"x,omitempty"`
	Y    float64 `json:"y,omitempty"`
	// EndX and EndY are where a drag ends.
	EndX float64 `json:"endX,omitempty"`
	EndY float64 `json:"endY,omitempty"`
	// Button is left (the default), right or middle.
	Button string `json:"button,omitempty"`
	// ClickCount is the number of clicks, 1 (the default) to MaxClickCount.
	ClickCount int `json:"clickCount,omitempty"`
	// DelayMS is the wait between each press and its release.
	DelayMS int `json:"delayMs,omitempty"`
	// DeltaX and DeltaY are a wheel step.
	DeltaX float64 `json:"deltaX,omitempty"`
	DeltaY float64 `json:"deltaY,omitempty"`
}

// pointerState is where the pointer is and which buttons it holds, as this
// Page last sent them (Chromium keeps its own; this is what down, up and
// wheel need to send theirs at the same point).
type pointerState struct {
	x, y    float64
	buttons int64
}

var pointerButtons = map[string]struct {
	btn input.MouseButton
	bit int64
}{
	"left":   {input.MouseButtonLeft, 1},
	"right":  {input.MouseButtonRight, 2},
	"middle": {input.MouseButtonMiddle, 4},
}

// check refuses input that is out of bounds, naming the argument.
func (o Pointer) check() error {
	coord := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxPointerCoord {
			return fsm.Refusef(fsm.InvalidArgument, "%s is a coordinate in CSS pixels, at most %d either way", name, MaxPointerCoord)
		}
		return nil
	}
	switch o.Kind {
	case "move", "click":
		if err := coord("x", o.X); err != nil {
			return err
		}
		if err := coord("y", o.Y); err != nil {
			return err
		}
	case "drag":
		for _, c := range []struct {
			n string
			v float64
		}{{"startX", o.X}, {"startY", o.Y}, {"endX", o.EndX}, {"endY", o.EndY}} {
			if err := coord(c.n, c.v); err != nil {
				return err
			}
		}
	case "down", "up":
	case "wheel":
		for _, c := range []struct {
			n string
			v float64
		}{{"deltaX", o.DeltaX}, {"deltaY", o.DeltaY}} {
			if math.IsNaN(c.v) || math.IsInf(c.v, 0) || math.Abs(c.v) > MaxWheelDelta {
				return fsm.Refusef(fsm.InvalidArgument, "%s is at most %d pixels either way", c.n, MaxWheelDelta)
			}
		}
	default:
		return fsm.Refusef(fsm.InvalidArgument, "pointer kind is move, click, drag, down, up or wheel, not %q", capString(o.Kind, 20))
	}
	if _, ok := pointerButtons[o.button()]; !ok {
		return fsm.Refuse(fsm.InvalidArgument, "button is left, right or middle")
	}
	if o.ClickCount < 0 || o.ClickCount > MaxClickCount {
		return fsm.Refusef(fsm.InvalidArgument, "clickCount is 1 to %d", MaxClickCount)
	}
	if o.DelayMS < 0 || time.Duration(o.DelayMS)*time.Millisecond > MaxClickDelay {
		return fsm.Refusef(fsm.InvalidArgument, "delay is 0 to %d milliseconds", MaxClickDelay.Milliseconds())
	}
	return nil
}

func (o Pointer) button() string {
	if o.Button == "" {
		return "left"
	}
	return o.Button
}

// PointerAt sends raw pointer input. Every point the input touches is hit
// tested first, like every pointer input: a point over a frame the Judge
// refuses is refused (origin_denied) and nothing is sent. A drag judges its
// start and its end before it presses.
func (p *Page) PointerAt(ctx context.Context, o Pointer) (*ActionResult, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	p.mu.Lock()
	at := p.ptr
	p.mu.Unlock()
	if o.Kind == "down" || o.Kind == "up" || o.Kind == "wheel" {
		o.X, o.Y = at.x, at.y
	}
	if err := p.pointerAllowed(ctx, o.X, o.Y); err != nil {
		return nil, err
	}
	if o.Kind == "drag" {
		if err := p.pointerAllowed(ctx, o.EndX, o.EndY); err != nil {
			return nil, err
		}
	}
	out := &ActionResult{Action: "mouse_" + o.Kind}
	mark := p.withNavRead(ctx, p.effectMark())
	b := pointerButtons[o.button()]
	delay := time.Duration(o.DelayMS) * time.Millisecond
	end := at
	d, err := p.dispatch(ctx, func(ctx context.Context) error {
		switch o.Kind {
		case "move":
			end.x, end.y = o.X, o.Y
			return p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, o.X, o.Y, input.MouseButtonNone, end.buttons, 0)
		case "click":
			// A press and a release per click with the click's count, so
			// the page sees click and dblclick. No separate move first (as
			// clickAt): Chromium aligns moves to animation frames, and a
			// press at a new point fires a move's boundary events itself.
			end.x, end.y = o.X, o.Y
			for n := int64(1); n <= int64(max(o.ClickCount, 1)); n++ {
				if err := p.mouse(ctx, input.DispatchMouseEventTypeMousePressed, o.X, o.Y, b.btn, end.buttons|b.bit, n); err != nil {
					return err
				}
				if err := pause(ctx, delay); err != nil {
					return err
				}
				if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, o.X, o.Y, b.btn, end.buttons&^b.bit, n); err != nil {
					return err
				}
			}
			return nil
		case "drag":
			end.x, end.y = o.EndX, o.EndY
			if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, o.X, o.Y, input.MouseButtonNone, at.buttons, 0); err != nil {
				return err
			}
			if err := p.mouse(ctx, input.DispatchMouseEventTypeMousePressed, o.X, o.Y, input.MouseButtonLeft, at.buttons|1, 1); err != nil {
				return err
			}
			if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, o.EndX, o.EndY, input.MouseButtonLeft, at.buttons|1, 0); err != nil {
				return err
			}
			return p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, o.EndX, o.EndY, input.MouseButtonLeft, at.buttons&^1, 1)
		case "down":
			end.buttons |= b.bit
			return p.mouse(ctx, input.DispatchMouseEventTypeMousePressed, o.X, o.Y, b.btn, end.buttons, 1)
		case "up":
			end.buttons &^= b.bit
			return p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, o.X, o.Y, b.btn, end.buttons, 1)
		case "wheel":
			return p.wheel(ctx, o.X, o.Y, o.DeltaX, o.DeltaY, end.buttons)
		}
		return nil
	})
	out.Dialog = d
	if err != nil {
		var r *fsm.Refusal
		if !errors.As(err, &r) {
			err = p.dispatchErr(ctx, err)
		}
		return out, err
	}
	// The input was sent (or is held by a dialog and will be): the pointer
	// is where it left it.
	p.mu.Lock()
	p.ptr = end
	p.mu.Unlock()
	p.collectEffects(ctx, mark, out)
	return out, nil
}

func (p *Page) wheel(ctx context.Context, x, y, dx, dy float64, buttons int64) error {
	_, err := cdproto.Call(ctx, p.sess, dispatchWheel, wheelParams{
		Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, Buttons: buttons, DeltaX: dx, DeltaY: dy,
	})
	return err
}

// wheelParams are Input.dispatchMouseEvent's parameters for a wheel event,
// which needs both deltas even when one is zero (cdproto omits zeros).
type wheelParams struct {
	Type    input.DispatchMouseEventType `json:"type"`
	X       float64                      `json:"x"`
	Y       float64                      `json:"y"`
	Buttons int64                        `json:"buttons,omitempty"`
	DeltaX  float64                      `json:"deltaX"`
	DeltaY  float64                      `json:"deltaY"`
}

var dispatchWheel = cdproto.Command[wheelParams, cdproto.Empty]{Method: input.CommandDispatchMouseEvent}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package surface

import (
	"context"

	"github.com/webcodex/webcodex/fsm"
)

// Input reaches whatever document is under the pointer or holds the focus
// when the browser delivers it, not the document a target was found in. So
// right before each dispatch the surface asks the page where the input
// would land, as the browser would hit-test it: elementFromPoint (overlays
// and pointer-events included) or the focus chain (activeElement through
// shadow roots and frames). When that is a frame of another origin, the
// frame and every frame above it are judged; an allowed frame is entered
// and asked again (with the point translated into its viewport). Input that
// would land in a refused frame, or in a frame that cannot be named, is not
// sent. What remains is the time between this check and the browser's
// delivery, a few milliseconds in which a page could still move a frame or
// the focus; the check is repeated before every key stroke.

// pointerAllowed refuses pointer input at (x, y) of the page viewport that
// would land in a frame the Judge refuses.
func (p *Page) pointerAllowed(ctx context.Context, x, y float64) error {
	return p.pointerAllowedAfter(ctx, x, y, nil)
}

// pointerAllowedAfter is pointerAllowed right after prepare: when prepare
// has just admitted the main document (with nothing sent since), the check
// starts from that admission.
func (p *Page) pointerAllowedAfter(ctx context.Context, x, y float64, pre *prepResult) error {
	if p.opts.Judge == nil {
		return nil
	}
	var w *world
	var idx frameIndex
	if pre != nil && pre.admittedIn != nil && !pre.admittedIn.dead.Load() {
		w, idx = pre.admittedIn, pre.admitted
	} else {
		var err error
		if w, err = p.mainWorld(ctx); err != nil {
			return p.readErr(ctx, err)
		}
		if idx, err = p.admitIndex(ctx, w); err != nil {
			return p.readErr(ctx, err)
		}
	}
	for depth := 0; depth <= maxFrameDepth; depth++ {
		p.tagChildFramesIn(ctx, w, idx) // the main world's index, read by its admission
		idx = nil
		r, err := invoke(ctx, p, w, jsHitFrame, pointArgs{X: x, Y: y})
		if err != nil {
			return p.readErr(ctx, err)
		}
		if r.Err != "" {
			return p.readErr(ctx, errWorldGone)
		}
		if !r.Cross {
			return nil
		}
		if w, err = p.reachFrame(ctx, r.Key, "the pointer"); err != nil {
			return err
		}
		x, y = r.X, r.Y
	}
	return fsm.Refuse(fsm.OriginDenied, "the pointer is over frames nested too deep to judge")
}

// focusAllowed refuses key input while the focus is inside a frame the
// Judge refuses.
func (p *Page) focusAllowed(ctx context.Context) error {
	if p.opts.Judge == nil {
		return nil
	}
	w, err := p.mainWorld(ctx)
	if err != nil {
		return p.readErr(ctx, err)
	}
	idx, err := p.admitIndex(ctx, w)
	if err != nil {
		return p.readErr(ctx, err)
	}
	for depth := 0; depth <= maxFrameDepth; depth++ {
		p.tagChildFramesIn(ctx, w, idx) // the main world's index, read by its admission
		idx = nil
		r, err := invoke(ctx, p, w, jsFocusFrame, none{})
		if err != nil {
			return p.readErr(ctx, err)
		}
		if r.Err != "" {
			return p.readErr(ctx, errWorldGone)
		}
		if !r.Cross {
			return nil
		}
		if w, err = p.reachFrame(ctx, r.Key, "the focus"); err != nil {
			return err
		}
	}
	return fsm.Refuse(fsm.OriginDenied, "the focus is in frames nested too deep to judge")
}

// reachFrame judges the frame with key and returns our world in it; what
// names the input (the pointer, the focus) words the refusal of a frame
// that cannot be named.
func (p *Page) reachFrame(ctx context.Context, key, what string) (*world, error) {
	fid, ok := p.frameByKey(key)
	if key == "" || !ok {
		return nil, fsm.Refusef(fsm.OriginDenied, "%s is in a frame whose origin could not be established; nothing was sent", what)
	}
	w, err := p.frameWorld(ctx, fid)
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return w, nil
}

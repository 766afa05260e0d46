package surface

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"reflect"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/fsm"
)

// Screenshots mask frames of refused origins: the browser captures the page
// as it is painted, frames included, and the surface then paints the box of
// every frame the Judge refuses opaque mid-grey in the decoded image before
// encoding it again. Masking was chosen over refusing the screenshot so a
// page that embeds a refused advertisement or widget can still be seen.
//
// What is masked is decided from a layout sample taken in the page before
// and after the capture:
//
//   - every cross-origin <iframe> the allowed documents show (through open
//     shadow roots and same-origin frames, plus those the browser's frame
//     trees name, which reaches into closed shadow roots), with its
//     bounding box in the page viewport (CSS transforms included);
//   - each is judged with every frame above it; an allowed frame is entered
//     and its own frames sampled (boxes clipped to it); a refused frame, one
//     that cannot be named or entered, and one seen only through a scaled or
//     rotated frame are masked whole;
//   - a filter on a masked frame or its ancestors widens its mask by three
//     times each of its lengths (blur, drop-shadow); an SVG filter or a
//     -webkit-box-reflect, which can move pixels anywhere, refuses the
//     screenshot; elements with a backdrop-filter over a mask are masked
//     too;
//   - the boxes map to image pixels by the image's size over the viewport's
//     (device scale and zoom included), rounded outwards with one pixel to
//     spare. A pinch-zoomed page with something to mask is refused.
//
// A view transition draws a snapshot: a copy of what the document painted,
// frames of other origins included, shown after those frames are gone
// (document.startViewTransition(() => remove the frames)), where no mask
// can follow them. No Chromium 156 switch turns view transitions off
// (--disable-blink-features=ViewTransition leaves startViewTransition
// defined), so every mode detects them: each sample asks every allowed
// document whether a transition is shown (document, cross-document or
// scoped, through open and closed shadow roots), and from the first sample
// to the second a watch at every animation frame in each allowed document
// records one that starts and ends in between. A transition before the capture is waited out (bounded by
// viewTransitionWait, then refused); one seen during it discards the
// capture. See spec/boundaries.md for every path by which a renderer
// copies painted content.
//
// The capture is kept only when the second sample, taken a frame later,
// equals the first (the frames, their boxes, the loaders of the allowed
// frames' documents, scroll and viewport) and no frame was attached or
// detached in between; otherwise it is discarded and taken once more, then
// refused. A full-page capture first resizes the
// viewport to the page (as Chromium's own captureBeyondViewport does) so the
// sample and the capture see the same layout, then clears the override
// (which also clears one set through raw CDP). Left open: a page that moves
// a frame away and back, or inserts and removes one, between the two samples
// of one capture.
//
// With a nil Judge nothing is masked and the capture is returned as taken.

// ScreenshotOptions selects the region: the viewport (zero value), the full
// page, or one element.
type ScreenshotOptions struct {
	FullPage bool
	Target   *Target
}

// maxScreenshotSide bounds a full-page capture (16k x 16k CSS pixels).
const maxScreenshotSide = 16384

// maxMaskedPixels bounds the image decoded to be masked or cropped (4 bytes
// each in memory).
const maxMaskedPixels = 32 << 20

// maskGrey is the opaque colour of a masked frame.
var maskGrey = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}

// Screenshot returns PNG bytes of the viewport, the full page or one
// element, with frames of refused origins masked (see above).
//
// A tab that is not the frontmost one of its window (another page the
// agent opened, a tab of the person's behind the one they look at) draws no
// frames, and a capture waits for one: as of Chromium 156 it hangs once a
// requestAnimationFrame callback is pending, as on any animated page. For
// a hidden page, for the length of the capture, a screencast of the page's own session, tiny
// and unread, makes the browser draw it while it stays in the background:
// the tab the person sees does not change.
func (p *Page) Screenshot(ctx context.Context, o ScreenshotOptions) ([]byte, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	if p.inBackground(ctx) {
		if _, err := cdproto.Call(ctx, p.sess, page.StartScreencast, page.StartScreencastParams{
			Format: page.StartScreencastFormatJpeg, MaxWidth: 16, MaxHeight: 16, EveryNthFrame: 60, MaxFramesInFlight: 1,
		}); err != nil {
			return nil, p.readErr(ctx, err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resumeTimeout)
			defer cancel()
			_, _ = cdproto.Call(sctx, p.sess, page.StopScreencast, cdproto.Empty{})
		}()
	}
	full := o.FullPage
	if o.Target != nil {
		box, vp, err := p.targetBox(ctx, *o.Target)
		if err != nil {
			return nil, err
		}
		// An element beyond the viewport is cut from a full-page capture.
		full = box.x < 0 || box.y < 0 || box.x+box.w > vp.w || box.y+box.h > vp.h
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		png, err := p.captureOnce(ctx, full, o.Target)
		switch {
		case errors.Is(err, errViewTransition):
			if err := p.awaitNoViewTransition(ctx, "the screenshot"); err != nil {
				return nil, err
			}
		case !errors.Is(err, errLayoutChanged):
			return png, err
		}
		last = err
	}
	if errors.Is(last, errViewTransition) {
		return nil, refuseViewTransition("the screenshot")
	}
	return nil, fsm.Refuse(fsm.BindingStale, "the page's frames moved or navigated during the capture; the screenshot was discarded")
}

// awaitNoViewTransition waits, frame by frame, until no allowed document
// shows a view transition, for at most viewTransitionWait; then it refuses
// what (the capture) as refuseViewTransition.
func (p *Page) awaitNoViewTransition(ctx context.Context, what string) error {
	wctx, cancel := context.WithTimeout(ctx, viewTransitionWait)
	defer cancel()
	for {
		l, err := p.sampleLayout(wctx, "")
		if err == nil && !l.Transition {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if wctx.Err() != nil {
			return refuseViewTransition(what)
		}
		if err != nil && !errors.Is(err, errWorldGone) && wctx.Err() == nil {
			return p.readErr(ctx, err)
		}
		if w, err := p.mainWorld(wctx); err == nil {
			_, _ = invoke(wctx, p, w, jsAfterFrame, none{})
		}
	}
}

// inBackground reports whether the page's tab is hidden behind another,
// read in the surface's own world (the page cannot redefine it there). When
// that cannot be read it says true: the screencast is cheap, a hang is not.
func (p *Page) inBackground(ctx context.Context) bool {
	w, err := p.mainWorld(ctx)
	if err != nil {
		return true
	}
	ep := w.evaluate("document.visibilityState")
	ep.ReturnByValue = new(true)
	res, err := cdproto.Call(ctx, w.sess, runtime.Evaluate, ep)
	if err != nil || res.Result == nil {
		return true
	}
	return string(res.Result.Value) != `"visible"`
}

// errLayoutChanged says the two layout samples of a capture differ.
var errLayoutChanged = errors.New("surface: the layout changed during the capture")

// errViewTransition says a view transition was shown around the capture.
var errViewTransition = errors.New("surface: a view transition was shown during the capture")

// viewTransitionWait bounds the wait for a page's view transition to end
// before a capture: a page can hold one on screen as long as it likes.
const viewTransitionWait = 3 * time.Second

// refuseViewTransition is the refusal of a capture (what: "the
// screenshot", "the PDF") a view transition spoils.
func refuseViewTransition(what string) error {
	return fsm.Refusef(fsm.OriginDenied, "the page is showing a view transition, whose snapshot can hold frames of origins that are not allowed and cannot be masked; it did not end within %s and %s is refused", viewTransitionWait, what)
}

// rect is a box in CSS pixels of the page viewport.
type rect struct{ x, y, w, h float64 }

func (r rect) empty() bool { return !(r.w > 0 && r.h > 0) }

func (r rect) intersect(o rect) rect {
	x0, y0 := math.Max(r.x, o.x), math.Max(r.y, o.y)
	x1, y1 := math.Min(r.x+r.w, o.x+o.w), math.Min(r.y+r.h, o.y+o.h)
	if x1 <= x0 || y1 <= y0 {
		return rect{}
	}
	return rect{x0, y0, x1 - x0, y1 - y0}
}

func (r rect) grow(d float64) rect { return rect{r.x - d, r.y - d, r.w + 2*d, r.h + 2*d} }

// targetBox resolves t (admitted, scrolled into view) and returns its box in
// the page viewport and the viewport's size.
func (p *Page) targetBox(ctx context.Context, t Target) (rect, rect, error) {
	// prepare places a frame's element in the page viewport.
	_, res, err := p.prepare(ctx, t, prepareArgs{Kind: "screenshot"})
	if err != nil {
		return rect{}, rect{}, err
	}
	if res.W <= 0 || res.H <= 0 {
		return rect{}, rect{}, fsm.Refuse(fsm.ElementHidden, "1 match with an empty box")
	}
	vp, err := p.viewport(ctx)
	if err != nil {
		return rect{}, rect{}, err
	}
	return rect{res.X, res.Y, res.W, res.H}, vp, nil
}

// viewport returns the size of the page viewport in CSS pixels.
func (p *Page) viewport(ctx context.Context) (rect, error) {
	m, err := cdproto.Call(ctx, p.sess, page.GetLayoutMetrics, cdproto.Empty{})
	if err != nil {
		return rect{}, p.readErr(ctx, err)
	}
	if m.CSSLayoutViewport == nil {
		return rect{}, errors.New("surface: no layout metrics")
	}
	return rect{0, 0, float64(m.CSSLayoutViewport.ClientWidth), float64(m.CSSLayoutViewport.ClientHeight)}, nil
}

// captureOnce takes one capture between two layout samples.
func (p *Page) captureOnce(ctx context.Context, full bool, t *Target) ([]byte, error) {
	changed, stop := p.watchFrames()
	defer stop()
	if full {
		restore, err := p.fitViewport(ctx)
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	var box *rect
	if t != nil {
		b, _, err := p.targetBox(ctx, *t)
		if err != nil {
			return nil, err
		}
		box = &b
	}
	before, err := p.sampleLayout(ctx, "start")
	if errors.Is(err, errWorldGone) {
		return nil, errLayoutChanged
	}
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	if before.Transition {
		p.stopTransitionWatch(ctx)
		return nil, errViewTransition
	}
	shot, err := cdproto.Call(ctx, p.sess, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if isContextGone(err) {
		return nil, errLayoutChanged // the page is between two documents
	}
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	if p.opts.Judge == nil {
		return p.paint(shot.Data, before, box)
	}
	// A frame later: motion that spans frames shows in the second sample.
	if w, err := p.mainWorld(ctx); err == nil {
		_, _ = invoke(ctx, p, w, jsAfterFrame, none{})
	}
	after, err := p.sampleLayout(ctx, "stop")
	if err == nil && after.Transition {
		return nil, errViewTransition
	}
	if errors.Is(err, errWorldGone) || (err == nil && !reflect.DeepEqual(before, after)) || changed() {
		return nil, errLayoutChanged
	}
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return p.paint(shot.Data, before, box)
}

// watchFrames reports whether a frame was attached to or detached from the
// page since it was called: a frame inserted and removed between the two
// samples of a capture is in neither. (A frame that navigates changes its
// loader in the samples.) Events are queued on the wire before the
// responses that follow them, so one sent before the second sample is
// seen.
func (p *Page) watchFrames() (changed func() bool, stop func()) {
	ch, stop := frameEvents.subscribe(p.sess)
	changed = func() bool {
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					return true // the session ended: nothing drawn can be trusted
				}
				var drawn bool
				if frameEvents.dispatch(&drawn, ev) && drawn {
					return true
				}
			default:
				return false
			}
		}
	}
	return changed, stop
}

// frameEvents are the events that change which frames a page draws; each
// sets its *bool when it does.
var frameEvents = newEventTable(
	on(page.FrameAttached, func(drawn *bool, _ *page.EventFrameAttached) { *drawn = true }),
	on(page.FrameDetached, func(drawn *bool, _ *page.EventFrameDetached) { *drawn = true }),
	on(target.AttachedToTarget, func(drawn *bool, ev *target.EventAttachedToTarget) {
		// Workers attach too; only frames are drawn.
		*drawn = ev.TargetInfo == nil || ev.TargetInfo.Type == "iframe"
	}),
	on(target.DetachedFromTarget, func(drawn *bool, _ *target.EventDetachedFromTarget) { *drawn = true }),
)

// fitViewport resizes the viewport to the page, capped at
// maxScreenshotSide, and returns what restores it.
func (p *Page) fitViewport(ctx context.Context) (func(), error) {
	m, err := cdproto.Call(ctx, p.sess, page.GetLayoutMetrics, cdproto.Empty{})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	if m.CSSContentSize == nil || m.CSSLayoutViewport == nil {
		return nil, errors.New("surface: no layout metrics")
	}
	w := math.Min(math.Ceil(math.Max(m.CSSContentSize.Width, float64(m.CSSLayoutViewport.ClientWidth))), maxScreenshotSide)
	h := math.Min(math.Ceil(math.Max(m.CSSContentSize.Height, float64(m.CSSLayoutViewport.ClientHeight))), maxScreenshotSide)
	if _, err := cdproto.Call(ctx, p.sess, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h)}); err != nil {
		return nil, p.readErr(ctx, err)
	}
	restore := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resumeTimeout)
		defer cancel()
		_, _ = cdproto.Call(rctx, p.sess, emulation.ClearDeviceMetricsOverride, cdproto.Empty{})
	}
	// Let the page lay out (and answer resize) at its new size first.
	if w, err := p.mainWorld(ctx); err == nil {
		_, _ = invoke(ctx, p, w, jsAfterFrame, none{})
	}
	return restore, nil
}

// maxClosedRoots bounds the closed shadow roots handed to one world for
// the view transition check; a document with more is taken to show one.
const maxClosedRoots = 256

// errTooManyClosedRoots says a document holds more closed shadow roots
// than are checked.
var errTooManyClosedRoots = errors.New("surface: too many closed shadow roots")

// keepClosedRoots hands every closed shadow root of w's document to the
// page script, which cannot reach them itself: a scoped view transition
// inside one is seen only there. They are found by one DOM.describeNode of
// the whole document with pierce, and handed over one by one
// (DOM.resolveNode into w). Roots in same-origin child frames' documents
// are not handed over (see spec/boundaries.md). A document that cannot be
// described (too large for one message) is left as it is.
func (p *Page) keepClosedRoots(ctx context.Context, w *world) error {
	if _, err := invoke(ctx, p, w, jsClosedRoot, closedRootArgs{Reset: true}); err != nil {
		return err
	}
	ep := w.evaluate("document")
	ep.Silent = new(true)
	res, err := p.evaluateIn(ctx, w, "document", ep)
	if err != nil {
		return err
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return nil
	}
	defer p.release(ctx, w.sess, res.Result.ObjectID)
	d, err := cdproto.Call(ctx, w.sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: res.Result.ObjectID, Depth: new(int64(-1)), Pierce: new(true)})
	if err != nil || d.Node == nil {
		return nil
	}
	var roots []cdproto.BackendNodeID
	var walk func(n *cdproto.Node)
	walk = func(n *cdproto.Node) {
		for _, sr := range n.ShadowRoots {
			if sr.ShadowRootType == cdproto.ShadowRootTypeClosed {
				roots = append(roots, sr.BackendNodeID)
			}
			walk(sr)
		}
		for _, c := range n.Children {
			walk(c)
		}
		for _, c := range n.PseudoElements {
			walk(c)
		}
		if n.TemplateContent != nil {
			walk(n.TemplateContent)
		}
	}
	walk(d.Node)
	if len(roots) > maxClosedRoots {
		return errTooManyClosedRoots
	}
	for _, id := range roots {
		obj, err := cdproto.Call(ctx, w.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id, ExecutionContextID: w.ctx})
		if err != nil || obj.Object == nil {
			return errTooManyClosedRoots // a root that cannot be handed over is not checked: say shown
		}
		call := runtime.CallFunctionOnParams{
			FunctionDeclaration: p.closedRootFn(),
			Arguments:           []*runtime.CallArgument{{ObjectID: obj.Object.ObjectID}, {Value: []byte(quoteJS(w.nonce))}},
			Silent:              new(true),
			ReturnByValue:       new(true),
		}
		call.UniqueContextID = w.uid
		_, err = cdproto.Call(ctx, w.sess, runtime.CallFunctionOn, call)
		p.release(ctx, w.sess, obj.Object.ObjectID)
		if err != nil {
			if isContextGone(err) {
				p.dropWorld(w)
				return errWorldGone
			}
			return err
		}
	}
	return nil
}

// stopTransitionWatch stops the view transition watch a first sample
// started (it also stops by itself).
func (p *Page) stopTransitionWatch(ctx context.Context) {
	_, _ = p.sampleLayout(ctx, "stop")
}

// layout is one sample of what a capture shows. Two equal samples around a
// capture mean the masks computed from the first fit it.
type layout struct {
	// Transition says an allowed document shows a view transition, or its
	// watch saw one since the first sample.
	Transition bool
	Loaders    map[cdproto.FrameID]cdproto.LoaderID // every allowed frame's document
	View       rect                                 // innerWidth x innerHeight
	Scroll     [2]float64
	Visual     [3]float64 // visual viewport offset and scale
	Frames     []shotFrame
	Backdrops  []rect
	// Secrets are the boxes of password fields, masked in every capture.
	Secrets []rect
}

// shotFrame is one cross-origin frame in a sample.
type shotFrame struct {
	Key     string
	Frame   cdproto.FrameID
	Allowed bool
	Box     rect    // page viewport, clipped to the frames around it
	Spread  float64 // how far filters spread its pixels; -1 unbounded
}

// frameLayoutArgs asks frameLayout to start or stop its view transition
// watch ("start", "stop", or "" for neither).
type frameLayoutArgs struct {
	Watch string `json:"watch,omitempty"`
}

// frameBoxes is what the page's frameLayout returns.
type frameBoxes struct {
	pageErr
	VT     bool `json:"vt"`
	Frames []struct {
		Key         string  `json:"key"`
		X           float64 `json:"x"`
		Y           float64 `json:"y"`
		W           float64 `json:"w"`
		H           float64 `json:"h"`
		CX          float64 `json:"cx"`
		CY          float64 `json:"cy"`
		SX          float64 `json:"sx"`
		SY          float64 `json:"sy"`
		Spread      float64 `json:"spread"`
		Inexact     bool    `json:"inexact"`
		Transformed bool    `json:"tf"`
	} `json:"frames"`
	Backdrops []struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
		W float64 `json:"w"`
		H float64 `json:"h"`
	} `json:"backdrops"`
	Secrets []struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
		W float64 `json:"w"`
		H float64 `json:"h"`
	} `json:"secrets"`
	VW      float64 `json:"vw"`
	VH      float64 `json:"vh"`
	ScrollX float64 `json:"scrollX"`
	ScrollY float64 `json:"scrollY"`
	VVX     float64 `json:"vvx"`
	VVY     float64 `json:"vvy"`
	VVS     float64 `json:"vvs"`
}

// xform maps a frame's viewport into the page viewport: scale, then offset.
type xform struct{ sx, sy, dx, dy float64 }

func (t xform) rect(x, y, w, h float64) rect {
	return rect{t.dx + x*t.sx, t.dy + y*t.sy, w * t.sx, h * t.sy}
}

// sampleLayout samples the admitted main document and the allowed frames
// in it; watch starts or stops their view transition watches.
func (p *Page) sampleLayout(ctx context.Context, watch string) (*layout, error) {
	w, err := p.mainWorld(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.admit(ctx, w); err != nil {
		return nil, err
	}
	l := &layout{Loaders: map[cdproto.FrameID]cdproto.LoaderID{}}
	if p.opts.Judge == nil {
		r, err := invoke(ctx, p, w, jsFrameLayout, frameLayoutArgs{})
		if err != nil {
			return nil, err
		}
		l.View, l.Visual = rect{0, 0, r.VW, r.VH}, [3]float64{r.VVX, r.VVY, r.VVS}
		return l, nil
	}
	idx, err := p.frames(ctx, true)
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	// The documents shown unmasked: one replaced during the capture may be
	// one the Judge refuses.
	for fid, n := range idx {
		if p.judgeChain(idx, fid) == nil {
			l.Loaders[fid] = n.loader
		}
	}
	if err := p.layoutIn(ctx, w, idx, l, xform{1, 1, 0, 0}, 0, nil, 0, watch); err != nil {
		return nil, err
	}
	return l, nil
}

// layoutIn samples world w, whose viewport maps to the page's by t and is
// clipped to clip (nil in the main document); spread is how far filters
// around w's frame spread it.
func (p *Page) layoutIn(ctx context.Context, w *world, idx frameIndex, l *layout, t xform, spread float64, clip *rect, depth int, watch string) error {
	p.tagChildFrames(ctx, w)
	closedUnchecked := false
	if watch != "stop" {
		switch err := p.keepClosedRoots(ctx, w); {
		case errors.Is(err, errTooManyClosedRoots):
			closedUnchecked = true
		case err != nil:
			return err
		}
	}
	r, err := invoke(ctx, p, w, jsFrameLayout, frameLayoutArgs{Watch: watch})
	if err != nil {
		return err
	}
	if r.Err != "" {
		p.dropWorld(w)
		return errWorldGone
	}
	l.Transition = l.Transition || r.VT || closedUnchecked
	if clip == nil {
		l.View, l.Scroll, l.Visual = rect{0, 0, r.VW, r.VH}, [2]float64{r.ScrollX, r.ScrollY}, [3]float64{r.VVX, r.VVY, r.VVS}
	}
	cut := func(b rect) rect {
		if clip != nil {
			return b.intersect(*clip)
		}
		return b
	}
	for _, b := range r.Backdrops {
		l.Backdrops = append(l.Backdrops, cut(t.rect(b.X, b.Y, b.W, b.H)))
	}
	for _, b := range r.Secrets {
		l.Secrets = append(l.Secrets, cut(t.rect(b.X, b.Y, b.W, b.H)))
	}
	for _, f := range r.Frames {
		sf := shotFrame{Key: f.Key, Box: cut(t.rect(f.X, f.Y, f.W, f.H)), Spread: -1}
		if f.Spread >= 0 && spread >= 0 {
			sf.Spread = f.Spread*math.Max(t.sx, t.sy) + spread
		}
		fid, known := p.frameByKey(f.Key)
		if f.Key != "" && known {
			sf.Frame = fid
			sf.Allowed = p.judgeChain(idx, fid) == nil && !f.Inexact && !f.Transformed && depth < maxFrameDepth
		}
		var cw *world
		if sf.Allowed {
			var err error
			if cw, err = p.frameWorld(ctx, fid); err != nil {
				if ctx.Err() != nil {
					return err
				}
				sf.Allowed = false // not entered: masked whole
			}
		}
		l.Frames = append(l.Frames, sf)
		if !sf.Allowed || sf.Box.empty() {
			continue
		}
		sx, sy := f.SX, f.SY
		if sx <= 0 || sy <= 0 {
			sx, sy = 1, 1
		}
		inner := xform{t.sx * sx, t.sy * sy, t.dx + f.CX*t.sx, t.dy + f.CY*t.sy}
		box := sf.Box
		if err := p.layoutIn(ctx, cw, idx, l, inner, sf.Spread, &box, depth+1, watch); err != nil {
			return err
		}
	}
	return nil
}

// masks returns the boxes to paint over, or a refusal when a refused frame
// spreads without bound.
func (l *layout) masks() ([]rect, error) {
	var out []rect
	for _, f := range l.Frames {
		if f.Allowed || f.Box.empty() {
			continue
		}
		if f.Spread < 0 {
			return nil, fsm.Refuse(fsm.OriginDenied, "a frame of an origin that is not allowed is drawn through an SVG filter or a reflection, which cannot be masked; the screenshot is refused")
		}
		out = append(out, f.Box.grow(f.Spread))
	}
	for _, b := range l.Backdrops {
		for _, m := range out {
			if !b.intersect(m).empty() {
				out = append(out, b)
				break
			}
		}
	}
	for _, s := range l.Secrets {
		if !s.empty() {
			out = append(out, s)
		}
	}
	return out, nil
}

// paint masks the capture by sample l and crops it to box (page viewport),
// re-encoding only when something changed.
func (p *Page) paint(data []byte, l *layout, box *rect) ([]byte, error) {
	masks, err := l.masks()
	if err != nil {
		return nil, err
	}
	if len(masks) == 0 && box == nil {
		return data, nil
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, errors.New("surface: the browser's screenshot is not a PNG")
	}
	if cfg.Width*cfg.Height > maxMaskedPixels {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the capture is %dx%d pixels, more than can be masked or cropped (%d); take the viewport or one element", cfg.Width, cfg.Height, maxMaskedPixels)
	}
	if len(masks) > 0 && l.Visual[2] != 1 {
		return nil, fsm.Refuse(fsm.OriginDenied, "the page is pinch-zoomed and shows a frame of an origin that is not allowed or a password field, which cannot be masked at this zoom; reset the zoom")
	}
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, errors.New("surface: the browser's screenshot does not decode")
	}
	img := image.NewNRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	if l.View.w <= 0 || l.View.h <= 0 {
		return nil, errors.New("surface: no viewport size")
	}
	kx, ky := float64(cfg.Width)/l.View.w, float64(cfg.Height)/l.View.h
	toPixels := func(r rect, spare int) image.Rectangle {
		return image.Rect(int(math.Floor(r.x*kx))-spare, int(math.Floor(r.y*ky))-spare,
			int(math.Ceil((r.x+r.w)*kx))+spare, int(math.Ceil((r.y+r.h)*ky))+spare).Intersect(img.Bounds())
	}
	for _, m := range masks {
		draw.Draw(img, toPixels(m, 1), image.NewUniform(maskGrey), image.Point{}, draw.Src)
	}
	var out image.Image = img
	if box != nil {
		c := toPixels(*box, 0)
		if c.Empty() {
			return nil, fsm.Refuse(fsm.ElementHidden, "1 match, outside the capture")
		}
		out = img.SubImage(c)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

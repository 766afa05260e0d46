package surface

import (
	"context"
	"errors"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/fsm"
)

// MaxPDFBytes bounds one PDF.
const MaxPDFBytes = 32 << 20

// PDF prints the page with Page.printToPDF (headless Chromium only) and
// returns the PDF's bytes.
//
// A page that holds a frame of an origin the Judge refuses is refused, not
// printed with the frame blank: a PDF is not masked afterwards as a
// screenshot is (its text and links would still carry what the frame
// shows), and print styles can show a frame that is hidden or zero-sized on
// screen, so every frame the browser knows counts, visible or not, and so
// does every frame an allowed document shows that cannot be named. A frame
// attached or detached while the PDF was printed discards it (refused as
// browser_binding_stale). A view transition, whose snapshot can show frames
// already removed, is waited out as for a screenshot (bounded), and one
// shown around the print refuses the PDF.
func (p *Page) PDF(ctx context.Context) ([]byte, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	changed, stop := p.watchFrames()
	defer stop()
	if p.opts.Judge != nil {
		if err := p.awaitNoViewTransition(ctx, "the PDF"); err != nil {
			return nil, err
		}
	}
	if err := p.noDeniedFrames(ctx); err != nil {
		return nil, err
	}
	res, err := cdproto.Call(ctx, p.sess, page.PrintToPDF, page.PrintToPDFParams{PrintBackground: new(true)})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	if changed() {
		return nil, fsm.Refuse(fsm.BindingStale, "a frame was added or removed while the page was printed; the PDF was discarded")
	}
	if err := p.noDeniedFrames(ctx); err != nil { // a frame that navigated while it printed
		return nil, err
	}
	if len(res.Data) > MaxPDFBytes {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the PDF is %d bytes; at most %d are kept", len(res.Data), MaxPDFBytes)
	}
	return res.Data, nil
}

// errDeniedFramePrint is the refusal of a page that holds a denied frame.
var errDeniedFramePrint = fsm.Refuse(fsm.OriginDenied, "the page holds a frame of an origin that is not allowed, which a PDF would print; the PDF is refused (a screenshot masks such frames)")

// noDeniedFrames refuses a page that holds any frame the Judge refuses:
// every frame of the browser's frame trees (those hidden or zero-sized
// too), and every frame an allowed document shows.
func (p *Page) noDeniedFrames(ctx context.Context) error {
	if p.opts.Judge == nil {
		return nil
	}
	w, err := p.mainWorld(ctx)
	if err != nil {
		return p.readErr(ctx, err)
	}
	if err := p.admit(ctx, w); err != nil {
		return p.readErr(ctx, err)
	}
	idx, err := p.frames(ctx, true)
	if err != nil {
		return p.readErr(ctx, err)
	}
	for fid := range idx {
		if p.judgeChain(idx, fid) != nil {
			return errDeniedFramePrint
		}
	}
	l, err := p.sampleLayout(ctx, "")
	if errors.Is(err, errWorldGone) {
		return fsm.Refuse(fsm.BindingStale, "the page navigated while it was printed; the PDF was discarded")
	}
	if err != nil {
		return p.readErr(ctx, err)
	}
	for _, f := range l.Frames {
		if f.Frame == "" || p.judgeChain(idx, f.Frame) != nil { // unnamed, or refused
			return errDeniedFramePrint
		}
	}
	if l.Transition {
		return refuseViewTransition("the PDF")
	}
	return nil
}

package surface

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// Every verb that reads or acts runs against one authorized document: our
// world in it, which lives and dies with that document and is addressed by
// its system-unique context id, so nothing we send can run in a document
// that replaced it. admit checks, before the call and again after it, that
// the world's frame still holds that document (same loader) and that the
// Judge allows it and every frame above it; a result read across a change
// is discarded and the call refused.

// ErrDocumentRefused is the cause of a refusal of the page's own (main)
// document by the Judge, found while a verb ran: the caller may word it as
// "the page left the allowed origins". Refusals of frames do not carry it.
var ErrDocumentRefused = errors.New("surface: the page's document is refused by the Judge")

// maxFrameChain bounds the frames walked from one frame up to the page.
const maxFrameChain = 32

// docURL is the URL a document is judged by: its URL, or for about:blank and
// about:srcdoc, which run as the origin that created them, that origin when
// it is not opaque. A frame tree reports a tab's initial empty document,
// before its first navigation commits, with no URL (and origin "://"): it
// is about:blank, as the document itself says (location.href), so a verb
// judges it as the identity read before it did.
func docURL(url, origin string) string {
	if url != "" && !strings.HasPrefix(url, "about:") {
		return url
	}
	if origin != "" && origin != "null" && origin != "://" {
		return origin
	}
	if url == "" {
		return "about:blank"
	}
	return url
}

// frameNode is one frame of the page as its frame trees report it.
type frameNode struct {
	url    string // as judged (docURL)
	loader cdproto.LoaderID
	parent cdproto.FrameID // "" for the main frame
}

// frameIndex is the page's frames, read from the page session's frame tree
// and those of the cross-site iframes' own sessions.
type frameIndex map[cdproto.FrameID]frameNode

// frames reads the frame index. With children false only the page
// session's tree is read (the frames in the page's process, which hold
// every ancestor of a frame in it).
func (p *Page) frames(ctx context.Context, children bool) (frameIndex, error) {
	idx := frameIndex{}
	tree, err := cdproto.Call(ctx, p.sess, page.GetFrameTree, cdproto.Empty{})
	if isContextGone(err) {
		return nil, errWorldGone // between two documents
	}
	if err != nil {
		return nil, err
	}
	idx.add(tree.FrameTree, "")
	if !children {
		return idx, nil
	}
	p.mu.Lock()
	kids := make(map[cdproto.FrameID]child, len(p.children))
	for fid, c := range p.children {
		kids[fid] = c
	}
	p.mu.Unlock()
	for fid, c := range kids {
		t, err := cdproto.Call(ctx, c.sess, page.GetFrameTree, cdproto.Empty{})
		if err != nil || t.FrameTree == nil || t.FrameTree.Frame == nil || t.FrameTree.Frame.ID != fid {
			continue // gone: its frames stay unknown, and unknown is refused
		}
		idx.add(t.FrameTree, c.parent)
	}
	return idx, nil
}

func (idx frameIndex) add(t *page.FrameTree, parent cdproto.FrameID) {
	if t == nil || t.Frame == nil {
		return
	}
	f := t.Frame
	idx[f.ID] = frameNode{url: docURL(f.URL, f.SecurityOrigin), loader: f.LoaderID, parent: parent}
	for _, c := range t.ChildFrames {
		idx.add(c, f.ID)
	}
}

// judgeChain judges frame fid and every frame above it up to the main
// frame. A frame whose chain is not known is refused: what cannot be
// judged is not reached.
func (p *Page) judgeChain(idx frameIndex, fid cdproto.FrameID) error {
	if p.opts.Judge == nil {
		return nil
	}
	f := fid
	for range maxFrameChain {
		n, ok := idx[f]
		if !ok {
			return fsm.Refuse(fsm.OriginDenied, "a frame whose origin could not be established is not reached")
		}
		if err := p.judge(n.url); err != nil {
			if f == p.main {
				return documentRefused(err)
			}
			return err
		}
		if f == p.main {
			return nil
		}
		f = n.parent
	}
	return fsm.Refuse(fsm.OriginDenied, "frames nested too deep to judge are not reached")
}

// documentRefused marks the Judge's refusal of the main document with
// ErrDocumentRefused, keeping its words.
func documentRefused(err error) error {
	r, ok := fsm.AsRefusal(err)
	if !ok {
		return fmt.Errorf("%w: %w", ErrDocumentRefused, err)
	}
	c := *r
	return c.WithCause(ErrDocumentRefused)
}

// judgeFrame judges a frame before the surface enters it.
func (p *Page) judgeFrame(ctx context.Context, fid cdproto.FrameID) error {
	if p.opts.Judge == nil {
		return nil
	}
	idx, err := p.frames(ctx, true)
	if err != nil {
		return p.readErr(ctx, err)
	}
	return p.judgeChain(idx, fid)
}

// admit checks that w's frame still holds w's document and that the Judge
// allows it and every frame above it. It answers errWorldGone for a
// replaced document and the Judge's refusal for a refused one. A nil Judge
// admits everything without asking the browser.
func (p *Page) admit(ctx context.Context, w *world) error {
	_, err := p.admitIndex(ctx, w)
	return err
}

// admitIndex is admit, returning the frame index it judged by (nil with a
// nil Judge), so that the caller's next step need not read it again.
func (p *Page) admitIndex(ctx context.Context, w *world) (frameIndex, error) {
	if p.opts.Judge == nil {
		return nil, nil
	}
	idx, err := p.frames(ctx, w.sess != p.sess)
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	n, ok := idx[w.frame]
	if !ok || (w.load != "" && n.loader != w.load) {
		p.dropWorld(w)
		return nil, errWorldGone
	}
	return idx, p.judgeChain(idx, w.frame)
}

// admitted runs fn in the main world of an admitted document and admits
// that document again afterwards; when it was replaced in between, fn's
// result is discarded and fn runs once more in the new document (read-only
// callers). fn must leave its output unused unless admitted returns nil.
func (p *Page) admitted(ctx context.Context, fn func(w *world) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var w *world
		if w, err = p.mainWorld(ctx); err != nil {
			return err
		}
		if err = p.admit(ctx, w); errors.Is(err, errWorldGone) {
			continue
		} else if err != nil {
			return err
		}
		if err = fn(w); errors.Is(err, errWorldGone) {
			continue
		} else if err != nil {
			return err
		}
		if err = p.admit(ctx, w); !errors.Is(err, errWorldGone) {
			return err
		}
	}
	return err
}

// newWorld creates our isolated world in frame's current document. It pins
// the world by the context's unique id and records the document's loader;
// a document replaced while the world was being made is errWorldGone.
func (p *Page) newWorld(ctx context.Context, s Session, frame cdproto.FrameID) (*world, error) {
	cw := p.watchContexts(ctx, s, s != p.sess)
	before, err := frameLoader(ctx, s, frame)
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	res, err := cdproto.Call(ctx, s, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frame, WorldName: worldName})
	if err != nil {
		if isContextGone(err) {
			err = errWorldGone // the frame's document went meanwhile
		}
		return nil, p.readErr(ctx, err)
	}
	w := &world{sess: s, frame: frame, ctx: res.ExecutionContextID, nonce: randomHex(12), doc: fmt.Sprintf("d%d", p.worldSeq.Add(1))}
	if w.uid, err = p.pinWorld(ctx, cw, w); err != nil {
		return nil, err
	}
	after, err := frameLoader(ctx, s, frame)
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	if before != after {
		return nil, p.readErr(ctx, errWorldGone)
	}
	w.load = after
	return w, nil
}

// worldName names our isolated world in every frame.
const worldName = "webcodex"

// pinWorld finds the unique id of w's context: the newest reported creation
// of its id in its frame that the browser still answers to. Any live
// context of our world in that frame is the one in the frame's current
// document (a replaced document's contexts no longer answer).
func (p *Page) pinWorld(ctx context.Context, cw *contextWatch, w *world) (string, error) {
	t := time.NewTimer(contextWaitTimeout)
	defer t.Stop()
	tried := ""
	for {
		c, ok, next, ended := cw.latest(w.ctx, w.frame, worldName)
		if ok && c.unique != tried {
			tried = c.unique
			_, err := cdproto.Call(ctx, w.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "0", UniqueContextID: c.unique, Silent: new(true)})
			if err == nil {
				return c.unique, nil
			}
			if !isContextGone(err) {
				return "", p.readErr(ctx, err)
			}
			// Gone already (the document was replaced), or a newer report
			// is still on its way: wait briefly for one.
			t.Reset(staleContextWait)
		}
		if ended {
			return "", p.readErr(ctx, errWorldGone)
		}
		select {
		case <-next:
		case <-t.C:
			if tried != "" {
				return "", errWorldGone
			}
			return "", errors.New("surface: the browser did not report the new world's context")
		case <-ctx.Done():
			return "", fmt.Errorf("surface: %w", ctx.Err())
		}
	}
}

// staleContextWait bounds the wait for a newer report of a world's context
// once the newest one known no longer answers.
const staleContextWait = 200 * time.Millisecond

// frameLoader returns the loader of frame's current document, or
// errWorldGone when the frame is not in s's frame tree.
func frameLoader(ctx context.Context, s cdproto.Session, frame cdproto.FrameID) (cdproto.LoaderID, error) {
	tree, err := cdproto.Call(ctx, s, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		if isContextGone(err) {
			return "", errWorldGone
		}
		return "", err
	}
	if tree.FrameTree == nil {
		return "", errWorldGone
	}
	n := findFrame(tree.FrameTree, frame)
	if n == nil || n.Frame == nil {
		return "", errWorldGone
	}
	return n.Frame.LoaderID, nil
}

// evaluate returns Runtime.evaluate parameters addressed to w by its
// unique context id, which no other document can answer to.
func (w *world) evaluate(expr string) runtime.EvaluateParams {
	return runtime.EvaluateParams{Expression: expr, UniqueContextID: w.uid}
}

// mainContextOf returns the unique id of the page's own (main) world in w's
// document: the frame's default context, confirmed to hold the very
// document node w holds, so an expression sent to it runs in that document
// or nowhere.
func (p *Page) mainContextOf(ctx context.Context, w *world) (string, error) {
	cw := p.watchContexts(ctx, p.sess, false)
	t := time.NewTimer(contextWaitTimeout)
	defer t.Stop()
	for {
		cw.mu.Lock()
		c, ok := cw.main[p.main]
		ch, ended := cw.changed, cw.ended
		cw.mu.Unlock()
		if ok {
			same, err := p.sameDocument(ctx, w, c.unique)
			if err != nil {
				return "", err
			}
			if same {
				return c.unique, nil
			}
		}
		if ended {
			return "", p.readErr(ctx, errWorldGone)
		}
		select {
		case <-ch: // another context was made or destroyed: look again
		case <-t.C:
			return "", errWorldGone
		case <-ctx.Done():
			return "", fmt.Errorf("surface: %w", ctx.Err())
		}
	}
}

// sameDocument reports whether the context unique holds the document w
// holds: both name the same DOM node (evaluated without side effects).
func (p *Page) sameDocument(ctx context.Context, w *world, unique string) (bool, error) {
	const group = "webcodex-bind"
	defer func() {
		_, _ = cdproto.Call(ctx, p.sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	}()
	ours := w.evaluate("document")
	ours.ObjectGroup, ours.Silent = group, new(true)
	a, err := cdproto.Call(ctx, p.sess, runtime.Evaluate, ours)
	if err != nil || a.Result == nil || a.Result.ObjectID == "" {
		if err == nil || isContextGone(err) {
			p.dropWorld(w)
			return false, errWorldGone
		}
		return false, err
	}
	b, err := cdproto.Call(ctx, p.sess, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "document", UniqueContextID: unique, ObjectGroup: group, Silent: new(true), ThrowOnSideEffect: new(true),
	})
	if err != nil || b.Result == nil || b.Result.ObjectID == "" {
		if err == nil || isContextGone(err) {
			return false, nil // not that context (any more)
		}
		return false, err
	}
	na, err := cdproto.Call(ctx, p.sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: a.Result.ObjectID})
	if err != nil || na.Node == nil {
		return false, errWorldGone
	}
	nb, err := cdproto.Call(ctx, p.sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: b.Result.ObjectID})
	if err != nil || nb.Node == nil {
		return false, nil
	}
	return na.Node.BackendNodeID == nb.Node.BackendNodeID, nil
}

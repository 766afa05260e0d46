// Package surface is the agent's view of one page: bounded semantic
// snapshots with refs, semantic targets, real-input actions, condition waits,
// document fences and bounded diagnostics, over one flattened CDP page
// session.
//
// Everything that looks at the page runs in the page, in an isolated world
// per frame document (Page.createIsolatedWorld) holding the script in
// inject.js: the page's scripts cannot see the element registry, spoof its
// refs or patch the DOM prototypes it calls, and the world dies with its
// document, which makes it the document identity that fences refs. Input is
// real (Input.dispatchMouseEvent, Input.insertText, Input.dispatchKeyEvent),
// so frameworks that track values (React) see it as a user's.
//
// A Page does not know which ownership mode it serves; the caller decides
// policy and passes the generation, the mutation gate and the upload
// directory in [Options].
package surface

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
)

// Gate serializes side-effecting operations on one target. Acquire blocks
// until the caller holds the gate or ctx ends; release gives it back.
type Gate interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// Options configures a [Page]. The zero value is usable: generation 0, no
// gate, uploads refused, cross-site iframes reached when the session is a
// *cdp.Session.
type Options struct {
	// Generation is the connection generation the page belongs to; refs and
	// snapshot ids minted here carry it, and a ref from another generation is
	// refused with browser_binding_stale.
	Generation uint64
	// Gate, when set, is held across revalidation, dispatch and verification
	// of every side-effecting operation.
	Gate Gate
	// UploadDir is the one directory files may be uploaded from; empty
	// refuses every upload (upload_denied).
	UploadDir string
	// Child returns the session of a target auto-attached through the page
	// session (a cross-site iframe), by CDP session id. Nil uses
	// (*cdp.Session).Conn().Session when the page session is a *cdp.Session;
	// otherwise cross-site iframes are marked in snapshots but not entered.
	Child func(sessionID string) (Session, bool)
	// Judge decides whether a document at rawURL may be read or acted on:
	// nil for yes, otherwise the refusal to answer with (the caller's origin
	// gate words it). Frames, diagnostics, waits and input hit-tests consult
	// it; a nil Judge allows every URL.
	Judge func(rawURL string) error
}

// Page is one page (tab) seen through its flattened session. It is safe for
// concurrent use; side-effecting operations are serialized by the Gate when
// one is given.
type Page struct {
	sess   Session
	opts   Options
	global string // per-Page name of the injected object in its worlds
	tag    string // random part of snapshot ids
	main   cdproto.FrameID

	gone     chan struct{} // closed when the page session ends
	goneOnce sync.Once
	life     context.Context // ends with Close; bounds background work
	stop     context.CancelFunc
	wg       sync.WaitGroup
	closed   atomic.Bool

	snapSeq  atomic.Uint64
	worldSeq atomic.Uint64
	limits   limits // fixed after New; tests lower them to hit the bounds

	// mu guards the fields that follow.
	mu        sync.Mutex
	worlds    map[worldKey]*world
	snaps     []*snapRecord // newest last, at most maxSnapRecords
	frameKeys map[cdproto.FrameID]string
	children  map[cdproto.FrameID]child // cross-site iframe sessions by frame (target) id
	dialog    *Dialog
	staging   string        // the upload staging directory; made on first upload
	dialogCh  chan struct{} // closed and replaced when a dialog opens
	loading   bool          // the main frame is loading a document
	loadCh    chan struct{} // closed and replaced when a main-frame load ends or navigation happens
	mainURL   string        // the main frame's committed URL, from its navigation events
	mainNav   chan struct{} // closed and replaced when the main frame commits a new document
	diag      diagnostics
	ctxs      contextWatches // execution contexts by session (contexts.go)
	effects   effectLog      // what actions caused (effects.go)
	ptr       pointerState   // where raw pointer input left the pointer (pointer.go)
	media     mediaState     // the media overrides set on this session (emulate.go)

	barrier chan chan struct{} // sync requests to the event goroutine
}

// child is an out-of-process (cross-site) iframe: its own target and session.
type child struct {
	sess   Session
	parent cdproto.FrameID
}

// limits are the snapshot bounds of a Page.
type limits struct {
	lines      int // lines of one frame's outline walk
	frames     int // cross-origin frames entered by one snapshot
	frameLines int // lines one cross-origin frame contributes

	navCommit time.Duration // wait for a navigation an action started to commit (effects.go)
	navTitle  time.Duration // wait, after that commit, for the load to stop
}

type worldKey struct {
	sess  Session
	frame cdproto.FrameID
}

// world is our isolated world in one frame document.
type world struct {
	sess  Session
	frame cdproto.FrameID
	ctx   runtime.ExecutionContextID
	uid   string           // system-unique context id: what calls address (see contexts.go)
	load  cdproto.LoaderID // the loader of the document the world lives in
	nonce string
	doc   string // opaque document id shown to callers
	dead  atomic.Bool

	tagged map[cdproto.FrameID]bool // child frames whose <iframe> is tagged; guarded by Page.mu
}

var errWorldGone = errors.New("surface: document replaced")

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// New prepares the page session: it enables the domains the surface needs
// (Page, Runtime, Network, Log, lifecycle events), auto-attaches cross-site
// iframes, and starts the event goroutine that Close stops.
func New(ctx context.Context, sess Session, opts Options) (*Page, error) {
	if opts.Child == nil {
		if cs, ok := sess.(*cdp.Session); ok {
			conn := cs.Conn()
			opts.Child = func(id string) (Session, bool) {
				s, ok := conn.Session(id)
				if !ok {
					return nil, false
				}
				return s, true
			}
		}
	}
	p := &Page{
		sess:      sess,
		opts:      opts,
		global:    "__wc_" + randomHex(8),
		tag:       randomHex(3),
		gone:      make(chan struct{}),
		worlds:    map[worldKey]*world{},
		frameKeys: map[cdproto.FrameID]string{},
		children:  map[cdproto.FrameID]child{},
		dialogCh:  make(chan struct{}),
		loadCh:    make(chan struct{}),
		mainNav:   make(chan struct{}),
		barrier:   make(chan chan struct{}),
		limits: limits{lines: maxOutlineLines, frames: maxFramesPerSnapshot, frameLines: maxFrameLines,
			navCommit: navCommitWait, navTitle: navTitleWait},
	}
	p.diag.init()
	p.diag.dropBase = p.dropped()
	evctx, stop := context.WithCancel(context.Background())
	p.life, p.stop = evctx, stop
	p.watchContexts(ctx, sess, false) // before setup enables Runtime, which reports every context
	evs, cancelEvents := pageEvents.subscribe(sess)
	// The main frame id (the target id, fixed for the page's life) is read
	// before the event goroutine starts, which reads it.
	tree, err := cdproto.Call(ctx, sess, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		cancelEvents()
		stop()
		return nil, p.readErr(ctx, err)
	}
	p.main = tree.FrameTree.Frame.ID
	p.mainURL = tree.FrameTree.Frame.URL
	p.wg.Add(1)
	go p.events(evctx, evs, cancelEvents)
	if d, ok := sess.(interface{ Done() <-chan struct{} }); ok {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			select {
			case <-d.Done():
				p.markGone()
			case <-evctx.Done():
			}
		}()
	}
	if err := p.setup(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Page) setup(ctx context.Context) error {
	if _, err := cdproto.Call(ctx, p.sess, page.Enable, page.EnableParams{}); err != nil {
		return p.readErr(ctx, err)
	}
	if _, err := cdproto.Call(ctx, p.sess, page.SetLifecycleEventsEnabled, page.SetLifecycleEventsEnabledParams{Enabled: true}); err != nil {
		return p.readErr(ctx, err)
	}
	for _, m := range []string{"Runtime.enable", "Network.enable", "Log.enable"} {
		if err := p.sess.Call(ctx, m, nil, nil); err != nil {
			return p.readErr(ctx, err)
		}
	}
	// Cross-site iframes are targets of their own. Pause them on start only
	// when we can reach their sessions to resume them.
	wait := p.opts.Child != nil
	if _, err := cdproto.Call(ctx, p.sess, target.SetAutoAttach, target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: wait, Flatten: new(true)}); err != nil {
		return p.readErr(ctx, err)
	}
	return nil
}

// Close stops the event goroutine and forgets the page's worlds. It does not
// close the tab (the caller owns that) and is idempotent.
func (p *Page) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.stop()
	p.wg.Wait()
	p.mu.Lock()
	staging := p.staging
	p.mu.Unlock()
	if staging != "" {
		os.RemoveAll(staging) // the copies of files uploaded into this page
	}
	return nil
}

// Generation returns the generation the page was created with.
func (p *Page) Generation() uint64 { return p.opts.Generation }

func (p *Page) markGone() {
	p.goneOnce.Do(func() { close(p.gone) })
}

func (p *Page) isGone() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

// ------------------------------------------------------------------ events

// pageEvents are the events the page's goroutine reads, each with what it
// does; the diagnostics' own (diag.go) and the actions' effects
// (effects.go) are listed beside them.
var pageEvents = newEventTable(append(append([]eventHandler[*Page]{
	on(inspector.Detached, func(p *Page, _ *inspector.EventDetached) { p.markGone() }),
	on(page.JavascriptDialogOpening, (*Page).dialogOpening),
	on(page.JavascriptDialogClosed, (*Page).dialogClosed),
	on(page.FrameStartedLoading, (*Page).frameStartedLoading),
	on(page.FrameStoppedLoading, (*Page).frameStoppedLoading),
	on(page.FrameNavigated, (*Page).frameNavigated),
	on(page.NavigatedWithinDocument, (*Page).navigatedWithinDocument),
	on(page.FrameDetached, (*Page).frameDetached),
	on(target.AttachedToTarget, (*Page).attachedToTarget),
	on(target.DetachedFromTarget, (*Page).detachedFromTarget),
}, effectEvents...), diagEvents...)...)

// events is the one goroutine that reads the page session's events.
func (p *Page) events(ctx context.Context, evs <-chan any, cancel func()) {
	defer p.wg.Done()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-evs:
			if !ok {
				p.markGone() // the session ended
				return
			}
			pageEvents.dispatch(p, ev)
		case done := <-p.barrier:
			// Handle what is queued now, then answer.
			for n := len(evs); n > 0; n-- {
				ev, ok := <-evs
				if !ok {
					p.markGone()
					close(done)
					return
				}
				pageEvents.dispatch(p, ev)
			}
			close(done)
		}
	}
}

func (p *Page) dialogOpening(ev *page.EventJavascriptDialogOpening) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialog = &Dialog{Type: string(ev.Type), Message: capString(ev.Message, 2000), DefaultPrompt: capString(ev.DefaultPrompt, 2000), url: ev.URL}
	close(p.dialogCh)
	p.dialogCh = make(chan struct{})
}

func (p *Page) dialogClosed(*page.EventJavascriptDialogClosed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialog = nil
}

func (p *Page) frameStartedLoading(ev *page.EventFrameStartedLoading) {
	if ev.FrameID != p.main {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loading = true
}

func (p *Page) frameStoppedLoading(ev *page.EventFrameStoppedLoading) {
	if ev.FrameID != p.main {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loading = false
	p.bumpLoadLocked()
}

// frameNavigated records the main frame's new URL, and wakes waits and
// probes when it committed a new document, so they judge it before anything
// else; an action in progress reports the commit.
func (p *Page) frameNavigated(ev *page.EventFrameNavigated) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bumpLoadLocked()
	if ev.Frame == nil || ev.Frame.ID != p.main {
		return
	}
	p.mainURL = ev.Frame.URL
	p.diag.markNavigation()
	close(p.mainNav)
	p.mainNav = make(chan struct{})
	p.effects.addLocked(effectEvent{kind: effNavCommitted, url: ev.Frame.URL})
}

// navigatedWithinDocument records the main frame's new URL (same document,
// same origin); an action in progress reports it.
func (p *Page) navigatedWithinDocument(ev *page.EventNavigatedWithinDocument) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bumpLoadLocked()
	if ev.FrameID != p.main {
		return
	}
	p.mainURL = ev.URL
	p.effects.addLocked(effectEvent{kind: effNavSameDoc, url: ev.URL})
}

// frameDetached kills the worlds of a detached frame.
func (p *Page) frameDetached(ev *page.EventFrameDetached) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, w := range p.worlds {
		if k.frame == ev.FrameID {
			w.dead.Store(true)
			delete(p.worlds, k)
		}
	}
}

// detachedFromTarget forgets a cross-site iframe's session and kills its
// worlds.
func (p *Page) detachedFromTarget(ev *target.EventDetachedFromTarget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for fid, c := range p.children {
		if id, ok := c.sess.(interface{ ID() string }); ok && id.ID() == string(ev.SessionID) {
			delete(p.children, fid)
			for k, w := range p.worlds {
				if k.sess == c.sess {
					w.dead.Store(true)
					delete(p.worlds, k)
				}
			}
		}
	}
}

func (p *Page) bumpLoadLocked() {
	close(p.loadCh)
	p.loadCh = make(chan struct{})
}

// attachedToTarget resumes an auto-attached target and remembers
// cross-site iframe sessions by their frame id (an iframe target's id is its
// frame id).
func (p *Page) attachedToTarget(ev *target.EventAttachedToTarget) {
	if p.opts.Child == nil || ev.TargetInfo == nil {
		return
	}
	cs, ok := p.opts.Child(string(ev.SessionID))
	if !ok {
		return
	}
	if ev.TargetInfo.Type == "iframe" {
		p.mu.Lock()
		p.children[cdproto.FrameID(ev.TargetInfo.TargetID)] = child{sess: cs, parent: ev.TargetInfo.ParentFrameID}
		p.mu.Unlock()
	}
	if ev.WaitingForDebugger {
		// Resume off the event goroutine: the call waits for a response the
		// event goroutine must not block.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			rctx, cancel := context.WithTimeout(p.life, resumeTimeout)
			defer cancel()
			_ = cs.Call(rctx, "Runtime.runIfWaitingForDebugger", nil, nil)
		}()
	}
}

// ------------------------------------------------------------------ worlds

// mainWorld returns our world in the main frame's current document,
// creating it when the document is new.
func (p *Page) mainWorld(ctx context.Context) (*world, error) {
	return p.worldIn(ctx, p.sess, p.main)
}

func (p *Page) worldIn(ctx context.Context, s Session, frame cdproto.FrameID) (*world, error) {
	key := worldKey{s, frame}
	p.mu.Lock()
	w := p.worlds[key]
	p.mu.Unlock()
	if w != nil && !w.dead.Load() {
		return w, nil
	}
	w, err := p.newWorld(ctx, s, frame)
	if err != nil {
		return nil, err
	}
	expr := "globalThis." + p.global + " = (" + injectJS + ")(" + quoteJS(w.nonce) + "), 1"
	ep := w.evaluate(expr)
	ep.Silent, ep.ReturnByValue = new(true), new(true)
	ev, err := cdproto.Call(ctx, s, runtime.Evaluate, ep)
	if err != nil {
		if isContextGone(err) {
			// The document went between making the world and installing
			// the script: a replaced document, as any other read sees it.
			err = errWorldGone
		}
		return nil, p.readErr(ctx, err)
	}
	if ev.ExceptionDetails != nil {
		return nil, fmt.Errorf("surface: installing the page script: %s", ev.ExceptionDetails.Text)
	}
	p.mu.Lock()
	if old := p.worlds[key]; old != nil && old != w {
		old.dead.Store(true)
	}
	p.worlds[key] = w
	p.mu.Unlock()
	return w, nil
}

func (p *Page) dropWorld(w *world) {
	w.dead.Store(true)
	p.mu.Lock()
	if p.worlds[worldKey{w.sess, w.frame}] == w {
		delete(p.worlds, worldKey{w.sess, w.frame})
	}
	p.mu.Unlock()
}

func quoteJS(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}

// release frees a remote object; failures do not matter (the object goes
// with its document anyway).
func (p *Page) release(ctx context.Context, s cdproto.Session, id runtime.RemoteObjectID) {
	_, _ = cdproto.Call(ctx, s, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: id})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return capString(s, 200)
}

// isProtocolError reports whether the browser answered with an error.
func isProtocolError(err error) bool {
	var pe *cdp.ProtocolError
	return errors.As(err, &pe)
}

// isContextGone reports whether err is Chrome saying the execution context
// (our document) no longer exists.
func isContextGone(err error) bool {
	var pe *cdp.ProtocolError
	if !errors.As(err, &pe) {
		return false
	}
	m := pe.Message
	return strings.Contains(m, "Cannot find context") || strings.Contains(m, "Execution context was destroyed") ||
		strings.Contains(m, "Inspected target navigated or closed") || strings.Contains(m, "No frame with given id") ||
		strings.Contains(m, "Frame with the given id was not found") || strings.Contains(m, "Cannot find default execution context") ||
		strings.Contains(m, "uniqueContextId not found") || strings.Contains(m, "Not attached to an active page")
}

// sessionEnded reports whether err says the session or the connection is
// gone.
func (p *Page) sessionEnded(err error) bool {
	return errors.Is(err, cdp.ErrDetached) || errors.Is(err, cdp.ErrClosed) || p.isGone()
}

// readErr classifies the failure of an operation that changed nothing.
func (p *Page) readErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var r *fsm.Refusal
	if errors.As(err, &r) {
		return err
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fsm.Refuse(fsm.Timeout, "the page did not answer before the call's deadline").WithCause(err)
		}
		return fmt.Errorf("surface: %w", ctx.Err())
	}
	if r := tooLarge("the browser's reply", err); r != nil {
		return r
	}
	if errors.Is(err, cdp.ErrClosed) {
		return fsm.Refuse(fsm.AttachmentLost, "the browser connection ended").WithCause(err)
	}
	if p.sessionEnded(err) {
		return fsm.Refuse(fsm.PageClosed, "the page is closed").WithCause(err)
	}
	if errors.Is(err, errWorldGone) {
		return fsm.Refuse(fsm.BindingStale, "the document was replaced").WithCause(err)
	}
	return err
}

// dispatchErr classifies the failure of a side-effecting command: unless
// the browser answered with an error, the effect may have happened.
func (p *Page) dispatchErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var pe *cdp.ProtocolError
	if errors.As(err, &pe) && !isContextGone(err) {
		return fmt.Errorf("surface: the browser refused the input: %w", err)
	}
	return fsm.Refuse(fsm.OutcomeUnknown, "the acknowledgement of the input was lost; it is not replayed").WithCause(err)
}

// live refuses when the page is closed or a dialog blocks the page.
func (p *Page) live() error {
	if p.closed.Load() {
		return fsm.Refuse(fsm.PageClosed, "the page handle is closed")
	}
	if p.isGone() {
		return fsm.Refuse(fsm.PageClosed, "the page is closed")
	}
	p.mu.Lock()
	d := p.dialog
	p.mu.Unlock()
	if d != nil {
		// A JavaScript dialog blocks every script in the page.
		return fsm.Refusef(fsm.DialogOpen, "a JavaScript %s dialog is open: accept or dismiss it first", d.Type)
	}
	return nil
}

// judge applies Options.Judge to a document URL; nil Judge allows all.
func (p *Page) judge(rawURL string) error {
	if p.opts.Judge == nil {
		return nil
	}
	return p.opts.Judge(rawURL)
}

// acquire takes the mutation gate, if any.
func (p *Page) acquire(ctx context.Context) (func(), error) {
	if p.opts.Gate == nil {
		return func() {}, nil
	}
	return p.opts.Gate.Acquire(ctx)
}

// begin starts a side-effecting operation: it takes the page's gate (held
// across revalidation, dispatch and verification) and checks the page is
// still live. The caller defers the returned release.
func (p *Page) begin(ctx context.Context) (func(), error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.live(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

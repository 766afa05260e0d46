package surface

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// Wait bounds.
const (
	// DefaultWaitTimeout is the timeout of a wait that names none.
	DefaultWaitTimeout = 10 * time.Second
	// MaxWaitTimeout bounds any wait.
	MaxWaitTimeout = 120 * time.Second
)

// WaitOptions says what to wait for. Condition is one of load, url, text,
// text_gone, visible, hidden, enabled. URL (exact) and URLIncludes
// constrain every condition; "url" waits for them alone. Text conditions use
// Text (visible text, innerText); element conditions use Target.
type WaitOptions struct {
	Condition   string
	Text        string
	Target      *Target
	URL         string
	URLIncludes string
	// Timeout bounds the wait; 0 means DefaultWaitTimeout.
	Timeout time.Duration
}

// WaitResult is the outcome of a wait. A timeout is Found false, not an
// error.
type WaitResult struct {
	Found     bool   `json:"found"`
	Condition string `json:"condition"`
	URL       string `json:"url,omitempty"`
	ElapsedMS int64  `json:"elapsedMs"`
}

// Wait waits for a condition, driven by page events (MutationObserver, load,
// navigation events) and never by sleeping. hidden holds when no match is
// visible (absent, or all hidden); visible and enabled need exactly one
// visible match (or Target.Index), and several visible matches are refused
// as ambiguous at once. Waits are read-only: a document replaced during the
// wait is observed again, up to the timeout.
//
// Under a Judge, the main document is judged before each look at it and
// when the wait ends, and the main frame's navigation interrupts the look:
// a page that leaves for a denied origin ends the wait at that navigation
// with the Judge's refusal, having run nothing in the denied document, so
// whether it holds the awaited text cannot change when or how the wait ends.
func (p *Page) Wait(ctx context.Context, o WaitOptions) (*WaitResult, error) {
	switch o.Condition {
	case "load", "url", "text", "text_gone":
		if (o.Condition == "text" || o.Condition == "text_gone") && o.Text == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, o.Condition+" needs text")
		}
		if o.Condition == "url" && o.URL == "" && o.URLIncludes == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "url needs url or urlIncludes")
		}
	case "visible", "hidden", "enabled":
		if o.Target == nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, o.Condition+" needs a target")
		}
		if err := o.Target.validate(); err != nil {
			return nil, err
		}
	default:
		return nil, fsm.Refuse(fsm.InvalidArgument, "condition is one of load, url, text, text_gone, visible, hidden, enabled")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	if timeout > MaxWaitTimeout {
		timeout = MaxWaitTimeout
	}
	start := time.Now()
	deadline := start.Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-readReserve).Before(deadline) {
		deadline = dl.Add(-readReserve)
	}
	res := &WaitResult{Condition: o.Condition}
	done := func(found bool) (*WaitResult, error) {
		if err := p.judgeMain(); err != nil {
			return nil, err // it ended on a denied page: nothing of it is reported
		}
		res.Found = found
		res.ElapsedMS = time.Since(start).Milliseconds()
		return res, nil
	}
	for i := 0; ; i++ {
		if err := p.live(); err != nil {
			return nil, err
		}
		_, mainNav := p.mainDoc()
		if err := p.judgeMain(); err != nil {
			return nil, err
		}
		if i > 1000 { // a page navigating in a loop: still bounded
			return done(false)
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return done(false)
		}
		p.mu.Lock()
		navCh, loading := p.loadCh, p.loading
		p.mu.Unlock()
		if o.URL != "" || o.URLIncludes != "" {
			id, err := p.Identity(ctx)
			if err != nil {
				var r *fsm.Refusal
				if errors.As(err, &r) && r.Code != fsm.BindingStale {
					return nil, err
				}
				if ctx.Err() != nil {
					return done(false)
				}
			}
			if id != nil {
				if err := p.judge(id.URL); err != nil {
					return nil, err
				}
			}
			if id == nil || !urlMatches(id.URL, o) {
				if !waitChan(navCh, deadline, ctx) {
					return done(false)
				}
				continue
			}
			res.URL = id.URL
			if o.Condition == "url" {
				return done(true)
			}
		}
		if o.Condition == "load" && loading {
			if !waitChan(navCh, deadline, ctx) {
				return done(false)
			}
			continue
		}
		found, err := p.waitInPage(ctx, o, time.Until(deadline), mainNav)
		if errors.Is(err, errWorldGone) || errors.Is(err, errMainNavigated) {
			continue // the document was replaced: judge and observe the new one
		}
		if err != nil {
			return nil, err
		}
		if !found {
			return done(false)
		}
		if o.Condition == "load" {
			p.mu.Lock()
			loading = p.loading
			p.mu.Unlock()
			if loading {
				continue
			}
		}
		return done(true)
	}
}

func urlMatches(u string, o WaitOptions) bool {
	if o.URL != "" && u != o.URL {
		return false
	}
	if o.URLIncludes != "" && !strings.Contains(u, o.URLIncludes) {
		return false
	}
	return true
}

func waitChan(ch <-chan struct{}, deadline time.Time, ctx context.Context) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// errMainNavigated reports that the main frame committed a new document
// while we looked at the old one.
var errMainNavigated = errors.New("surface: the main frame navigated")

// mainDoc returns the main frame's committed URL and a channel closed when
// it commits another document.
func (p *Page) mainDoc() (string, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mainURL, p.mainNav
}

// judgeMain judges the main frame's committed URL, as its navigation
// events report it (nothing runs in the page to learn it).
func (p *Page) judgeMain() error {
	u, _ := p.mainDoc()
	return p.judge(u)
}

// judgeMainWorld judges the URL of w's own document when w is in the main
// frame, read inside w: a world lives and dies with one document, so what
// then runs in w runs in the document judged, even when the navigation
// events lag. It returns the Judge's refusal, or errWorldGone or the
// failure to read (wrapped in errUnjudged).
func (p *Page) judgeMainWorld(ctx context.Context, w *world) error {
	if p.opts.Judge == nil || w.sess != p.sess || w.frame != p.main {
		return nil
	}
	r, err := invoke(ctx, p, w, jsIdentity, none{})
	if err != nil {
		if errors.Is(err, errWorldGone) {
			return err
		}
		return fmt.Errorf("%w: %w", errUnjudged, err)
	}
	return p.judge(r.URL)
}

// errUnjudged wraps the failure to read a document's URL for the Judge.
var errUnjudged = errors.New("surface: the document's URL could not be read")

// invokeUntilNav is invoke, interrupted when nav closes (the main frame
// committed another document): it then fails with errMainNavigated at
// once, without waiting for the old document's answer.
func invokeUntilNav[A, R any](ctx context.Context, p *Page, w *world, fn jsFn[A, R], arg A, nav <-chan struct{}) (R, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-nav:
			cancel()
		case <-stop:
		}
	}()
	out, err := invoke(cctx, p, w, fn, arg)
	select {
	case <-nav:
		return out, errMainNavigated
	default:
	}
	return out, err
}

// waitInPage runs the condition's in-page wait for at most d, in a judged
// document, until the main frame navigates (nav closes).
func (p *Page) waitInPage(ctx context.Context, o WaitOptions, d time.Duration, nav <-chan struct{}) (bool, error) {
	arg := waitArgs{Cond: o.Condition, Text: o.Text, Timeout: d.Milliseconds()}
	var w *world
	if o.Target != nil {
		b, err := p.bind(ctx, *o.Target)
		if err != nil {
			return false, p.readErr(ctx, err)
		}
		w = b.w
		arg.Target = &b.pt
	} else {
		var err error
		if w, err = p.mainWorld(ctx); err != nil {
			return false, p.readErr(ctx, err)
		}
	}
	// Frames are judged where a target binds to them; the main document is
	// judged here, in the world the wait will run in.
	if err := p.judgeMainWorld(ctx, w); err != nil {
		if errors.Is(err, errWorldGone) && o.Target != nil && o.Target.Ref != "" {
			return false, fsm.Refuse(fsm.BindingStale, "the ref's document was replaced (navigation or reload)")
		}
		if errors.Is(err, errWorldGone) {
			return false, err
		}
		return false, p.readErr(ctx, err) // the Judge's refusal is returned as it is
	}
	// The page's own timer ends the wait; the call's deadline is a backstop.
	cctx, cancel := context.WithTimeout(ctx, d+2*time.Second)
	defer cancel()
	r, err := invokeUntilNav(cctx, p, w, jsWait, arg, nav)
	if errors.Is(err, errMainNavigated) {
		return false, err
	}
	if err != nil {
		if errors.Is(err, errWorldGone) && o.Target != nil && o.Target.Ref != "" {
			return false, fsm.Refuse(fsm.BindingStale, "the ref's document was replaced (navigation or reload)")
		}
		if errors.Is(err, errWorldGone) {
			return false, err
		}
		if cctx.Err() != nil && ctx.Err() == nil {
			return false, nil
		}
		return false, p.readErr(ctx, err)
	}
	if r.Err == fsm.BindingStale && (o.Target == nil || o.Target.Ref == "") {
		p.dropWorld(w)
		return false, errWorldGone
	}
	if r.Err != "" {
		return false, r.refusal()
	}
	return r.Found, nil
}

package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lifetime"
)

// rawDetachTimeout bounds detaching a raw session at a reset.
const rawDetachTimeout = 5 * time.Second

// rawSession is raw CDP's own flattened session on a page, owned by its
// machine (lifetime.RawSessionSpec): never the page surface's, so a raw
// command cannot disable or reconfigure the domains the surface relies on,
// and a reset is just a detach (Target.detachFromTarget clears everything
// Chrome keeps per session: overrides, extra headers, scripts for new
// documents, enabled domains, breakpoints).
//
// It is attached lazily by the first raw command, and reset (detached; the
// next command attaches a fresh one) whenever the page's main frame commits
// a new document: at once by a watcher of the surface session's
// Page.frameNavigated, and in any case before the next command, which finds
// the document it was attached in replaced. So what a raw command set up in
// one document never survives into a document committed after the next one
// (a command's effect on the very next document, such as a script planted
// for new documents, is why an allowlist withholds such commands whole).
//
// mu serializes firing and guards the fields; the watcher goroutine belongs
// to the browser's watchWG, ends with the surface session or the browser,
// and is waited for by closeBrowser.
type rawSession struct {
	p *Page
	m rawOwner

	mu        sync.Mutex
	sess      *cdp.Session // the attached session; nil unless the machine is attached
	doc       string       // the surface's id of the document sess was attached in
	attachErr error        // why attach_raw_session last failed, for the command that fired it
}

type rawOwner = *fsm.Owner[lifetime.RawState, lifetime.RawTrigger, struct{}]

type rawStep = fsm.Step[lifetime.RawState, lifetime.RawTrigger]

func newRawSession(p *Page) *rawSession {
	r := &rawSession{p: p}
	r.m = fsm.NewOwner(lifetime.RawSessionSpec, fsm.Effects[lifetime.RawState, lifetime.RawTrigger]{
		lifetime.EffectWatchCommits: r.watchCommits,
		lifetime.EffectAttachRaw:    r.attach,
		lifetime.EffectDetachRaw:    r.detach,
	})
	return r
}

// rawSession returns the page's raw session for the document doc (the
// surface's document id, just authorized): the live one if it was attached
// in doc, else a fresh one after detaching the old.
func (p *Page) rawSession(ctx context.Context, doc string) (*cdp.Session, error) {
	r := p.raw
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m.State() == lifetime.RawAttached {
		select {
		case <-r.sess.Done():
			r.fireLocked(ctx, lifetime.RawDropped) // the target navigated away or crashed
		default:
			if r.doc != doc {
				r.fireLocked(ctx, lifetime.RawCommitted)
			}
		}
	}
	if r.m.State() != lifetime.RawAttached {
		r.attachErr = nil
		r.fireLocked(ctx, lifetime.RawCommand)
		if r.m.State() == lifetime.RawAttached {
			r.doc = doc // the document it was authorized in
		}
	}
	switch r.m.State() {
	case lifetime.RawAttached:
		return r.sess, nil
	case lifetime.RawClosed:
		return nil, fsm.Refuse(fsm.AttachmentLost, "the browser is closing")
	default:
		return nil, fmt.Errorf("runner: attach the raw CDP session: %w", r.attachErr)
	}
}

// fireLocked fires t with r.mu held; a refusal leaves the state as it was,
// which the caller reads.
func (r *rawSession) fireLocked(ctx context.Context, t lifetime.RawTrigger) {
	if _, err := r.m.Fire(ctx, t); err != nil {
		if _, refused := fsm.AsRefusal(err); !refused {
			r.p.browser.r.logf("runner: page %s: raw CDP session: %s: %v", r.p.id, t, err)
		}
	}
}

// close ends the raw session with its page (retired, or its browser torn
// down): the connection takes the session with it.
func (r *rawSession) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fireLocked(context.Background(), lifetime.RawClose)
	r.sess, r.doc = nil, ""
}

// attach is attach_raw_session.
func (r *rawSession) attach(ctx context.Context, _ rawStep) (lifetime.RawTrigger, error) {
	s, err := r.p.browser.c().AttachTarget(ctx, r.p.target)
	if err != nil {
		r.attachErr = err
		return lifetime.RawAttachFailed, nil
	}
	r.sess = s
	return lifetime.RawAttachedOK, nil
}

// detach is detach_raw_session. Chrome drops the session's state with it;
// a command in flight on it fails (outcome_unknown).
func (r *rawSession) detach(context.Context, rawStep) (lifetime.RawTrigger, error) {
	old := r.sess
	r.sess, r.doc = nil, ""
	ctx, cancel := context.WithTimeout(context.Background(), rawDetachTimeout)
	defer cancel()
	if err := old.Detach(ctx); err != nil {
		select {
		case <-old.Done():
		default:
			r.p.browser.r.logf("runner: page %s: detaching the raw CDP session: %s", r.p.id, refusalCode(err))
		}
	}
	return "", nil
}

// watchCommits is watch_commits: it subscribes to the page's main-frame
// commits before the first attach, so no commit after the attach goes
// unseen, and resets the raw session on each. It runs until the surface
// session ends or the browser is torn down; a browser already closing
// ends the raw session instead.
func (r *rawSession) watchCommits(context.Context, rawStep) (lifetime.RawTrigger, error) {
	p := r.p
	b := p.browser
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.stop:
		return lifetime.RawClose, nil
	default:
	}
	navigated, cancel := p.sess.Subscribe("Page.frameNavigated")
	b.watchWG.Add(1)
	go func() {
		defer b.watchWG.Done()
		defer cancel()
		for {
			select {
			case raw, ok := <-navigated:
				if !ok {
					return // the surface session ended: the target is gone
				}
				var ev page.EventFrameNavigated
				if jsonv2.Unmarshal(raw, &ev) != nil || ev.Frame == nil || ev.Frame.ParentID != "" {
					continue // a subframe's navigation: the page's document stays
				}
				r.mu.Lock()
				if r.m.Permitted(lifetime.RawCommitted) {
					r.fireLocked(context.Background(), lifetime.RawCommitted)
				}
				r.mu.Unlock()
			case <-b.stop:
				return
			}
		}
	}()
	return lifetime.RawAttach, nil
}

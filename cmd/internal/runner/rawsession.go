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
)

// rawDetachTimeout bounds detaching a raw session at a reset.
const rawDetachTimeout = 5 * time.Second

// rawSession is raw CDP's own flattened session on a page: never the page
// surface's, so a raw command cannot disable or reconfigure the domains the
// surface relies on, and a reset is just a detach (Target.detachFromTarget
// clears everything Chrome keeps per session: overrides, extra headers,
// scripts for new documents, enabled domains, breakpoints).
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
// mu guards the fields; the watcher goroutine belongs to the browser's
// watchWG, ends with the surface session or the browser, and is waited for
// by closeBrowser.
type rawSession struct {
	mu       sync.Mutex
	sess     *cdp.Session // nil until the first raw command, and after a reset
	doc      string       // the surface's id of the document sess was attached in
	watching bool         // the watcher runs
	resets   int          // how many sessions were reset (tests)
}

// rawSession returns the page's raw session for the document doc (the
// surface's document id, just authorized): the live one if it was attached
// in doc, else a fresh one after detaching the old.
func (p *Page) rawSession(ctx context.Context, doc string) (*cdp.Session, error) {
	r := &p.raw
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		select {
		case <-r.sess.Done():
			r.sess = nil // detached by the browser (the target navigated away or crashed)
		default:
			if r.doc != doc {
				p.resetLocked()
			}
		}
	}
	if r.sess != nil {
		return r.sess, nil
	}
	// The watcher subscribes before the attach, so no commit after the
	// attach goes unseen.
	if !r.watching {
		if err := p.startRawWatch(); err != nil {
			return nil, err
		}
		r.watching = true
	}
	s, err := p.browser.c().AttachTarget(ctx, p.target)
	if err != nil {
		return nil, fmt.Errorf("runner: attach the raw CDP session: %w", err)
	}
	r.sess, r.doc = s, doc
	return s, nil
}

// resetLocked detaches the raw session, if any. Chrome drops the session's
// state with it; a command in flight on it fails (outcome_unknown).
func (p *Page) resetLocked() {
	r := &p.raw
	if r.sess == nil {
		return
	}
	old := r.sess
	r.sess, r.doc = nil, ""
	r.resets++
	ctx, cancel := context.WithTimeout(context.Background(), rawDetachTimeout)
	defer cancel()
	if err := old.Detach(ctx); err != nil {
		select {
		case <-old.Done():
		default:
			p.browser.r.logf("runner: page %s: detaching the raw CDP session: %s", p.id, refusalCode(err))
		}
	}
}

// startRawWatch starts the goroutine that resets the raw session when the
// page's main frame commits a document. It runs until the surface session
// ends or the browser is torn down.
func (p *Page) startRawWatch() error {
	b := p.browser
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.stop:
		return fsm.Refuse(fsm.AttachmentLost, "the browser is closing")
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
				p.raw.mu.Lock()
				p.resetLocked()
				p.raw.mu.Unlock()
			case <-b.stop:
				return
			}
		}
	}()
	return nil
}

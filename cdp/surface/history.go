package surface

import (
	"context"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/fsm"
)

// GoHistory moves the tab delta entries through its session history (-1
// back, +1 forward). judge sees the entry's URL before anything moves: an
// entry the caller may not load is refused with judge's refusal, exactly as
// Navigate's caller refuses a URL, and the tab stays where it was (a page
// restored from the back/forward cache would otherwise show a denied
// origin without a request the network gate could stop). The result is
// read back live, like Navigate's.
func (p *Page) GoHistory(ctx context.Context, delta int, judge func(rawURL string) error) (*NavResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	h, err := cdproto.Call(ctx, p.sess, page.GetNavigationHistory, cdproto.Empty{})
	if err != nil {
		return nil, p.dispatchErr(ctx, err)
	}
	i := int(h.CurrentIndex) + delta
	if i < 0 || i >= len(h.Entries) || h.Entries[i] == nil {
		if delta < 0 {
			return nil, fsm.Refuse(fsm.NotFound, "there is no earlier page in this tab's history")
		}
		return nil, fsm.Refuse(fsm.NotFound, "there is no later page in this tab's history")
	}
	entry := h.Entries[i]
	if judge != nil {
		if err := judge(entry.URL); err != nil {
			return nil, err
		}
	}
	move := func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, p.sess, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: entry.ID})
		return err
	}
	// An entry the history API made is reached without a new document:
	// the tab's current index says so.
	arrived := func(ctx context.Context) bool {
		h, err := cdproto.Call(ctx, p.sess, page.GetNavigationHistory, cdproto.Empty{})
		return err == nil && int(h.CurrentIndex) == i
	}
	return p.moveAndRead(ctx, move, arrived)
}

// Reload reloads the tab's document (bypassing the cache when asked) and
// reads the new document back. The caller judges the current URL first.
func (p *Page) Reload(ctx context.Context, ignoreCache bool) (*NavResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return p.moveAndRead(ctx, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, p.sess, page.Reload, page.ReloadParams{IgnoreCache: &ignoreCache})
		return err
	}, nil)
}

// moveAndRead runs move, then waits (within ctx, less readReserve) for the
// main frame to commit a new document and stop loading, or, woken by a
// same-document navigation, for sameDoc to say the move arrived; a
// JavaScript dialog ends the wait and is reported. Then the document's
// identity is read live.
func (p *Page) moveAndRead(ctx context.Context, move func(context.Context) error, sameDoc func(context.Context) bool) (*NavResult, error) {
	p.mu.Lock()
	nav, dch := p.mainNav, p.dialogCh
	p.mu.Unlock()
	if err := move(ctx); err != nil {
		if isProtocolError(err) {
			return nil, fsm.Refuse(fsm.NavigationFailed, "the browser refused to move through the history").WithCause(err)
		}
		return nil, p.dispatchErr(ctx, err)
	}
	wctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, dl.Add(-readReserve))
		defer cancel()
	}
	out := &NavResult{}
	committed, woken := false, false
wait:
	for {
		p.mu.Lock()
		select {
		case <-nav:
			committed = true
		default:
		}
		loading, loadCh := p.loading, p.loadCh
		p.mu.Unlock()
		switch {
		case committed && !loading:
			out.Loaded = true
			break wait
		case !committed && woken && sameDoc != nil && sameDoc(wctx):
			out.SameDocument, out.Loaded = true, true
			break wait
		}
		select {
		case <-nav:
		case <-loadCh:
			woken = true
		case <-dch:
			out.Dialog = p.Dialog()
			return out, nil
		case <-p.gone:
			return nil, fsm.Refuse(fsm.PageClosed, "the tab closed while moving through its history")
		case <-wctx.Done():
			if !committed {
				return nil, fsm.Refuse(fsm.Timeout, "the tab did not move within the call's bound")
			}
			break wait // committed, still loading: what is known is read
		}
	}
	id, err := p.Identity(ctx)
	if err != nil {
		if !out.Loaded && fsm.IsCode(err, fsm.Timeout) {
			return out, nil // committed, still loading: what is known is returned
		}
		return out, err
	}
	out.DocIdentity = *id
	return out, nil
}

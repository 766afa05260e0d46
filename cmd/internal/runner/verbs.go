package runner

import (
	"context"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// serveVerbs adds the routes of downloads (downloads.go), history (below)
// and tab handover (tabs.go) to the Runner's route table.
func (r *Runner) serveVerbs(rt *localapi.Routes) {
	localapi.Serve(rt, localapi.Downloads, bounded(r, r.Downloads))
	localapi.Serve(rt, localapi.SaveDownload, bounded(r, r.SaveDownload))
	localapi.Serve(rt, localapi.Back, bounded(r, r.Back))
	localapi.Serve(rt, localapi.Forward, bounded(r, r.Forward))
	localapi.Serve(rt, localapi.Reload, bounded(r, r.Reload))
	localapi.Serve(rt, localapi.Handover, bounded(r, r.Handover))
	localapi.Serve(rt, localapi.Activate, bounded(r, r.Activate))
}

// Back moves a page one entry back in its history.
func (r *Runner) Back(ctx context.Context, req localapi.PageRequest) (localapi.NavResult, error) {
	return r.history(ctx, req, "back", func(ctx context.Context, p *Page) (*surface.NavResult, error) {
		return p.surf.GoHistory(ctx, -1, p.browser.gate.Check)
	})
}

// Forward moves a page one entry forward in its history.
func (r *Runner) Forward(ctx context.Context, req localapi.PageRequest) (localapi.NavResult, error) {
	return r.history(ctx, req, "forward", func(ctx context.Context, p *Page) (*surface.NavResult, error) {
		return p.surf.GoHistory(ctx, +1, p.browser.gate.Check)
	})
}

// Reload reloads a page.
func (r *Runner) Reload(ctx context.Context, req localapi.PageRequest) (localapi.NavResult, error) {
	return r.history(ctx, req, "reload", func(ctx context.Context, p *Page) (*surface.NavResult, error) {
		return p.surf.Reload(ctx, false)
	})
}

// history runs a move through a page's history under the same gate as
// Goto: the entry it goes to is judged before it moves (surface.GoHistory),
// and the document it lands on is judged again, leaving the page unreadable
// when it is off the allowlist.
func (r *Runner) history(ctx context.Context, req localapi.PageRequest, what string, move func(context.Context, *Page) (*surface.NavResult, error)) (_ localapi.NavResult, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, what, "", err) }()
	ctx, settle := r.call(ctx, req.Page, "the "+what, r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return localapi.NavResult{}, err
	}
	// As for Goto: an owned page that left the allowlist may still be moved
	// (back is the way home); a person's tab must be readable first, and a
	// reload always (it loads the current URL again).
	if p.personal() || what == "reload" {
		if err := p.authorize(ctx); err != nil {
			return localapi.NavResult{}, err
		}
	}
	nctx, cancel := context.WithTimeout(ctx, navigationTimeout)
	defer cancel()
	nav, err := move(nctx, p)
	if err != nil {
		return localapi.NavResult{}, err
	}
	p.navFailed.Store(false)
	loading := !nav.Loaded && nav.Dialog == nil
	if nav.URL == "" && loading {
		if nav.URL, nav.Title, err = p.targetInfo(context.WithoutCancel(ctx)); err != nil {
			return localapi.NavResult{}, err
		}
	}
	if nav.URL != "" {
		if err := p.judge(nav.URL); err != nil {
			return localapi.NavResult{}, err // worded as Goto words it
		}
	}
	p.remember(nav.URL, nav.Title)
	return localapi.NavResult{Page: p.id, URL: nav.URL, Title: nav.Title, Status: int(nav.Status), Loading: loading}, nil
}

package runner

import (
	"context"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// serveVerbs adds the routes of downloads (downloads.go), history (below)
// and tab handover (tabs.go) to the Runner's route table.
func (r *Runner) serveVerbs(rt *localapi.Routes) {
	localapi.Serve(rt, localapi.Downloads, bounded(r, r.Downloads))
	localapi.Serve(rt, localapi.SaveDownload, bounded(r, r.SaveDownload))
	localapi.Serve(rt, localapi.Handover, bounded(r, r.Handover))
	localapi.Serve(rt, localapi.Activate, bounded(r, r.Activate))
}

// history runs a move through a page's history under the same gate as
// goto: the entry it goes to is judged before it moves (surface.GoHistory),
// and the document it lands on is judged again, leaving the page unreadable
// when it is off the allowlist. An owned page that left the allowlist may
// still be moved (back is the way home); a person's tab must be readable
// first, and a reload always (op.Back, op.Forward, op.Reload declare it).
func (r *Runner) history(ctx context.Context, p *Page, move func(context.Context) (*surface.NavResult, error)) (op.NavResult, error) {
	nctx, cancel := context.WithTimeout(ctx, navigationTimeout)
	defer cancel()
	nav, err := move(nctx)
	if err != nil {
		return op.NavResult{}, err
	}
	p.navFailed.Store(false)
	loading := !nav.Loaded && nav.Dialog == nil
	if nav.URL == "" && loading {
		if nav.URL, nav.Title, err = p.targetInfo(context.WithoutCancel(ctx)); err != nil {
			return op.NavResult{}, err
		}
	}
	if nav.URL != "" {
		if err := p.judge(nav.URL); err != nil {
			return op.NavResult{}, err // worded as goto words it
		}
	}
	p.remember(nav.URL, nav.Title)
	return op.NavResult{Page: p.id, URL: nav.URL, Title: nav.Title, Status: int(nav.Status), Loading: loading}, nil
}

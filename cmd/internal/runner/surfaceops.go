package runner

import (
	"context"
	"encoding/json"
	"fmt"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// readablePage returns the page after judging its live URL.
func (r *Runner) readablePage(ctx context.Context, id string) (*Page, error) {
	p, err := r.page(id)
	if err != nil {
		return nil, err
	}
	if err := p.authorize(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// readablePageAt is readablePage that also returns the origin it judged,
// so that an action audits the origin it acted on without reading the page
// a second time (one CDP round trip less per action).
func (r *Runner) readablePageAt(ctx context.Context, id string) (*Page, string, error) {
	p, err := r.page(id)
	if err != nil {
		return nil, "", err
	}
	ident, err := p.surf.Identity(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := p.judge(ident.URL); err != nil {
		return nil, "", err
	}
	return p, originOf(ident.URL), nil
}

// recorded decodes an effect's answer as the ledger recorded it (as JSON,
// to replay it to a repeated key).
func recorded[T any](raw json.RawMessage, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("runner: decode the recorded answer: %w", err)
	}
	return v, nil
}

// ClosePage closes a page webcodex opened itself; a tab of the person's is
// never closed.
func (r *Runner) ClosePage(ctx context.Context, req localapi.ClosePageRequest) (_ localapi.ClosePageResult, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, "close_page", "", err) }()
	ctx, settle := r.call(ctx, "", "closing the page", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return localapi.ClosePageResult{}, err
	}
	p.browser.mu.Lock()
	opened := p.opened
	p.browser.mu.Unlock()
	if p.browser.attached() && !opened {
		return localapi.ClosePageResult{}, fsm.Refuse(fsm.WrongTargetRefused, "this tab was not opened by webcodex; it is never closed by it")
	}
	if _, err := cdproto.Call(ctx, p.browser.c().Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: p.target}); err != nil {
		return localapi.ClosePageResult{}, fmt.Errorf("runner: close page: %w", err)
	}
	p.browser.mu.Lock()
	delete(p.browser.pages, p.id)
	p.browser.mu.Unlock()
	r.mu.Lock()
	r.retireLocked(p.id)
	r.mu.Unlock()
	p.surf.Close()
	return localapi.ClosePageResult{Page: p.id, Closed: true}, nil
}

package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// servePlaywright serves the verbs Playwright MCP has that the rest of the
// route table did not.
func (r *Runner) servePlaywright(rt *localapi.Routes) {
	localapi.Serve(rt, localapi.PDF, bounded(r, r.PDF))
}

// PDF prints a page of a browser webcodex owns; the surface refuses a page
// that holds a frame of a denied origin (spec/boundaries.md). A person's
// browser is never printed: its print path is the person's own.
func (r *Runner) PDF(ctx context.Context, req localapi.PageRequest) (_ localapi.PDFResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the PDF", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.PDFResult{}, err
	}
	if p.browser.attached() {
		return localapi.PDFResult{}, fsm.Refuse(fsm.RouteUnavailable, "a PDF is printed only from a browser webcodex launched, not from the person's own")
	}
	data, err := p.surf.PDF(ctx)
	if err != nil {
		return localapi.PDFResult{}, err
	}
	return localapi.PDFResult{Page: p.id, PDF: data}, nil
}

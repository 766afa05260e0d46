package runner

import (
	"context"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// serveParity serves the operations of Playwright MCP's that webcodex
// lacked (op/parity_ops.go).
func serveParity(s *opServer) {
	serveAction(s, op.Drag, func(ctx context.Context, p *Page, in op.DragIn) (*surface.ActionResult, error) {
		from, err := need(op.Drag.Name, in.Target)
		if err != nil {
			return nil, err
		}
		if in.To == nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "drag needs the element to drag to (to)")
		}
		return p.surf.Drag(ctx, from, surface.Target(*in.To))
	})
	serveRequest(s)
}

// serveRequest serves one request's details.
func serveRequest(s *opServer) {
	servePageOp(s, op.NetworkRequest, func(ctx context.Context, p *Page, in op.NetworkRequestIn) (op.RequestResult, error) {
		d, err := p.surf.RequestDetails(ctx, in.Seq, in.Part)
		if err != nil {
			return op.RequestResult{}, err
		}
		out := op.RequestDetail{Entry: wireDiag(d.Entry), RequestBody: d.RequestBody, ResponseBody: d.ResponseBody,
			MimeType: d.MimeType, Truncated: d.Truncated, Notes: d.Notes}
		for _, h := range d.RequestHeaders {
			out.RequestHeaders = append(out.RequestHeaders, op.Header(h))
		}
		for _, h := range d.ResponseHeaders {
			out.ResponseHeaders = append(out.ResponseHeaders, op.Header(h))
		}
		return op.RequestResult{Page: p.id, RequestDetail: out}, nil
	})
}

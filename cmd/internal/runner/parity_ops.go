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
}

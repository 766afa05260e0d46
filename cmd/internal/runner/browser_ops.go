package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// The Runner's handlers of the operations addressed to a browser or to the
// Runner itself (op/browser_ops.go): one per operation, each served by
// serveOp, which derives admission and the time bound from the declaration.

// serveRunnerOps adds the table's browser and Runner operations to s.
func serveRunnerOps(s *opServer) {
	r := s.r
	serveOp(s, op.Ping, func(context.Context, struct{}) (op.PingResult, error) {
		sb := sandboxInfo()
		return op.PingResult{OK: true, Version: cmdutil.Version, Env: r.env, Sandbox: &sb}, nil
	})
	serveOp(s, op.Status, func(ctx context.Context, _ struct{}) (op.RunnerStatus, error) { return r.Status(ctx) })
	serveOp(s, op.Discover, r.Discover)
	serveOp(s, op.BridgeStatus, r.BridgeStatus)
	serveOp(s, op.EndSession, r.EndSession)
	serveOp(s, op.Stop, r.stop)
}

// serveOp serves the operation o, addressed to a browser, to nothing, or
// to a page its handler finds itself: admitted by what its input names as
// o.Admit says (before it runs), its refusals naming that browser and
// page, and bounded by o.Bound — but for an operation that waits for a
// person, which bounds each wait by its own deadline.
func serveOp[In, Out any](s *opServer, o *op.Op[In, Out], h func(context.Context, In) (Out, error)) {
	r := s.r
	localapi.Serve(s.rt, localapi.Of(o), func(ctx context.Context, in In) (_ Out, err error) {
		a := op.AddrOf(in)
		ids := addressed{Page: a.Page, Browser: a.Browser}
		defer func() { err = ids.about(err) }()
		if err := r.admitAs(ctx, o.Admit, ids); err != nil {
			var zero Out
			return zero, err
		}
		if o.Bound != op.PersonBound {
			var settle func(error) error
			ctx, settle = r.call(ctx, ids.Page, "the "+o.Name, r.boundOf(o.Bound, in))
			defer func() { err = settle(err) }()
		}
		return h(ctx, in)
	})
}

// admitAs refuses a call addressed to a browser or page its client may not
// see (admit); for an operation that changes whose a browser is, one its
// client's boundary did not create.
func (r *Runner) admitAs(ctx context.Context, how op.Admission, ids addressed) error {
	switch how {
	case op.AdmitPage, op.AdmitBrowser, op.AdmitNothing:
		return r.admit(ctx, ids)
	case op.AdmitCreator:
		r.mu.Lock()
		b := r.browsers[ids.Browser]
		r.mu.Unlock()
		if b != nil && !b.creatorAdmits(ctx) {
			return fsm.Refuse(fsm.NotFound, "no such browser")
		}
		return nil
	}
	panic("runner: an operation with no admission")
}

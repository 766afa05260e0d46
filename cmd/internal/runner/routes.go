package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// Routes returns the local API's route table over this Runner. Routes that
// name a browser or page are admitted first (bounded); the rest check what
// they need inside.
func (r *Runner) Routes() *localapi.Routes {
	rt := &localapi.Routes{Redact: r.redactor()}
	localapi.Serve(rt, localapi.Launch, bounded(r, r.Launch))
	localapi.Serve(rt, localapi.Pages, bounded(r, r.Pages))
	localapi.Serve(rt, localapi.Open, bounded(r, r.Open))
	localapi.Serve(rt, localapi.Close, bounded(r, r.Close))
	localapi.Serve(rt, localapi.Attach, bounded(r, r.Attach))
	localapi.Serve(rt, localapi.AttachOffer, bounded(r, r.AttachOffer))
	localapi.Serve(rt, localapi.Approval, r.ApprovalInfo)
	localapi.Serve(rt, localapi.Approve, r.Approve)
	localapi.Serve(rt, localapi.Deny, r.Deny)
	localapi.Serve(rt, localapi.Reconnect, bounded(r, r.Reconnect))
	localapi.Serve(rt, localapi.ClosePage, bounded(r, r.ClosePage))
	localapi.Serve(rt, localapi.CDP, bounded(r, r.CDP))
	localapi.Serve(rt, localapi.Adopt, r.Adopt) // within the creator boundary, checked inside
	r.serveVerbs(rt)                            // downloads, history, handover (verbs.go)
	r.serveOps(rt)                              // the operation table (ops.go)
	return rt
}

// ApprovalRoutes is the route table of an embedded Runner's approval
// socket (webcodex mcp without --runner): only what `webcodex mcp approve`
// needs, with approve checked for a person at a terminal exactly as on the
// daemon's socket. Browsers are never driven through it.
func (r *Runner) ApprovalRoutes() *localapi.Routes {
	rt := &localapi.Routes{Redact: r.redactor()}
	s := &opServer{r: r, rt: rt}
	serveOp(s, op.Ping, func(context.Context, struct{}) (op.PingResult, error) {
		return op.PingResult{OK: true, Version: cmdutil.Version, Env: r.env}, nil
	})
	localapi.Serve(rt, localapi.Approval, r.ApprovalInfo)
	localapi.Serve(rt, localapi.Approve, r.Approve)
	localapi.Serve(rt, localapi.Deny, r.Deny)
	return rt
}

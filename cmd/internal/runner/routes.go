package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// Routes returns the local API's route table over this Runner.
func (r *Runner) Routes() *localapi.Routes {
	rt := &localapi.Routes{}
	localapi.Handle(rt, "ping", func(context.Context, struct{}) (localapi.PingResult, error) {
		sb := sandboxInfo()
		return localapi.PingResult{OK: true, Env: r.env, Sandbox: &sb}, nil
	})
	localapi.Handle(rt, "status", func(ctx context.Context, _ struct{}) (localapi.Status, error) { return r.Status(ctx) })
	localapi.Handle(rt, "launch", bounded(r, r.Launch))
	localapi.Handle(rt, "pages", bounded(r, r.Pages))
	localapi.Handle(rt, "open", bounded(r, r.Open))
	localapi.Handle(rt, "goto", bounded(r, r.Goto))
	localapi.Handle(rt, "read", bounded(r, r.Read))
	localapi.Handle(rt, "screenshot", bounded(r, r.Screenshot))
	localapi.Handle(rt, "eval", bounded(r, r.Eval))
	localapi.Handle(rt, "close", bounded(r, r.Close))
	localapi.Handle(rt, "attach", bounded(r, r.Attach))
	localapi.Handle(rt, "attach_offer", bounded(r, r.AttachOffer))
	localapi.Handle(rt, "bridge_status", r.BridgeStatus)
	localapi.Handle(rt, "approval", r.ApprovalInfo)
	localapi.Handle(rt, "approve", r.Approve)
	localapi.Handle(rt, "deny", r.Deny)
	localapi.Handle(rt, "reconnect", bounded(r, r.Reconnect))
	localapi.Handle(rt, "snapshot", bounded(r, r.Snapshot))
	localapi.Handle(rt, "act", bounded(r, r.Act))
	localapi.Handle(rt, "wait", bounded(r, r.Wait))
	localapi.Handle(rt, "console", bounded(r, r.Console))
	localapi.Handle(rt, "network", bounded(r, r.Network))
	localapi.Handle(rt, "probe", bounded(r, r.Probe))
	localapi.Handle(rt, "close_page", bounded(r, r.ClosePage))
	localapi.Handle(rt, "cdp", bounded(r, r.CDP))
	localapi.Handle(rt, "discover", r.Discover)
	localapi.Handle(rt, "end_session", r.EndSession)
	localapi.Handle(rt, "adopt", r.Adopt) // within the creator boundary, checked inside
	localapi.Handle(rt, "stop", r.stop)
	return rt
}

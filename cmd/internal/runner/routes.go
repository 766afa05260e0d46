package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// Routes returns the local API's route table over this Runner.
func (r *Runner) Routes() *localapi.Routes {
	rt := &localapi.Routes{}
	localapi.Handle(rt, "ping", func(context.Context, struct{}) (map[string]any, error) {
		return map[string]any{"ok": true}, nil
	})
	localapi.Handle(rt, "status", func(ctx context.Context, _ struct{}) (localapi.Status, error) { return r.Status(ctx) })
	localapi.Handle(rt, "launch", r.Launch)
	localapi.Handle(rt, "pages", r.Pages)
	localapi.Handle(rt, "open", r.Open)
	localapi.Handle(rt, "goto", r.Goto)
	localapi.Handle(rt, "read", r.Read)
	localapi.Handle(rt, "screenshot", r.Screenshot)
	localapi.Handle(rt, "eval", r.Eval)
	localapi.Handle(rt, "close", r.Close)
	localapi.Handle(rt, "attach", r.Attach)
	localapi.Handle(rt, "approval", r.ApprovalInfo)
	localapi.Handle(rt, "approve", r.Approve)
	localapi.Handle(rt, "deny", r.Deny)
	localapi.Handle(rt, "reconnect", r.Reconnect)
	localapi.Handle(rt, "snapshot", r.Snapshot)
	localapi.Handle(rt, "act", r.Act)
	localapi.Handle(rt, "wait", r.Wait)
	localapi.Handle(rt, "console", r.Console)
	localapi.Handle(rt, "network", r.Network)
	localapi.Handle(rt, "probe", r.Probe)
	localapi.Handle(rt, "close_page", r.ClosePage)
	localapi.Handle(rt, "cdp", r.CDP)
	localapi.Handle(rt, "discover", r.Discover)
	localapi.Handle(rt, "stop", func(context.Context, struct{}) (map[string]any, error) {
		if r.opts.Stop != nil {
			r.opts.Stop()
		}
		return map[string]any{"stopping": true}, nil
	})
	return rt
}

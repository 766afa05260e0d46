package runner

import (
	"context"
)

// ApproveFromHost records an approval a person gave through the MCP host:
// the second approval provider, beside `webcodex approve` at a terminal.
// Only the MCP server calls it, with the id of the request whose summary the
// host showed the person; it is not a local API route, so nothing that
// reaches the Runner's socket can approve through it. Approving does not
// attach: the attach that asked is retried, and the grant is bound to that
// request's scope as with any approval. The host's answer proves only what
// the MCP client says (spec/threat-model.md); the audit records it so.
func (r *Runner) ApproveFromHost(ctx context.Context, id string) (err error) {
	ev := &approvalEvidence{Request: id, Provider: "mcp_host", SecondFactor: "mcp_host"}
	defer func() { r.auditApproval(ctx, "approve_from_host", ev, err) }()
	if info, err := r.broker.Info(id); err == nil {
		ev.Requester = info.Requester
	}
	if err := r.broker.Approve(id); err != nil {
		return err
	}
	r.logf("runner: an approval request was approved through the MCP host")
	return nil
}

// DenyFromHost records a refusal the person gave through the MCP host.
func (r *Runner) DenyFromHost(ctx context.Context, id string) (err error) {
	ev := &approvalEvidence{Request: id, Provider: "mcp_host", SecondFactor: "mcp_host"}
	defer func() { r.auditApproval(ctx, "deny_from_host", ev, err) }()
	return r.broker.Deny(id)
}

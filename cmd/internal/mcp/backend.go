package mcp

import (
	"context"
	"encoding/json"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/runner"
)

// Backend is the Runner's tool surface as the MCP server uses it: the
// embedded *runner.Runner satisfies it directly, and [Remote] carries the
// same calls to a running daemon over its local API.
type Backend interface {
	Launch(context.Context, localapi.LaunchRequest) (localapi.BrowserInfo, error)
	Status(context.Context) (localapi.Status, error)
	Pages(context.Context, localapi.BrowserRequest) ([]localapi.PageInfo, error)
	Open(context.Context, localapi.OpenRequest) (localapi.PageInfo, error)
	Goto(context.Context, localapi.GotoRequest) (localapi.NavResult, error)
	Screenshot(context.Context, localapi.ScreenshotRequest) (localapi.ScreenshotResult, error)
	Eval(context.Context, localapi.EvalRequest) (localapi.EvalResult, error)
	Close(context.Context, localapi.BrowserRequest) (localapi.CloseResult, error)
	Attach(context.Context, localapi.AttachRequest) (localapi.AttachResult, error)
	AttachOffer(context.Context, localapi.AttachOfferRequest) (localapi.AttachResult, error)
	ApprovalInfo(context.Context, localapi.ApprovalRequest) (localapi.ApprovalSummary, error)
	Deny(context.Context, localapi.ApprovalRequest) (map[string]any, error)
	Reconnect(context.Context, localapi.BrowserRequest) (localapi.ReconnectResult, error)
	Snapshot(context.Context, localapi.SnapshotRequest) (json.RawMessage, error)
	Act(context.Context, localapi.ActRequest) (json.RawMessage, error)
	Wait(context.Context, localapi.WaitRequest) (json.RawMessage, error)
	Console(context.Context, localapi.DiagRequest) (json.RawMessage, error)
	Network(context.Context, localapi.DiagRequest) (json.RawMessage, error)
	ClosePage(context.Context, localapi.ClosePageRequest) (map[string]any, error)
	CDP(context.Context, localapi.CDPRequest) (json.RawMessage, error)
	Discover(context.Context, struct{}) (localapi.DiscoverResult, error)
	Adopt(context.Context, localapi.BrowserRequest) (localapi.BrowserInfo, error)
}

// hostApprover is the second approval provider: only the embedded Runner
// has it (a daemon's approvals come from `webcodex approve` at a terminal).
type hostApprover interface {
	ApproveFromHost(ctx context.Context, id string) error
}

// refusalAuditor records calls refused before reaching the Runner; only
// the embedded Runner has it (a daemon audits what reaches it).
type refusalAuditor interface {
	AuditRefused(ctx context.Context, tool string, err error)
}

var (
	_ refusalAuditor = (*runner.Runner)(nil)
	_ Backend        = (*runner.Runner)(nil)
	_ hostApprover   = (*runner.Runner)(nil)
	_ Backend        = Remote{}
)

// Remote is a Backend over a running Runner's local API (webcodex mcp
// --runner).
type Remote struct{ C *localapi.Client }

func rcall[Req, Resp any](ctx context.Context, c *localapi.Client, route string, req Req) (Resp, error) {
	return localapi.Call[Req, Resp](ctx, c, route, req)
}

func (r Remote) Launch(ctx context.Context, req localapi.LaunchRequest) (localapi.BrowserInfo, error) {
	return rcall[localapi.LaunchRequest, localapi.BrowserInfo](ctx, r.C, "launch", req)
}

func (r Remote) Status(ctx context.Context) (localapi.Status, error) {
	return rcall[struct{}, localapi.Status](ctx, r.C, "status", struct{}{})
}

func (r Remote) Pages(ctx context.Context, req localapi.BrowserRequest) ([]localapi.PageInfo, error) {
	return rcall[localapi.BrowserRequest, []localapi.PageInfo](ctx, r.C, "pages", req)
}

func (r Remote) Open(ctx context.Context, req localapi.OpenRequest) (localapi.PageInfo, error) {
	return rcall[localapi.OpenRequest, localapi.PageInfo](ctx, r.C, "open", req)
}

func (r Remote) Goto(ctx context.Context, req localapi.GotoRequest) (localapi.NavResult, error) {
	return rcall[localapi.GotoRequest, localapi.NavResult](ctx, r.C, "goto", req)
}

func (r Remote) Screenshot(ctx context.Context, req localapi.ScreenshotRequest) (localapi.ScreenshotResult, error) {
	return rcall[localapi.ScreenshotRequest, localapi.ScreenshotResult](ctx, r.C, "screenshot", req)
}

func (r Remote) Eval(ctx context.Context, req localapi.EvalRequest) (localapi.EvalResult, error) {
	return rcall[localapi.EvalRequest, localapi.EvalResult](ctx, r.C, "eval", req)
}

func (r Remote) Close(ctx context.Context, req localapi.BrowserRequest) (localapi.CloseResult, error) {
	return rcall[localapi.BrowserRequest, localapi.CloseResult](ctx, r.C, "close", req)
}

func (r Remote) Attach(ctx context.Context, req localapi.AttachRequest) (localapi.AttachResult, error) {
	return rcall[localapi.AttachRequest, localapi.AttachResult](ctx, r.C, "attach", req)
}

func (r Remote) ApprovalInfo(ctx context.Context, req localapi.ApprovalRequest) (localapi.ApprovalSummary, error) {
	return rcall[localapi.ApprovalRequest, localapi.ApprovalSummary](ctx, r.C, "approval", req)
}

func (r Remote) Deny(ctx context.Context, req localapi.ApprovalRequest) (map[string]any, error) {
	return rcall[localapi.ApprovalRequest, map[string]any](ctx, r.C, "deny", req)
}

func (r Remote) Reconnect(ctx context.Context, req localapi.BrowserRequest) (localapi.ReconnectResult, error) {
	return rcall[localapi.BrowserRequest, localapi.ReconnectResult](ctx, r.C, "reconnect", req)
}

func (r Remote) Snapshot(ctx context.Context, req localapi.SnapshotRequest) (json.RawMessage, error) {
	return rcall[localapi.SnapshotRequest, json.RawMessage](ctx, r.C, "snapshot", req)
}

func (r Remote) Act(ctx context.Context, req localapi.ActRequest) (json.RawMessage, error) {
	return rcall[localapi.ActRequest, json.RawMessage](ctx, r.C, "act", req)
}

func (r Remote) Wait(ctx context.Context, req localapi.WaitRequest) (json.RawMessage, error) {
	return rcall[localapi.WaitRequest, json.RawMessage](ctx, r.C, "wait", req)
}

func (r Remote) Console(ctx context.Context, req localapi.DiagRequest) (json.RawMessage, error) {
	return rcall[localapi.DiagRequest, json.RawMessage](ctx, r.C, "console", req)
}

func (r Remote) Network(ctx context.Context, req localapi.DiagRequest) (json.RawMessage, error) {
	return rcall[localapi.DiagRequest, json.RawMessage](ctx, r.C, "network", req)
}

func (r Remote) ClosePage(ctx context.Context, req localapi.ClosePageRequest) (map[string]any, error) {
	return rcall[localapi.ClosePageRequest, map[string]any](ctx, r.C, "close_page", req)
}

func (r Remote) CDP(ctx context.Context, req localapi.CDPRequest) (json.RawMessage, error) {
	return rcall[localapi.CDPRequest, json.RawMessage](ctx, r.C, "cdp", req)
}

func (r Remote) Discover(ctx context.Context, req struct{}) (localapi.DiscoverResult, error) {
	return rcall[struct{}, localapi.DiscoverResult](ctx, r.C, "discover", req)
}

func (r Remote) Adopt(ctx context.Context, req localapi.BrowserRequest) (localapi.BrowserInfo, error) {
	return rcall[localapi.BrowserRequest, localapi.BrowserInfo](ctx, r.C, "adopt", req)
}

// EndSession ends this server's session on the daemon: the browsers it
// launched are closed (unless kept), those it attached detached.
func (r Remote) EndSession(ctx context.Context) (localapi.EndSessionResult, error) {
	return rcall[struct{}, localapi.EndSessionResult](ctx, r.C, "end_session", struct{}{})
}

package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// Route is one operation of the local API, declared once below: its name
// on the wire and the types of its request and result. The Runner serves
// it ([Serve]); the CLI and the MCP server call it ([Route.Call]) over the
// socket or, for an embedded Runner, in process.
type Route[Req, Resp any] struct {
	Name string
	// Effect: a call may change a browser, a page or a grant, so a client
	// that loses the answer says outcome_unknown, never "unreachable"
	// (which a caller would retry).
	Effect bool
}

// declared lists every route's name in declaration order.
var declared []string

func readRoute[Req, Resp any](name string) Route[Req, Resp] {
	declared = append(declared, name)
	return Route[Req, Resp]{Name: name}
}

func effectRoute[Req, Resp any](name string) Route[Req, Resp] {
	declared = append(declared, name)
	return Route[Req, Resp]{Name: name, Effect: true}
}

// Declared returns the names of every declared route: those below, then
// one per operation of the table (package op).
func Declared() []string {
	out := append([]string(nil), declared...)
	for _, d := range op.All() {
		out = append(out, d.Declared().Name)
	}
	return out
}

// Of is the route of an operation of the table: its name and whether it is
// an effect come from the declaration.
func Of[In, Out any](o *op.Op[In, Out]) Route[In, Out] {
	return Route[In, Out]{Name: o.Name, Effect: o.Acts()}
}

// The routes not yet in the operation table (package op). Adding one here
// adds its Runner method and one Serve line in the Runner's route table.
var (
	Launch      = effectRoute[LaunchRequest, BrowserInfo]("launch")
	Pages       = readRoute[BrowserRequest, []PageInfo]("pages")
	Open        = effectRoute[OpenRequest, PageInfo]("open")
	Close       = effectRoute[BrowserRequest, CloseResult]("close")
	Attach      = effectRoute[AttachRequest, AttachResult]("attach")
	AttachOffer = effectRoute[AttachOfferRequest, AttachResult]("attach_offer")
	Approval    = readRoute[ApprovalRequest, ApprovalSummary]("approval")
	Approve     = effectRoute[ApprovalRequest, ApprovalAnswer]("approve")
	Deny        = effectRoute[ApprovalRequest, ApprovalAnswer]("deny")
	Reconnect   = effectRoute[BrowserRequest, ReconnectResult]("reconnect")
	ClosePage   = effectRoute[ClosePageRequest, ClosePageResult]("close_page")
	CDP         = effectRoute[CDPRequest, CDPResult]("cdp")
	Adopt       = effectRoute[BrowserRequest, BrowserInfo]("adopt")
)

// The routes of the table's operations under the names their callers know
// them by; each is derived from its declaration (Of).
var (
	Ping            = Of(op.Ping)
	GetStatus       = Of(op.Status)
	Discover        = Of(op.Discover)
	GetBridgeStatus = Of(op.BridgeStatus)
	EndSession      = Of(op.EndSession)
	Stop            = Of(op.Stop)
)

// Invoker reaches a Runner's routes: a [*Client] over its socket, or the
// [*Routes] of a Runner in this process (the embedded MCP server), whose
// typed handlers are then called directly.
type Invoker interface{ invoker() }

func (*Client) invoker() {}
func (*Routes) invoker() {}

// Call runs the route on inv. A refusal comes back as the same
// *fsm.Refusal either way; over the socket, an unreachable Runner wraps
// ErrUnreachable.
func (rt Route[Req, Resp]) Call(ctx context.Context, inv Invoker, req Req) (Resp, error) {
	switch inv := inv.(type) {
	case *Client:
		return remoteCall[Req, Resp](ctx, inv, rt, req)
	case *Routes:
		if fn, ok := inv.typed[rt.Name].(func(context.Context, Req) (Resp, error)); ok {
			resp, err := fn(ctx, req)
			return resp, inProcess(err)
		}
		if h, ok := inv.m[rt.Name]; ok {
			// A caller that erased the route's types (the CLI's verbs of the
			// operation table): through its JSON form, as over the socket.
			return erasedCall[Req, Resp](ctx, h, req)
		}
	}
	var zero Resp
	return zero, fsm.Refusef(fsm.RouteUnavailable, "%s is not served here", rt.Name)
}

// inProcess is a handler's error as a client sees it: a refusal as it is,
// a failure as a RunnerError.
func inProcess(err error) error {
	if _, refused := fsm.AsRefusal(err); err != nil && !refused && !errors.Is(err, ErrUnreachable) {
		return &RunnerError{Msg: err.Error(), err: err}
	}
	return err
}

// erasedCall runs h with req in its JSON form and decodes its answer.
func erasedCall[Req, Resp any](ctx context.Context, h Handler, req Req) (Resp, error) {
	var resp Resp
	raw, err := json.Marshal(req)
	if err != nil {
		return resp, fmt.Errorf("localapi: encode the request: %w", err)
	}
	out, err := h(ctx, raw)
	if err != nil {
		return resp, inProcess(err)
	}
	b, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(b, &resp)
	}
	if err != nil {
		return resp, fmt.Errorf("localapi: decode the answer: %w", err)
	}
	return resp, nil
}

// RunnerError is a failure the Runner reported (not a refusal): its message
// as the Runner wrote it. The CLI shows it without Go package prefixes and
// points to runner.log.
type RunnerError struct {
	Msg string
	err error // the cause, in process; nil over the socket
}

func (e *RunnerError) Error() string { return e.Msg }
func (e *RunnerError) Unwrap() error { return e.err }

// goPrefix is a Go package prefix in an error chain ("runner: ",
// "platform: "): it says where in the code, which a person does not need.
var goPrefix = regexp.MustCompile(`\b(runner|platform|cdp|surface|localapi|consent|lease|reconnect|bridge|install|rendezvous|nativehost|origin|fsm|mcp|egress|policy): `)

// Plain is msg without Go package prefixes.
func Plain(msg string) string { return goPrefix.ReplaceAllString(msg, "") }

// redacted is fn whose answers and errors pass routes.Redact.
func redacted[Req, Resp any](routes *Routes, fn func(ctx context.Context, req Req) (Resp, error)) func(ctx context.Context, req Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		resp, err := fn(ctx, req)
		if routes.Redact == nil {
			return resp, err
		}
		if v, ok := routes.Redact.Value(resp).(Resp); ok {
			resp = v
		}
		return resp, routes.Redact.Err(err)
	}
}

// Serve registers fn as the handler of rt on routes. A second registration
// of the same route panics.
func Serve[Req, Resp any](routes *Routes, rt Route[Req, Resp], fn func(ctx context.Context, req Req) (Resp, error)) {
	if routes.m == nil {
		routes.m = map[string]Handler{}
		routes.typed = map[string]any{}
	}
	if _, dup := routes.m[rt.Name]; dup {
		panic("localapi: duplicate route " + rt.Name)
	}
	fn = redacted(routes, fn)
	routes.m[rt.Name] = func(ctx context.Context, raw json.RawMessage) (any, error) {
		var req Req
		if len(raw) > 0 {
			if err := decodeStrict(raw, &req); err != nil {
				return nil, fsm.Refusef(fsm.InvalidArgument, "malformed request for %s", rt.Name)
			}
		}
		return fn(ctx, req)
	}
	routes.typed[rt.Name] = fn
}

// Package mcp is webcodex's entry point for agents: an MCP server (stdio,
// github.com/modelcontextprotocol/go-sdk) whose tools are the Runner's one
// tool surface under the names agents know from Playwright MCP, plus
// webcodex's own (launch, attach, discover, status, reconnect, close, cdp).
//
// The server adds no browser logic: the origin gate, the CDP policy, the
// fences, the bounds and the audit trail live in the Runner, embedded by
// default or reached over the local API (--runner). What the server adds is
// the agent's side of the boundary: scopes checked on every tool, the
// owner's flags (allowlist, attach, evaluate) applied to every browser it
// launches or attaches, approval of an attach by the person through the
// host (elicitation), never by a tool argument, and results that are
// bounded and structured, with refusals as {"refusal":{code,detail,next}}
// and isError, never a protocol error.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/fsm"
)

// Bounds of what the server returns and how long a tool may run.
const (
	// MaxResultBytes bounds the JSON of one tool result.
	MaxResultBytes = 512 << 10
	// MaxScreenshotBytes bounds one PNG.
	MaxScreenshotBytes = 8 << 20
	// defaultToolTimeout bounds a tool call that does not wait on a person.
	defaultToolTimeout = 90 * time.Second
	// attachTimeout bounds an attach: the person may be answering Chrome's
	// own prompt.
	attachTimeout = 4 * time.Minute
	// maxErrorChars bounds a failure's message.
	maxErrorChars = 1000
)

// Options configure a Server.
type Options struct {
	// Runner reaches the Runner's routes: the embedded Runner's route
	// table, or the local API client of a running daemon (--runner).
	Runner localapi.Invoker
	// Embedded is the Runner when it lives in this process (nil with
	// --runner): host approvals reach it, it audits calls refused before
	// they reach it, and refusals name `webcodex mcp approve` rather than
	// `webcodex approve`.
	Embedded *runner.Runner
	Scopes   Scopes
	// Caps turns on capability groups (caps.go): a tool of a group that is
	// off is not listed.
	Caps Caps
	// Allow is the owner's origin allowlist for every browser the server
	// launches or attaches. No tool argument widens it.
	Allow []string
	// AllowAttach must be set for browser_attach (with browser:control).
	AllowAttach bool
	// AllowEvaluate turns evaluate and raw page CDP on for attachments.
	AllowEvaluate bool
	// Uploads reports whether an upload directory is configured.
	Uploads bool
	// Secrets are the names of the owner's secrets (never their values):
	// the agent types one as {{secret.NAME}}.
	Secrets []string
	// OutputDir is this session's own directory for files a tool writes
	// (filename arguments); "" refuses them.
	OutputDir string
	// Session names this server's session in the audit trail and in
	// approval requests.
	Session string
	Version string
	// Logf logs to stderr (stdout is the protocol); nil discards.
	Logf func(format string, args ...any)
}

// Server is the MCP server. Safe for concurrent tool calls.
type Server struct {
	opts   Options
	runner localapi.Invoker // opts.Runner
	srv    *sdk.Server
	life   *lifetime // the session's machine: open, serving, closing, closed

	snaps snapshotMemo // each page's latest snapshot, for bare refs

	mu      sync.Mutex // mu guards the fields that follow
	current struct{ browser, page string }
	asks    map[string]pendingAsk // elicitation state token -> the approval it asks about
}

// NewServer builds the server and its tools.
func NewServer(opts Options) *Server {
	s := &Server{opts: opts, runner: opts.Runner, life: newLifetime(), asks: map[string]pendingAsk{}}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "webcodex", Title: "webcodex browser control", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	s.addTools()
	return s
}

const instructions = `webcodex drives a real Chromium for you. browser_navigate loads a page (launching a fresh, empty browser when there is none); browser_attach reaches the person's own browser when the owner allowed it and the person approves. browser_snapshot returns the page as an outline whose actionable lines carry refs (e5): pass ref to browser_click, browser_type and the other element tools; it means the latest snapshot of that page, and a ref whose document is gone is refused as browser_binding_stale, never guessed. target is such a ref or a unique CSS selector, or {"role":"button","name":"Save"} or one of label, text, placeholder, testId, css. snapshotId (beside ref) names an older snapshot; idempotencyKey on an action makes a repeat with the same key return the first outcome and do nothing again. page is a tab id (browser_tabs); without it a tool acts on the current tab. An action answers what it caused (a navigation, a dialog, a new tab, a download), and with snapshot true also a fresh snapshot. A refusal is an error result: "refused: CODE: detail" and a "next:" line to follow. Sites outside the owner's allowed origins are refused and stay unreadable; no argument changes that.`

// call runs one route on the Runner, embedded or remote alike.
func call[Req, Resp any](ctx context.Context, inv localapi.Invoker, rt localapi.Route[Req, Resp], req Req) (Resp, error) {
	return rt.Call(ctx, inv, req)
}

// callOp runs one operation of the table on the Runner.
func callOp[In op.Input, Out any](ctx context.Context, inv localapi.Invoker, o *op.Op[In, Out], in In) (Out, error) {
	return localapi.Of(o).Call(ctx, inv, in)
}

// opTool registers the MCP tool name of the operation o: its description,
// capability group and scope are the declaration's, and an idempotency key
// its arguments carry (EffectKey) reaches every effect it runs (act), so no
// tool advertises a key it drops.
func opTool[In any](s *Server, m *op.Meta, name string, tweak func(*jsonschema.Schema), fn func(ctx context.Context, c *toolCall, in In) (any, error)) {
	i := slices.IndexFunc(m.MCP, func(t op.Tool) bool { return t.Name == name })
	if i < 0 {
		panic("mcp: " + name + " is not a tool of the operation " + m.Name)
	}
	t := m.MCP[i]
	if _, keyed := any(*new(In)).(interface{ effectKey() string }); keyed && !m.Effect {
		panic("mcp: " + name + " takes an idempotency key, but " + m.Name + " is no effect: the key would be dropped")
	}
	anyOf := t.Scopes
	if anyOf == nil {
		anyOf = []Scope{m.Scope}
	}
	spec := toolSpec{name: t.Name, desc: t.Desc + s.secretsNote(m), group: t.Group, anyOf: anyOf, readOnly: !m.Acts(), closedWorld: t.ClosedWorld, reveals: m.Reveals}
	addTool(s, spec, tweak, func(ctx context.Context, c *toolCall, in In) (any, error) {
		if k, ok := any(in).(interface{ effectKey() string }); ok && k.effectKey() != "" {
			ctx = context.WithValue(ctx, effectKeyCtx{}, k.effectKey())
		}
		return fn(ctx, c, in)
	})
}

// effectKeyCtx carries the idempotency key of a tool call to its effects.
type effectKeyCtx struct{}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// toolSpec is one tool: its name and description, the scopes any of which
// admits it, and its hints. A tool has no separate title: every byte of the
// tool list is sent to the model on every turn, and the name says it.
type toolSpec struct {
	name, desc string
	anyOf      []Scope
	// group is the capability group that lists the tool (caps.go); ""
	// lists it always.
	group string
	// readOnly: the tool changes nothing (hosts may run it unasked).
	readOnly bool
	// closedWorld: a read-only tool that reads only webcodex's own state,
	// not a site.
	closedWorld bool
	// reveals is what its answer may show of a page (op.Reveal; a tool of
	// the table takes its operation's): only a tool that reveals page text
	// may answer with it, fenced (fence.go).
	reveals op.Reveal
}

// annotations are the tool's hints. A tool that is not read-only sends
// none: the protocol's defaults (it may change things, in an open world)
// are what webcodex's actions are.
func (spec toolSpec) annotations() *sdk.ToolAnnotations {
	if !spec.readOnly {
		return nil
	}
	a := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	if spec.closedWorld {
		closed := false
		a.OpenWorldHint = &closed
	}
	return a
}

// reply is a tool's answer: text is what the agent reads, fields the
// machine fields a client may read.
type reply struct {
	text   string
	fields map[string]any
	// page is the page's text, fenced after text by its origin and frame.
	page []pageBlock
}

// toolCall is one tool call as a handler sees it.
type toolCall struct {
	tool string
	req  *sdk.CallToolRequest
}

// addTool registers a tool whose arguments decode into In. Its schema is
// derived from In and adjusted by tweak; arguments are checked against it
// here (not by the SDK), so a bad argument is an invalid_argument refusal
// that names the argument, like any other refusal. fn returns a *reply, a
// value sent as JSON, or a *sdk.CallToolResult it built itself (images,
// elicitation).
func addTool[In any](s *Server, spec toolSpec, tweak func(*jsonschema.Schema), fn func(ctx context.Context, c *toolCall, in In) (any, error)) {
	if spec.group != "" && !s.opts.Caps[spec.group] {
		return
	}
	schema, err := newArgSchema[In](spec.name, tweak)
	if err != nil {
		panic(err)
	}
	tool := &sdk.Tool{Name: spec.name, Description: spec.desc, InputSchema: schema.shown, Annotations: spec.annotations()}
	s.srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		c := &toolCall{tool: spec.name, req: req}
		ctx = runner.WithCaller(ctx, runner.Caller{Session: s.opts.Session, Tool: spec.name})
		if err := s.checkAny(spec.name, spec.anyOf); err != nil {
			if s.opts.Embedded != nil { // a daemon audits what reaches it
				s.opts.Embedded.AuditRefused(ctx, spec.name, err)
			}
			return errorResult(err), nil
		}
		in, err := decodeArgs[In](schema, req.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		if f, ok := any(&in).(snapshotFiller); ok {
			f.fillSnapshot(s.latestSnapshot)
		}
		out, err := fn(ctx, c, in)
		if err != nil {
			s.dropStaleCurrent(ctx, err)
			return errorResult(err), nil
		}
		switch r := out.(type) {
		case *sdk.CallToolResult:
			return r, nil
		case *reply:
			text, err := renderReply(spec, r)
			if err != nil {
				return errorResult(err), nil
			}
			return textResult(text, r.fields), nil
		}
		return jsonResult(out), nil
	})
}

// checkAny admits a tool when any of its scopes is granted.
func (s *Server) checkAny(tool string, anyOf []Scope) error {
	var err error
	for _, sc := range anyOf {
		if err = s.opts.Scopes.check(tool, sc); err == nil {
			return nil
		}
	}
	if len(anyOf) > 1 {
		names := make([]string, len(anyOf))
		for i, sc := range anyOf {
			names[i] = string(sc)
		}
		return fsm.Refusef(fsm.ScopeDenied, "%s needs one of the scopes %s; this server grants %s", tool, strings.Join(names, ", "), grantedText(s.opts.Scopes))
	}
	return err
}

// errorResult is a refusal (or failure) with isError: its text for the
// agent ("refused: CODE: detail", then "next: …" in MCP terms), and
// {"refusal":{code,detail,next}} as structured content.
func errorResult(err error) *sdk.CallToolResult {
	var body map[string]any
	var text string
	if ref, ok := fsm.AsRefusal(err); ok {
		ref = forAgent(ref)
		body, text = map[string]any{"refusal": ref}, errorText(ref)
	} else {
		msg := capText(localapi.Plain(err.Error()), maxErrorChars) // no Go package prefixes
		body, text = map[string]any{"error": msg}, "error: "+msg
	}
	b, merr := json.Marshal(body)
	if merr != nil {
		b, text = []byte(`{"error":"the error could not be encoded"}`), "error: the error could not be encoded"
	}
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// jsonResult is a success as structured content (an object) and its JSON
// text, bounded.
func jsonResult(v any) *sdk.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return errorResult(fmt.Errorf("mcp: encode the result: %w", err))
	}
	if len(b) > MaxResultBytes {
		return errorResult(fsm.Refusef(fsm.LimitExceeded, "the result is %d bytes; results are bounded at %d: ask for less (maxChars, a cursor, a narrower scope)", len(b), MaxResultBytes))
	}
	if len(b) == 0 || b[0] != '{' {
		if b, err = json.Marshal(map[string]json.RawMessage{"result": b}); err != nil {
			return errorResult(err)
		}
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// withTimeout bounds a tool call.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// dropStaleCurrent forgets the current page when a refusal says a page is
// gone, so the next call without a page id picks a live one.
func (s *Server) dropStaleCurrent(ctx context.Context, err error) {
	ref, ok := fsm.AsRefusal(err)
	if !ok || (ref.Code != fsm.PageClosed && ref.Code != fsm.BindingStale && ref.Code != fsm.NotFound) {
		return
	}
	_, cp := s.currentIDs()
	if cp == "" {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	st, serr := call(sctx, s.runner, localapi.GetStatus, struct{}{})
	if serr != nil {
		return
	}
	for _, b := range st.Browsers {
		for _, p := range b.Pages {
			if p.ID == cp {
				return
			}
		}
	}
	s.forgetPage(cp)
}

var errNoBrowser = fsm.Refuse(fsm.NotFound, "there is no browser yet: call browser_launch (or browser_navigate, which launches one), or browser_attach")

package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/fsm"
)

// Approval through the host.
//
// An attach that needs approval returns an input-required result (MCP
// multi round-trip requests): one elicitation, the approval request's
// summary with allow or deny, and an opaque state token bound server-side
// to that approval request id and to the attach arguments. The SDK asks the
// host directly for clients on older protocol versions and re-invokes the
// tool with the answer; newer clients retry the call with it. Either way the
// answer arrives in the call's inputResponses, which an agent's arguments
// cannot reach: no tool argument can approve. A state token is used once,
// expires with its request, and must come back with the same arguments.

func refusalCodeOf(err error) string {
	if ref, ok := fsm.AsRefusal(err); ok {
		return string(ref.Code)
	}
	return "failure"
}

// askInput is the input request id of the attach question.
const askInput = "approve_attach"

// maxAsks bounds the questions a server keeps open.
const maxAsks = 8

// pendingAsk is a question the server asked the host.
type pendingAsk struct {
	approval string    // the Runner's approval request id
	args     string    // the attach arguments it is about
	expires  time.Time // the approval request's expiry
}

// canAskHost reports whether an approval can go through the host: the
// Runner is embedded (a daemon's approvals come from a terminal) and the
// client declared form elicitation.
func (s *Server) canAskHost(req *sdk.CallToolRequest) bool {
	if s.opts.Embedded == nil || req == nil {
		return false
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil // neither declared means form, for older clients
}

// consentRefusal is browser_consent_required with the command the person
// runs when the host cannot ask them.
func (s *Server) consentRefusal(id string) error {
	ref := fsm.Refusef(fsm.ConsentRequired, "approval request %s: the person runs `webcodex approve %s` in a terminal on this machine; then call browser_attach again", id, id)
	if s.opts.Embedded != nil {
		ref = fsm.Refusef(fsm.ConsentRequired, "approval request %s: this MCP client cannot ask the person, so they run `webcodex mcp approve %s` in a terminal on this machine; then call browser_attach again", id, id)
	}
	ref.ApprovalID = id
	return ref
}

func (s *Server) attachRequest(in attachIn) (localapi.AttachRequest, error) {
	// The session is not sent: the Runner binds the grant to this server's
	// own session (embedded) or to this process (over the local API).
	req := localapi.AttachRequest{Allow: s.opts.Allow, AllowEvaluate: s.opts.AllowEvaluate, Scopes: s.opts.Scopes.List(), PressPrompt: in.PressPrompt}
	n := 0
	for _, v := range []string{in.Candidate, in.ProfileDir, in.Endpoint} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return req, fsm.Refuse(fsm.InvalidArgument, "give exactly one of candidate (from browser_discover), profileDir and endpoint")
	}
	switch {
	case in.Candidate != "":
		dir, ok := runner.AttachCandidateDir(in.Candidate)
		if !ok {
			return req, fsm.Refuse(fsm.InvalidArgument, "no such candidate: see browser_discover")
		}
		req.ProfileDir = dir
	case in.ProfileDir != "":
		req.ProfileDir = in.ProfileDir
	default:
		req.Endpoint = in.Endpoint
	}
	return req, nil
}

func argsKey(in attachIn) string {
	b, _ := json.Marshal(in)
	return string(b)
}

func (s *Server) attach(ctx context.Context, c *toolCall, in attachIn) (any, error) {
	if !s.opts.AllowAttach {
		return nil, fsm.Refuse(fsm.ScopeDenied, "attaching to the person's own browser is off: the owner starts the server with --allow-attach")
	}
	if in.Offer != "" {
		return s.attachOffer(ctx, in) // bridge.go
	}
	req, err := s.attachRequest(in)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx, attachTimeout)
	defer cancel()
	if c.req.Params.RequestState != "" || len(c.req.Params.InputResponses) > 0 {
		return s.attachAnswered(ctx, c, in, req)
	}
	res, err := call(ctx, s.runner, localapi.Attach, req)
	if err == nil {
		return s.attached(res), nil
	}
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.ConsentRequired || ref.ApprovalID == "" {
		return nil, err
	}
	id := ref.ApprovalID
	if !s.canAskHost(c.req) {
		return nil, s.consentRefusal(id)
	}
	info, err := call(ctx, s.runner, localapi.Approval, localapi.ApprovalRequest{ID: id})
	if err != nil {
		return nil, err
	}
	token, err := s.ask(id, argsKey(in), info.Expires)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{askInput: &sdk.ElicitParams{
			Mode:    "form",
			Message: info.Summary + "\n\nAllow webcodex to attach to this browser? (Your browser will then show its own \"Allow remote debugging?\" prompt.)",
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"decision": map[string]any{
						"type": "string", "title": "Your decision", "enum": []string{"allow", "deny"},
						"description": "allow: webcodex attaches as described; deny: nothing is attached",
					},
				},
				"required": []string{"decision"},
			},
		}},
		RequestState: token,
	}, nil
}

// ask records a question and returns its state token.
func (s *Server) ask(approval, args string, expires time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("mcp: state token: %w", err)
	}
	token := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, a := range s.asks {
		if now.After(a.expires) {
			delete(s.asks, k)
		}
	}
	if len(s.asks) >= maxAsks {
		return "", fsm.Refusef(fsm.LimitExceeded, "%d approval questions are already open; answer them or wait for them to expire", maxAsks)
	}
	s.asks[token] = pendingAsk{approval: approval, args: args, expires: expires}
	return token, nil
}

// attachAnswered handles the call that carries the host's answer: the
// token must name an open question about these arguments; allow approves
// that request in the embedded Runner and the attach is retried once; any
// other answer denies it.
func (s *Server) attachAnswered(ctx context.Context, c *toolCall, in attachIn, req localapi.AttachRequest) (any, error) {
	token := c.req.Params.RequestState
	s.mu.Lock()
	ask, ok := s.asks[token]
	delete(s.asks, token)
	s.mu.Unlock()
	if !ok || token == "" || time.Now().After(ask.expires) || ask.args != argsKey(in) {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the answer does not match an open question of this server; call browser_attach again")
	}
	ans, ok := c.req.Params.InputResponses[askInput].(*sdk.ElicitResult)
	if !ok || ans == nil {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the host sent no answer to the approval question; call browser_attach again")
	}
	if ans.Action != "accept" || ans.Content["decision"] != "allow" {
		if s.opts.Embedded != nil {
			if err := s.opts.Embedded.DenyFromHost(ctx, ask.approval); err != nil {
				s.logf("mcp: recording the denial failed: %s", refusalCodeOf(err))
			}
		}
		return nil, fsm.Refuse(fsm.ConsentRevoked, "the person did not allow the attach; nothing was attached")
	}
	if s.opts.Embedded == nil {
		return nil, s.consentRefusal(ask.approval)
	}
	if err := s.opts.Embedded.ApproveFromHost(ctx, ask.approval); err != nil {
		return nil, err
	}
	req.Request = ask.approval
	res, err := call(ctx, s.runner, localapi.Attach, req)
	if err != nil {
		return nil, err
	}
	return s.attached(res), nil
}

// attached makes the attached browser current.
func (s *Server) attached(res localapi.AttachResult) map[string]any {
	page := ""
	for _, p := range res.Browser.Pages { // prefer a tab with a site over a blank one
		if page == "" || p.URL != "about:blank" {
			page = p.ID
			if p.URL != "about:blank" {
				break
			}
		}
	}
	s.setCurrent(res.Browser.ID, page)
	res.NextAction = "browser_tabs (action list) shows the tabs on the allowed origins; browser_snapshot reads one"
	return map[string]any{"attach": res, "page": page}
}

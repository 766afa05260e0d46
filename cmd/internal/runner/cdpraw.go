package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/policy"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

// Bounds of raw CDP.
const (
	// maxCDPResultChars bounds a raw CDP result; a larger one is refused
	// (limit_exceeded) rather than cut into invalid JSON.
	maxCDPResultChars = 200000
	// maxCDPParamsBytes bounds the params of one raw command.
	maxCDPParamsBytes = 256 << 10
	// maxCDPErrorChars bounds the browser's error message in a refusal.
	maxCDPErrorChars = 300
)

// CDP sends one raw Chrome DevTools Protocol command to a page's own
// flattened session: first the CDP domain policy (browser-global domains,
// unreviewed domains and the withheld page commands are refused; raw CDP
// is off for attached browsers unless the owner allowed evaluate), then the
// origin gate on the page's live URL, then the command, under the page's
// mutation gate. A command that enters a frame document is judged on that
// frame's own origin. The result is bounded.
func (r *Runner) CDP(ctx context.Context, req localapi.CDPRequest) (_ json.RawMessage, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, "cdp:"+policyName(req.Method), "", err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return nil, err
	}
	if err := policy.Check(req.Method, p.browser.mode == localapi.ModeAttached, p.browser.allowEvaluate); err != nil {
		return nil, err
	}
	var params any
	if len(req.Params) > 0 && !bytes.Equal(bytes.TrimSpace(req.Params), []byte("null")) {
		if len(req.Params) > maxCDPParamsBytes {
			return nil, fsm.Refusef(fsm.LimitExceeded, "the params are larger than %d bytes", maxCDPParamsBytes)
		}
		trimmed := bytes.TrimSpace(req.Params)
		if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
			return nil, fsm.Refuse(fsm.InvalidArgument, "params must be a JSON object")
		}
		params = jsonv2.Value(trimmed)
	}
	if err := policy.CheckParams(req.Method, bytes.TrimSpace(req.Params)); err != nil {
		return nil, err
	}
	if err := p.authorize(ctx); err != nil {
		return nil, err
	}
	t, err := r.gates.Acquire(ctx, lease.GateKey{Browser: p.browser.id, Target: string(p.target)})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if err := t.Check(); err != nil {
		return nil, err
	}
	var res jsonv2.Value
	sess := frameGated{Session: p.sess, gate: p.browser.gate, main: cdproto.FrameID(p.target)}
	if err := sess.Call(ctx, req.Method, params, &res); err != nil {
		return nil, cdpErr(err)
	}
	if len(res) == 0 {
		res = jsonv2.Value("{}")
	}
	if len(res) > maxCDPResultChars {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the result is %d characters; raw CDP results are bounded at %d: ask for less", len(res), maxCDPResultChars)
	}
	return json.RawMessage(res), nil
}

// cdpErr turns a failed raw command into a refusal: the browser's own
// error (it refused the command: nothing ran), or outcome_unknown (the
// command may have been dispatched and its answer was lost: never replayed).
func cdpErr(err error) error {
	if _, ok := fsm.AsRefusal(err); ok {
		return err
	}
	if pe, ok := errors.AsType[*cdp.ProtocolError](err); ok {
		msg := pe.Message
		if len(msg) > maxCDPErrorChars {
			msg = msg[:maxCDPErrorChars] + "…"
		}
		return fsm.Refusef(fsm.InvalidArgument, "the browser refused the command (%d): %s", pe.Code, msg).WithCause(err)
	}
	if errors.Is(err, cdp.ErrMessageTooLarge) {
		return fsm.Refuse(fsm.LimitExceeded, "the command is larger than the connection allows; nothing was sent").WithCause(err)
	}
	return fsm.Refuse(fsm.OutcomeUnknown, "the command was sent but its answer was lost; observe the page before trying again").WithCause(err)
}

// policyName is the method as recorded in the audit: the policy's own
// shape check keeps junk (and anything long) out of the trail.
func policyName(method string) string {
	if len(method) > 100 {
		return "invalid"
	}
	for _, c := range method {
		if !(c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "invalid"
		}
	}
	return method
}

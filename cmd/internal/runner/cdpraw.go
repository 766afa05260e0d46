package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

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

// CDP sends one raw Chrome DevTools Protocol command to a page, on the
// page's own raw session (rawsession.go), never the page surface's. In
// order: the command table at the browser's tier (the open web, or the
// stricter subset under any allowlist; raw CDP is off for attached browsers
// unless the owner allowed evaluate), the parameters (a JSON object, no
// duplicate key, only the parameters and values the table allows), the
// origin gate on the page's live document, and then the command, under the
// page's mutation gate. A result that carries page data is returned only if
// the page still shows the document that was authorized; otherwise it is
// discarded and the call refused. The result is bounded.
//
// The command is a side effect under the effect ledger (ledger.go): a
// repeated idempotency key answers with the recorded outcome and sends
// nothing; an answer lost with the connection is outcome_unknown.
func (r *Runner) CDP(ctx context.Context, req localapi.CDPRequest) (_ localapi.CDPResult, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, "cdp:"+policyName(req.Method), "", err) }()
	ctx, settle := r.call(ctx, req.Page, "the CDP command", r.callBound())
	defer func() { err = settle(err) }()
	what := struct{ Method, Params string }{req.Method, string(req.Params)}
	entry, fresh, err := r.claimEffect(ctx, req.IdempotencyKey, "cdp", what)
	if err != nil {
		return localapi.CDPResult{}, err
	}
	if !fresh {
		return recorded[localapi.CDPResult](replayed(entry.Replay(ctx)))
	}
	c, err := r.prepareCDP(ctx, req)
	if err != nil {
		r.cancelEffect(entry, err)
		return localapi.CDPResult{}, err
	}
	defer c.release()
	o, err := entry.Dispatch(ctx, func(ctx context.Context) (lease.Outcome, lease.EffectTrigger) {
		var res jsonv2.Value
		if err := c.sess.Call(ctx, req.Method, c.params, &res); err != nil {
			err = cdpErr(err)
			if _, ok := errors.AsType[*cdp.InboundTooLargeError](err); ok {
				return lease.Outcome{Err: err}, lease.EffectAck // it ran; its answer was discarded
			}
			return lease.Outcome{Err: err}, settleOf(err)
		}
		out, err := c.answer(ctx, res)
		if err == nil {
			out, err = json.Marshal(localapi.CDPResult{Page: req.Page, Method: req.Method, Result: out})
		}
		return lease.Outcome{Result: out, Err: err}, lease.EffectAck // it ran, whatever is withheld
	})
	if err != nil {
		return localapi.CDPResult{}, err
	}
	return recorded[localapi.CDPResult](o.Result, o.Err)
}

// preparedCDP is a raw command checked and ready to send: everything
// refused before it is sent is refused in prepareCDP.
type preparedCDP struct {
	p       *Page
	sess    *cdp.Session
	method  string
	params  any
	doc     string
	tier    policy.Tier
	release func() // the page's mutation gate
}

// prepareCDP runs the checks before a raw command is sent, in order: the
// command table, the parameters, the origin gate on the live document, the
// page's mutation gate and the raw session.
func (r *Runner) prepareCDP(ctx context.Context, req localapi.CDPRequest) (*preparedCDP, error) {
	p, err := r.page(req.Page)
	if err != nil {
		return nil, err
	}
	tier := policy.TierFor(p.browser.gate.OpenWeb())
	if err := policy.Check(req.Method, tier, p.browser.attached(), p.browser.allowEvaluate); err != nil {
		return nil, err
	}
	if len(req.Params) > maxCDPParamsBytes {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the params are larger than %d bytes", maxCDPParamsBytes)
	}
	trimmed := bytes.TrimSpace(req.Params)
	if err := policy.CheckParams(req.Method, tier, trimmed); err != nil {
		return nil, err
	}
	// Under an allowlist, Runtime.evaluate answers by value only.
	trimmed = policy.WithForced(req.Method, tier, trimmed)
	var params any
	if len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		params = jsonv2.Value(trimmed)
	}
	doc, err := p.authorizedDocument(ctx)
	if err != nil {
		return nil, err
	}
	t, err := r.gates.Acquire(ctx, lease.GateKey{Browser: p.browser.id, Target: string(p.target)})
	if err != nil {
		return nil, err
	}
	if err := t.Check(); err != nil {
		t.Release()
		return nil, err
	}
	sess, err := p.rawSession(ctx, doc)
	if err != nil {
		t.Release()
		return nil, err
	}
	return &preparedCDP{p: p, sess: sess, method: req.Method, params: params, doc: doc, tier: tier, release: t.Release}, nil
}

// answer is the result of a command that ran: kept only if the page still
// shows the authorized document when it carries page data, scrubbed of
// object handles under an allowlist (policy.ScrubResult), and bounded.
func (c *preparedCDP) answer(ctx context.Context, res jsonv2.Value) (json.RawMessage, error) {
	if len(bytes.TrimSpace(res)) == 0 {
		res = jsonv2.Value("{}")
	}
	if !bytes.Equal(bytes.TrimSpace(res), []byte("{}")) {
		// The command may have run in a document that replaced the
		// authorized one (a navigation raced it): its data is kept only if
		// the page still shows the authorized document.
		if err := c.p.sameDocument(ctx, c.doc, c.tier); err != nil {
			return nil, err
		}
	}
	res, err := policy.ScrubResult(c.method, c.tier, res)
	if err != nil {
		return nil, err
	}
	if len(res) > maxCDPResultChars {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the result is %d characters; raw CDP results are bounded at %d: ask for less", len(res), maxCDPResultChars)
	}
	return json.RawMessage(res), nil
}

// authorizedDocument judges the page's live document with the origin gate
// (as authorize does) and returns the surface's id of that document.
func (p *Page) authorizedDocument(ctx context.Context) (string, error) {
	id, err := p.surf.Identity(ctx)
	if err != nil {
		return "", err
	}
	if err := p.judge(id.URL); err != nil {
		return "", err
	}
	return id.Document, nil
}

// sameDocument checks, after a raw command, that the page still shows the
// document doc that was authorized before it. A page that left the
// allowlist is refused as authorize refuses it; under an allowlist a page
// that merely changed document is refused too (the command may have run in
// a denied document in between). On the open web every web document is
// allowed, so only the gate's verdict matters.
func (p *Page) sameDocument(ctx context.Context, doc string, tier policy.Tier) error {
	id, err := p.surf.Identity(ctx)
	if err != nil {
		return err
	}
	if err := p.judge(id.URL); err != nil {
		return err
	}
	if id.Document != doc && tier != policy.OpenWeb {
		return fsm.Refuse(fsm.BindingStale, "the page loaded another document while the command ran; its result is discarded")
	}
	return nil
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
	if tl, ok := errors.AsType[*cdp.InboundTooLargeError](err); ok {
		return fsm.Refusef(fsm.LimitExceeded, "the answer was %d MiB, above the limit of %d MiB for one browser message, and was discarded (the command ran): ask for less", tl.Size>>20, tl.Limit>>20).WithCause(err)
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

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

// maxWait bounds any wait an agent asks for.
const maxWait = 2 * time.Minute

// readablePage returns the page after judging its live URL.
func (r *Runner) readablePage(ctx context.Context, id string) (*Page, error) {
	p, err := r.page(id)
	if err != nil {
		return nil, err
	}
	if err := p.authorize(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// readablePageAt is readablePage that also returns the origin it judged,
// so that an action audits the origin it acted on without reading the page
// a second time (one CDP round trip less per action).
func (r *Runner) readablePageAt(ctx context.Context, id string) (*Page, string, error) {
	p, err := r.page(id)
	if err != nil {
		return nil, "", err
	}
	ident, err := p.surf.Identity(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := p.judge(ident.URL); err != nil {
		return nil, "", err
	}
	return p, originOf(ident.URL), nil
}

// Snapshot returns one chunk of the page outline with refs.
func (r *Runner) Snapshot(ctx context.Context, req localapi.SnapshotRequest) (_ localapi.SnapshotResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the snapshot", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.SnapshotResult{}, err
	}
	if req.Cursor != "" {
		s, err := p.surf.SnapshotNext(ctx, req.Cursor, req.MaxChars)
		if err != nil {
			return localapi.SnapshotResult{}, err
		}
		return localapi.SnapshotResult{Page: req.Page, Snapshot: *s}, nil
	}
	opts := surface.SnapshotOptions{Interactive: req.Interactive, Since: req.Since, MaxChars: req.MaxChars, Scope: req.Scope, Query: req.Query}
	s, err := p.surf.Snapshot(ctx, opts)
	if err != nil {
		return localapi.SnapshotResult{}, err
	}
	if err := p.authorize(ctx); err != nil { // it may have left while we read
		return localapi.SnapshotResult{}, err
	}
	return localapi.SnapshotResult{Page: req.Page, Snapshot: *s}, nil
}

// Act performs one side-effecting action under the effect ledger
// (ledger.go): dispatched once, never replayed; a repeated idempotency key
// answers with the recorded outcome; a lost acknowledgement is
// outcome_unknown.
func (r *Runner) Act(ctx context.Context, req localapi.ActRequest) (_ localapi.ActResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the action", r.callBound())
	defer func() { err = settle(err) }()
	what := req
	what.Page, what.IdempotencyKey = "", ""
	entry, fresh, err := r.claimEffect(ctx, req.IdempotencyKey, "act", what)
	if err != nil {
		return localapi.ActResult{}, err
	}
	if !fresh {
		return recorded[localapi.ActResult](replayed(entry.Replay(ctx)))
	}
	p, acted, err := r.readablePageAt(ctx, req.Page) // acted: the origin acted on, before the action may navigate
	if err != nil {
		r.auditPageOp(ctx, req.Page, req.Action, "", err) // a refused effect is recorded too
		r.cancelEffect(entry, err)
		return localapi.ActResult{}, err
	}
	o, err := entry.Dispatch(ctx, func(ctx context.Context) (lease.Outcome, lease.EffectTrigger) {
		res, err := r.act(ctx, p, req)
		r.auditAct(ctx, p, acted, req, err)
		if err != nil {
			return lease.Outcome{Err: err}, settleOf(err)
		}
		out, err := json.Marshal(localapi.ActResult{Page: req.Page, ActionResult: *res})
		return lease.Outcome{Result: out, Err: err}, lease.EffectAck // it happened, whatever the encoding did
	})
	if err != nil {
		return localapi.ActResult{}, err
	}
	return recorded[localapi.ActResult](o.Result, o.Err)
}

// recorded decodes an effect's answer as the ledger recorded it (as JSON,
// to replay it to a repeated key).
func recorded[T any](raw json.RawMessage, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("runner: decode the recorded answer: %w", err)
	}
	return v, nil
}

func (r *Runner) act(ctx context.Context, p *Page, req localapi.ActRequest) (*surface.ActionResult, error) {
	need := func() (surface.Target, error) {
		if req.Target == nil {
			return surface.Target{}, fsm.Refusef(fsm.InvalidArgument, "%s needs a target", req.Action)
		}
		return *req.Target, nil
	}
	switch req.Action {
	case "click", "hover", "type", "fill", "select", "check", "uncheck", "upload":
		t, err := need()
		if err != nil {
			return nil, err
		}
		switch req.Action {
		case "click":
			return p.surf.ClickWith(ctx, t, surface.ClickOptions{Button: req.Button, Double: req.DoubleClick, Modifiers: req.Modifiers})
		case "hover":
			return p.surf.Hover(ctx, t)
		case "type", "fill":
			return p.surf.TypeText(ctx, t, req.Text, surface.TypeOptions{Clear: req.Action == "fill", Slowly: req.Slowly})
		case "select":
			return p.surf.Select(ctx, t, req.Values...)
		case "check":
			return p.surf.Check(ctx, t, true)
		case "uncheck":
			return p.surf.Check(ctx, t, false)
		case "upload":
			return p.surf.Upload(ctx, t, req.Files...)
		}
	case "press":
		return p.surf.Press(ctx, req.Target, req.Keys)
	case "scroll":
		return p.surf.Scroll(ctx, surface.ScrollOptions{To: req.To, DX: req.DX, DY: req.DY, Target: req.Target})
	case "pointer":
		if req.Pointer == nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "pointer needs its input")
		}
		return p.surf.PointerAt(ctx, *req.Pointer)
	case "resize":
		if req.Viewport == nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "resize needs width and height")
		}
		return p.surf.Resize(ctx, *req.Viewport)
	case "emulate_media":
		return p.surf.EmulateMedia(ctx, req.Media)
	}
	return nil, fsm.Refusef(fsm.InvalidArgument, "unknown action %q", req.Action)
}

// Dialog reports or answers the page's JavaScript dialog. A dialog
// blocks every script of the page, so the page is judged by the URL the
// browser reports for the target rather than read from the page; the
// dialog itself is judged on the document that opened it (surface).
func (r *Runner) Dialog(ctx context.Context, req localapi.DialogRequest) (_ localapi.DialogResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the dialog", r.callBound())
	defer func() { err = settle(err) }()
	var acted string
	defer func() { r.auditPageOp(ctx, req.Page, "dialog", acted, err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return localapi.DialogResult{}, err
	}
	u, err := p.targetURL(ctx)
	if err != nil {
		return localapi.DialogResult{}, err
	}
	if err := p.judge(u); err != nil {
		return localapi.DialogResult{}, err
	}
	acted = originOf(u)
	res := localapi.DialogResult{Page: req.Page, Dialog: p.surf.Dialog()}
	if req.Accept == nil {
		return res, nil // report only
	}
	if err := p.surf.HandleDialog(ctx, *req.Accept, req.Text); err != nil {
		return localapi.DialogResult{}, err
	}
	res.Accepted = req.Accept
	return res, nil
}

// Wait waits for a condition; a timeout is found:false.
func (r *Runner) Wait(ctx context.Context, req localapi.WaitRequest) (_ localapi.WaitResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the wait", r.callBound()+min(time.Duration(req.TimeoutMS)*time.Millisecond, maxWait))
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.WaitResult{}, err
	}
	timeout := min(time.Duration(req.TimeoutMS)*time.Millisecond, maxWait)
	o := surface.WaitOptions{Condition: req.Condition, Text: req.Text, URL: req.URL, URLIncludes: req.URLIncludes, Timeout: timeout, Target: req.Target}
	res, err := p.surf.Wait(ctx, o)
	if err != nil {
		return localapi.WaitResult{}, err
	}
	if err := p.authorize(ctx); err != nil { // a wait may end on another origin: never report its URL
		return localapi.WaitResult{}, err
	}
	return localapi.WaitResult{Page: req.Page, WaitResult: *res}, nil
}

// Console reads console messages and exceptions, bounded, with a cursor.
func (r *Runner) Console(ctx context.Context, req localapi.DiagRequest) (_ localapi.DiagResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "reading the console", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.DiagResult{}, err
	}
	res := p.surf.Console(surface.DiagOptions{Since: req.Since, ErrorsOnly: req.ErrorsOnly, SinceNavigation: req.SinceNavigation})
	if req.Clear {
		p.surf.ClearDiagnostics()
	}
	return localapi.DiagResult{Page: req.Page, DiagRead: res}, nil
}

// Network reads network requests, bounded, with a cursor.
func (r *Runner) Network(ctx context.Context, req localapi.DiagRequest) (_ localapi.DiagResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "reading the network log", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.DiagResult{}, err
	}
	res := p.surf.Network(surface.DiagOptions{Since: req.Since, ErrorsOnly: req.ErrorsOnly})
	if req.Clear {
		p.surf.ClearDiagnostics()
	}
	return localapi.DiagResult{Page: req.Page, DiagRead: res}, nil
}

// Probe performs one action and reports its effect for diagnosis.
func (r *Runner) Probe(ctx context.Context, req localapi.ProbeRequest) (_ localapi.ProbeResult, err error) {
	ctx, settle := r.call(ctx, req.Page, "the probe", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.readablePage(ctx, req.Page)
	if err != nil {
		return localapi.ProbeResult{}, err
	}
	a := surface.ProbeAction{Kind: req.Action, Target: req.Target, Text: req.Text, Keys: req.Keys, Values: req.Values, Settle: time.Duration(req.SettleMS) * time.Millisecond}
	acted := r.pageOrigin(ctx, p) // the probe's action may navigate: audit where it started
	res, err := p.surf.Probe(ctx, a)
	rec := newRecord(ctx, "probe:"+req.Action)
	rec.Browser, rec.Page, rec.Origin = p.browser.id, p.id, acted
	rec.settle(err)
	r.appendAudit(rec)
	if err != nil {
		return localapi.ProbeResult{}, err
	}
	return localapi.ProbeResult{Page: req.Page, ProbeResult: *res}, nil
}

// ClosePage closes a page webcodex opened itself; a tab of the person's is
// never closed.
func (r *Runner) ClosePage(ctx context.Context, req localapi.ClosePageRequest) (_ localapi.ClosePageResult, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, "close_page", "", err) }()
	ctx, settle := r.call(ctx, "", "closing the page", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return localapi.ClosePageResult{}, err
	}
	p.browser.mu.Lock()
	opened := p.opened
	p.browser.mu.Unlock()
	if p.browser.mode == localapi.ModeAttached && !opened {
		return localapi.ClosePageResult{}, fsm.Refuse(fsm.WrongTargetRefused, "this tab was not opened by webcodex; it is never closed by it")
	}
	if _, err := cdproto.Call(ctx, p.browser.c().Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: p.target}); err != nil {
		return localapi.ClosePageResult{}, fmt.Errorf("runner: close page: %w", err)
	}
	p.browser.mu.Lock()
	delete(p.browser.pages, p.id)
	p.browser.mu.Unlock()
	r.mu.Lock()
	r.retireLocked(p.id)
	r.mu.Unlock()
	p.surf.Close()
	return localapi.ClosePageResult{Page: p.id, Closed: true}, nil
}

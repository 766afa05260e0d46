package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

// The Runner's handlers of the operation table (package op): one per
// operation. What every operation shares — admission, the time bound, the
// effect ledger and the audit record — is derived from its declaration by
// servePageOp; a handler only does the operation on a page already found
// and judged.

// actionFunc is a page action with its input type erased: the probe
// performs one by name.
type actionFunc func(ctx context.Context, p *Page, in op.Input) (*surface.ActionResult, error)

// opServer serves the table's operations on one route table.
type opServer struct {
	r       *Runner
	rt      *localapi.Routes
	actions map[string]actionFunc
}

// serveOps adds every operation of the table to rt.
func (r *Runner) serveOps(rt *localapi.Routes) {
	s := &opServer{r: r, rt: rt, actions: map[string]actionFunc{}}
	serveInputs(s)
	servePageOp(s, op.Probe, s.probe)
	serveParity(s) // drag, drop, one request's details (parity_ops.go)
	serveReads(s)
	servePageReads(s)
	serveScript(s)
	serveNavigation(s)
	serveRunnerOps(s) // the browser's and the Runner's (browser_ops.go)
	if missing := s.unserved(); len(missing) > 0 {
		panic("runner: operations without a handler: " + strings.Join(missing, ", "))
	}
}

// serveInputs serves the actions that send the page input.
func serveInputs(s *opServer) {
	serveAction(s, op.Click, func(ctx context.Context, p *Page, in op.ClickIn) (*surface.ActionResult, error) {
		t, err := need(op.Click.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.ClickWith(ctx, t, surface.ClickOptions{Button: in.Button, Double: in.DoubleClick, Modifiers: in.Modifiers})
	})
	serveAction(s, op.Hover, func(ctx context.Context, p *Page, in op.HoverIn) (*surface.ActionResult, error) {
		t, err := need(op.Hover.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.Hover(ctx, t)
	})
	serveAction(s, op.Type, func(ctx context.Context, p *Page, in op.TypeIn) (*surface.ActionResult, error) {
		t, err := need(op.Type.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.TypeText(ctx, t, in.Text, s.r.typing(in.Text, surface.TypeOptions{Slowly: in.Slowly}))
	})
	serveAction(s, op.Fill, func(ctx context.Context, p *Page, in op.FillIn) (*surface.ActionResult, error) {
		t, err := need(op.Fill.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.TypeText(ctx, t, in.Text, s.r.typing(in.Text, surface.TypeOptions{Clear: true, Slowly: in.Slowly}))
	})
	serveAction(s, op.Press, func(ctx context.Context, p *Page, in op.PressIn) (*surface.ActionResult, error) {
		return p.surf.Press(ctx, surfaceTarget(in.Target), in.Keys)
	})
	serveAction(s, op.Select, func(ctx context.Context, p *Page, in op.SelectIn) (*surface.ActionResult, error) {
		t, err := need(op.Select.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.Select(ctx, t, in.Values...)
	})
	serveAction(s, op.Check, func(ctx context.Context, p *Page, in op.CheckIn) (*surface.ActionResult, error) {
		t, err := need(op.Check.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.Check(ctx, t, true)
	})
	serveAction(s, op.Uncheck, func(ctx context.Context, p *Page, in op.UncheckIn) (*surface.ActionResult, error) {
		t, err := need(op.Uncheck.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.Check(ctx, t, false)
	})
	serveAction(s, op.Scroll, func(ctx context.Context, p *Page, in op.ScrollIn) (*surface.ActionResult, error) {
		return p.surf.Scroll(ctx, surface.ScrollOptions{To: in.To, DX: in.DX, DY: in.DY, Target: surfaceTarget(in.Target)})
	})
	serveAction(s, op.Upload, func(ctx context.Context, p *Page, in op.UploadIn) (*surface.ActionResult, error) {
		t, err := need(op.Upload.Name, in.Target)
		if err != nil {
			return nil, err
		}
		return p.surf.Upload(ctx, t, in.Files...)
	})
	serveAction(s, op.PointerInput, func(ctx context.Context, p *Page, in op.PointerIn) (*surface.ActionResult, error) {
		return p.surf.PointerAt(ctx, surface.Pointer(in.Pointer))
	})
	serveAction(s, op.Resize, func(ctx context.Context, p *Page, in op.ResizeIn) (*surface.ActionResult, error) {
		return p.surf.Resize(ctx, surface.Viewport(in.Viewport))
	})
	serveAction(s, op.EmulateMedia, func(ctx context.Context, p *Page, in op.EmulateMediaIn) (*surface.ActionResult, error) {
		return p.surf.EmulateMedia(ctx, in.Media)
	})
}

// serveReads serves the reads of the table.
func serveReads(s *opServer) {
	servePageOp(s, op.Console, func(ctx context.Context, p *Page, in op.ConsoleIn) (op.DiagResult, error) {
		res := p.surf.Console(surface.DiagOptions{Since: in.Since, ErrorsOnly: in.ErrorsOnly, SinceNavigation: in.SinceNavigation})
		if in.Clear {
			p.surf.ClearDiagnostics()
		}
		return op.DiagResult{Page: p.id, DiagRead: wireDiagRead(res)}, nil
	})
	servePageOp(s, op.Network, func(ctx context.Context, p *Page, in op.NetworkIn) (op.DiagResult, error) {
		res := p.surf.Network(surface.DiagOptions{Since: in.Since, ErrorsOnly: in.ErrorsOnly})
		if in.Clear {
			p.surf.ClearDiagnostics()
		}
		return op.DiagResult{Page: p.id, DiagRead: wireDiagRead(res)}, nil
	})
}

// unserved lists the operations of the table rt does not serve.
func (s *opServer) unserved() []string {
	var out []string
	for _, d := range op.All() {
		if !slices.Contains(s.rt.Names(), d.Declared().Name) {
			out = append(out, d.Declared().Name)
		}
	}
	return out
}

// serveAction serves the page action o with h, and lets the probe perform
// it when o says so.
func serveAction[In op.Input](s *opServer, o *op.Op[In, op.ActResult], h func(ctx context.Context, p *Page, in In) (*surface.ActionResult, error)) {
	if o.Probe {
		s.actions[o.Name] = func(ctx context.Context, p *Page, in op.Input) (*surface.ActionResult, error) {
			return h(ctx, p, in.(In))
		}
	}
	servePageOp(s, o, func(ctx context.Context, p *Page, in In) (op.ActResult, error) {
		res, err := h(ctx, p, in)
		if err != nil {
			return op.ActResult{}, err
		}
		return op.ActResult{Page: p.id, ActionResult: wireAction(*res)}, nil
	})
}

// pageHandler is the Runner's handler of an operation on a page: do runs
// it on the page found and judged as the declaration says. check, when
// set, refuses a call before anything is dispatched (a refused effect's key
// may dispatch again); observe, when set, answers a repeated key whose
// outcome is unknown by looking at the page.
type pageHandler[In op.Input, Out any] struct {
	check   func(ctx context.Context, p *Page, in In) error
	do      func(ctx context.Context, p *Page, in In) (Out, error)
	observe func(ctx context.Context, e *lease.Entry, in In) (Out, error)
}

// servePageOp serves the operation o on a page with h.
func servePageOp[In op.Input, Out any](s *opServer, o *op.Op[In, Out], h func(ctx context.Context, p *Page, in In) (Out, error)) {
	serveOnPage(s, o, pageHandler[In, Out]{do: h})
}

// serveOnPage serves the operation o on a page: admitted by the page its
// input names, bounded, found and judged as o says, run under the effect
// ledger when o is an effect (dispatched once, never replayed; a repeated
// idempotency key answers with the recorded outcome; a lost acknowledgement
// is outcome_unknown), and audited as o says.
func serveOnPage[In op.Input, Out any](s *opServer, o *op.Op[In, Out], h pageHandler[In, Out]) {
	r := s.r
	if o.Admit != op.AdmitPage || o.Bound == op.PersonBound || o.Audit == op.AuditRecorded {
		panic("runner: " + o.Name + " is no page operation of the table's (serveOp)")
	}
	localapi.Serve(s.rt, localapi.Of(o), func(ctx context.Context, in In) (_ Out, err error) {
		var zero Out
		ids := addressed{Page: in.Addr().Page, Browser: in.Addr().Browser}
		defer func() { err = ids.about(err) }()
		if err := r.admit(ctx, ids); err != nil {
			return zero, err
		}
		ctx, settle := r.call(ctx, ids.Page, "the "+o.Name, r.boundOf(o.Bound, in))
		defer func() { err = settle(err) }()
		var entry *lease.Entry
		if o.Effect {
			key, what := effectOf(in)
			var fresh bool
			if entry, fresh, err = r.claimEffect(ctx, key, o.Name, what); err != nil {
				return zero, err
			}
			if !fresh && h.observe != nil {
				return h.observe(ctx, entry, in)
			}
			if !fresh {
				return recorded[Out](replayed(entry.Replay(ctx)))
			}
		}
		p, acted, err := r.reach(ctx, o.Judge, ids.Page) // acted: the origin acted on, before the operation may navigate
		if err == nil {
			err = r.checkTyped(&in, acted) // secrets: only for an origin they are bound to
		}
		if err == nil && h.check != nil {
			err = h.check(ctx, p, in)
		}
		if err != nil {
			r.auditOp(ctx, &o.Meta, in, ids.Page, nil, "", err) // a refused effect is recorded too
			if entry != nil {
				r.cancelEffect(entry, err)
			}
			return zero, err
		}
		if entry == nil {
			out, err := h.do(ctx, p, in)
			r.auditOp(ctx, &o.Meta, in, ids.Page, p, acted, err)
			return out, err
		}
		outcome, err := entry.Dispatch(ctx, func(ctx context.Context) (lease.Outcome, lease.EffectTrigger) {
			out, err := h.do(ctx, p, in)
			r.auditOp(ctx, &o.Meta, in, ids.Page, p, acted, err)
			if err != nil {
				return lease.Outcome{Err: err}, settleOf(err)
			}
			raw, err := json.Marshal(out)
			return lease.Outcome{Result: raw, Err: err}, lease.EffectAck // it happened, whatever the encoding did
		})
		if err != nil {
			return zero, err
		}
		return recorded[Out](outcome.Result, outcome.Err)
	})
}

// reach finds the page id names and judges it as j says, and returns the
// origin it is on when it was judged ("" when it was not read).
func (r *Runner) reach(ctx context.Context, j op.Judge, id string) (*Page, string, error) {
	switch j {
	case op.JudgeLive:
		return r.readablePageAt(ctx, id)
	case op.JudgeNavigable:
		p, err := r.page(id)
		if err != nil || !p.personal() {
			return p, "", err
		}
		return r.readablePageAt(ctx, id)
	case op.JudgeTarget:
		p, err := r.page(id)
		if err != nil {
			return nil, "", err
		}
		u, err := p.targetURL(ctx)
		if err != nil {
			return nil, "", err
		}
		if err := p.judge(u); err != nil {
			return nil, "", err
		}
		return p, originOf(u), nil
	case op.JudgeNone:
		p, err := r.page(id)
		return p, "", err
	}
	panic(fmt.Sprintf("runner: judge %d has no rule", j))
}

// effectOf is an effect's idempotency key and what the effect is: its
// input without the page handle and the key, which a retry after a
// reconnect may change.
func effectOf[In op.Input](in In) (string, In) {
	what := in
	var key string
	if k, ok := any(&what).(op.Keyer); ok {
		key = k.Key()
		*k.KeyRef() = ""
	}
	if ps, ok := any(&what).(op.PageSetter); ok {
		ps.SetPage("")
	}
	return key, what
}

// boundOf is how long an operation of the table may run with in.
func (r *Runner) boundOf(b op.Bound, in any) time.Duration {
	switch b {
	case op.CallBound:
		return r.callBound()
	case op.LaunchBound:
		return max(r.callBound(), DefaultCallBound)
	case op.StatusBound:
		return statusBound
	case op.ShutdownBound:
		return shutdownTimeout
	case op.WaitBound:
		return r.callBound() + in.(op.Waiter).WaitFor()
	}
	panic(fmt.Sprintf("runner: operation bound %d has no duration", b))
}

// probe performs one action of the table, named by the probe, with the
// action's own handler, and reports its effect. The probe's parameters are
// decoded as that action's input, strictly: one the action does not take
// is refused, none is dropped.
func (s *opServer) probe(ctx context.Context, p *Page, in op.ProbeIn) (op.ProbeResult, error) {
	act, ok := s.actions[in.Action]
	d, _ := op.Lookup(in.Action)
	if !ok || d == nil {
		return op.ProbeResult{}, fsm.Refusef(fsm.InvalidArgument, "the probe's action is one of %s", strings.Join(slices.Sorted(mapKeys(s.actions)), ", "))
	}
	args, err := probeArgs(in)
	if err != nil {
		return op.ProbeResult{}, err
	}
	actIn, err := d.Decode(args)
	if err != nil {
		return op.ProbeResult{}, fsm.Refusef(fsm.InvalidArgument, "%s takes only %s", in.Action, strings.Join(op.Params(d), ", "))
	}
	res, err := p.surf.Probe(ctx, surface.ProbeAction{
		Act:    func(ctx context.Context) (*surface.ActionResult, error) { return act(ctx, p, actIn) },
		Settle: time.Duration(in.SettleMS) * time.Millisecond,
	})
	if err != nil {
		return op.ProbeResult{}, err
	}
	return wireProbe(p.id, *res), nil
}

// probeArgs are the probe's parameters as its action's input: every one it
// was given, by its name, and the page.
func probeArgs(in op.ProbeIn) (json.RawMessage, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("runner: probe arguments: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("runner: probe arguments: %w", err)
	}
	delete(m, "action")
	delete(m, "settleMs")
	delete(m, "idempotencyKey")
	return json.Marshal(m)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// need is an action's required target.
func need(action string, t *op.Target) (surface.Target, error) {
	if t == nil {
		return surface.Target{}, fsm.Refusef(fsm.InvalidArgument, "%s needs a target", action)
	}
	return surface.Target(*t), nil
}

// surfaceTarget is an optional target as the surface takes it.
func surfaceTarget(t *op.Target) *surface.Target {
	if t == nil {
		return nil
	}
	st := surface.Target(*t)
	return &st
}

// wireAction is the surface's action result on the wire.
func wireAction(a surface.ActionResult) op.ActionResult {
	w := op.ActionResult{
		Action: a.Action, Role: a.Role, Tag: a.Tag, Rebound: a.Rebound, NoOp: a.NoOp,
		Requested: a.Requested, Delivered: a.Delivered, Length: a.Length,
		Checked: a.Checked, Selected: a.Selected, Files: a.Files, Media: a.Media, Dropped: a.Dropped,
		Scroll:     mapPtr(a.Scroll, func(v surface.ScrollState) op.ScrollState { return op.ScrollState(v) }),
		Viewport:   mapPtr(a.Viewport, func(v surface.Viewport) op.Viewport { return op.Viewport(v) }),
		Navigation: mapPtr(a.Navigation, func(v surface.Navigation) op.Navigation { return op.Navigation(v) }),
		NewTab:     mapPtr(a.NewTab, func(v surface.NewTab) op.NewTab { return op.NewTab(v) }),
		Download:   mapPtr(a.Download, func(v surface.DownloadStart) op.DownloadStart { return op.DownloadStart(v) }),
	}
	w.Dialog = mapPtr(a.Dialog, wireDialog)
	return w
}

// wireDialog is a dialog on the wire (the document that opened it stays).
func wireDialog(d surface.Dialog) op.Dialog {
	return op.Dialog{Type: d.Type, Message: d.Message, DefaultPrompt: d.DefaultPrompt}
}

// wireDiagRead is a diagnostics read on the wire.
func wireDiagRead(r surface.DiagRead) op.DiagRead {
	w := op.DiagRead{Next: r.Next, More: r.More, Discarded: r.Discarded, InFlight: r.InFlight, Entries: make([]op.DiagEntry, 0, len(r.Entries))}
	for _, e := range r.Entries {
		w.Entries = append(w.Entries, wireDiag(e))
	}
	return w
}

// wireProbe is the surface's probe result on the wire.
func wireProbe(page string, pr surface.ProbeResult) op.ProbeResult {
	w := op.ProbeResult{
		Page: page, Before: mapPtr(pr.Before, docIdentity), After: mapPtr(pr.After, docIdentity),
		DocumentChanged: pr.DocumentChanged, Refusal: pr.Refusal, ConsoleDiscarded: pr.ConsoleDiscarded,
		Settled: pr.Settled, InFlight: pr.InFlight, ConsoleErrors: make([]op.DiagEntry, 0, len(pr.ConsoleErrors)),
	}
	if pr.Action != nil {
		a := wireAction(*pr.Action)
		w.Action = &a
	}
	for _, e := range pr.ConsoleErrors {
		w.ConsoleErrors = append(w.ConsoleErrors, wireDiag(e))
	}
	return w
}

func docIdentity(d surface.DocIdentity) op.DocIdentity { return op.DocIdentity(d) }

// mapPtr is f of *p, or nil.
func mapPtr[S, W any](p *S, f func(S) W) *W {
	if p == nil {
		return nil
	}
	w := f(*p)
	return &w
}

// wireDiag is a diagnostic entry on the wire (its unexported fields stay).
func wireDiag(e surface.DiagEntry) op.DiagEntry {
	return op.DiagEntry{Seq: e.Seq, Kind: e.Kind, Level: e.Level, Origin: e.Origin, Text: e.Text, URL: e.URL,
		Method: e.Method, Status: e.Status, Failed: e.Failed, Type: e.Type}
}

package surface

import (
	"context"
	"errors"
	"fmt"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// readReserve is kept from the caller's deadline to read the page back after
// waiting for a load (a page still loading may take a while to answer).
const readReserve = 2 * time.Second

// DocIdentity names the main document: an opaque id that changes with every
// new document, and its live URL and title.
type DocIdentity struct {
	Document string `json:"document"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

// NavResult is what a navigation did, read back from the page.
type NavResult struct {
	DocIdentity
	// Loaded reports that the load event of the new document fired before
	// the deadline.
	Loaded bool `json:"loaded"`
	// Status is the HTTP status of the document response, when seen.
	Status int64 `json:"status,omitempty"`
	// SameDocument reports a fragment or history-API navigation.
	SameDocument bool `json:"sameDocument,omitempty"`
	// Dialog is set when the new document opened a JavaScript dialog before
	// its load event; the identity fields are then empty until it is
	// handled.
	Dialog *Dialog `json:"dialog,omitempty"`
}

// Navigate loads url in the main frame. The load listener is armed before
// Page.navigate, so a fast load is not missed and the old document's
// readyState is never mistaken for the new one's. A browser load error is
// browser_navigation_failed with the network error name. URL and title are
// read live from the new document afterwards.
func (p *Page) Navigate(ctx context.Context, url string) (*NavResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	lc, stop := p.sess.Events(page.LifecycleEvent.Method)
	defer stop()
	p.mu.Lock()
	dch := p.dialogCh
	p.mu.Unlock()
	res, err := cdproto.Call(ctx, p.sess, page.Navigate, page.NavigateParams{URL: url})
	if err != nil {
		if isProtocolError(err) {
			return nil, fsm.Refuse(fsm.InvalidArgument, "the browser refused the URL").WithCause(err)
		}
		return nil, p.dispatchErr(ctx, err)
	}
	if res.ErrorText != "" {
		return nil, fsm.Refusef(fsm.NavigationFailed, "%s", capString(res.ErrorText, 120))
	}
	if res.IsDownload {
		return nil, fsm.Refuse(fsm.NavigationFailed, "the URL started a download")
	}
	out := &NavResult{}
	if res.LoaderID == "" {
		out.SameDocument, out.Loaded = true, true
	} else {
		wctx := ctx
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			wctx, cancel = context.WithDeadline(ctx, dl.Add(-readReserve))
			defer cancel()
		}
		out.Loaded = waitLifecycle(wctx, lc, dch, res.FrameID, res.LoaderID, "load")
		out.Status = p.documentStatus(string(res.LoaderID))
		if d := p.Dialog(); d != nil {
			out.Dialog = d
			return out, nil
		}
	}
	id, err := p.Identity(ctx)
	if err != nil {
		if !out.Loaded && fsm.IsCode(err, fsm.Timeout) {
			// The document committed and is still loading (a huge page keeps
			// its main thread busy): what is known is returned, not a
			// failure; the identity stays empty.
			return out, nil
		}
		return out, err
	}
	out.DocIdentity = *id
	return out, nil
}

// waitLifecycle waits for the lifecycle event name of loader in frame, or
// until a JavaScript dialog opens (which blocks the load).
func waitLifecycle(ctx context.Context, ch <-chan any, dialog <-chan struct{}, frame cdproto.FrameID, loader cdproto.LoaderID, name string) bool {
	for {
		select {
		case <-dialog:
			return false
		case v, ok := <-ch:
			if !ok {
				return false
			}
			if ev, ok := v.(*page.EventLifecycleEvent); ok && ev.FrameID == frame && ev.LoaderID == loader && ev.Name == name {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

// documentStatus returns the HTTP status of a navigation's document request
// (its request id is the loader id), if the network log still has it.
func (p *Page) documentStatus(loader string) int64 {
	d := &p.diag
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.network.entries) - 1; i >= 0; i-- {
		e := &d.network.entries[i]
		if e.Type == "Document" && e.reqID == loader {
			return e.Status
		}
	}
	return 0
}

// Identity reads the main document's identity, URL and title live from the
// page (never from target lists, which lag navigations).
func (p *Page) Identity(ctx context.Context) (*DocIdentity, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	var out DocIdentity
	err := p.withMain(ctx, func(w *world) error {
		r, err := invoke(ctx, p, w, jsIdentity, none{})
		if err != nil {
			return err
		}
		out = DocIdentity{Document: w.doc, URL: r.URL, Title: r.Title}
		return nil
	})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return &out, nil
}

// ReadResult is the visible text of the page, bounded.
type ReadResult struct {
	DocIdentity
	Text       string `json:"text"`
	Truncated  bool   `json:"truncated,omitempty"`
	TotalChars int    `json:"totalChars"`
}

// Read returns the visible text of the main document (innerText), at most
// maxChars characters (default 20,000) followed by a truncation marker.
func (p *Page) Read(ctx context.Context, maxChars int) (*ReadResult, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	if maxChars <= 0 {
		maxChars = DefaultSnapshotChars
	}
	if maxChars > MaxSnapshotChars {
		maxChars = MaxSnapshotChars
	}
	var out ReadResult
	err := p.admitted(ctx, func(w *world) error {
		r, err := invoke(ctx, p, w, jsRead, readArgs{Max: maxChars})
		if err != nil {
			return err
		}
		if r.Err != "" {
			p.dropWorld(w)
			return errWorldGone
		}
		out = ReadResult{DocIdentity: DocIdentity{Document: w.doc, URL: r.URL, Title: r.Title}, Text: r.Text, TotalChars: r.Total}
		if r.Total > len([]rune(r.Text)) {
			out.Truncated = true
			out.Text += fmt.Sprintf("\n… truncated: %d of %d characters shown", len([]rune(r.Text)), r.Total)
		}
		return nil
	})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return &out, nil
}

// Evaluate bounds.
const (
	EvalMaxDepth  = 8
	EvalMaxItems  = 2000
	EvalMaxFields = 200
	EvalMaxChars  = 200000
)

// EvalResult is the bounded JSON form of an evaluation's value.
type EvalResult struct {
	// Value is the JSON value; truncated parts hold "[truncated …]" markers.
	Value jsonv2.Value `json:"value"`
	// Type is the JavaScript type of the value.
	Type      string `json:"type"`
	Truncated bool   `json:"truncated,omitempty"`
	// Exception is set when the expression threw (or its promise rejected).
	Exception string `json:"exception,omitempty"`
}

const serializer = `function(){
const L={depth:` + "8" + `,items:` + "2000" + `,fields:` + "200" + `}; let budget=` + "200000" + `; let trunc=false; const seen=new WeakSet();
function str(s){ if(s.length>budget){trunc=true; const t=s.slice(0,Math.max(0,budget)); budget=0; return t+'…[truncated]';} budget-=s.length; return s; }
function ser(v,d){
 if(v===null||typeof v==='boolean') return v;
 if(typeof v==='number') return Number.isFinite(v)?v:String(v);
 if(typeof v==='bigint') return v.toString()+'n';
 if(typeof v==='string') return str(v);
 if(typeof v==='undefined') return '[undefined]';
 if(typeof v==='symbol') return str(v.toString());
 if(typeof v==='function') return '[function '+(v.name||'anonymous')+']';
 if(budget<=0){trunc=true; return '[truncated]';}
 if(d>=L.depth){trunc=true; return '[truncated: depth '+L.depth+']';}
 if(seen.has(v)) return '[circular]';
 seen.add(v);
 try{
  if(typeof Node!=='undefined' && v instanceof Node) return '[node '+v.nodeName.toLowerCase()+']';
  if(v instanceof Date) return isNaN(v)?'Invalid Date':v.toISOString();
  if(v instanceof Error) return {name:str(String(v.name)),message:str(String(v.message))};
  if(v instanceof Map) v=Object.fromEntries(Array.from(v.entries()).slice(0,L.fields+1).map(([k,x])=>[String(k),x]));
  else if(v instanceof Set) v=Array.from(v);
  if(Array.isArray(v)||ArrayBuffer.isView(v)){
   const n=v.length, out=[];
   for(let i=0;i<Math.min(n,L.items);i++){ if(budget<=0){trunc=true; out.push('[truncated]'); return out;} out.push(ser(v[i],d+1)); }
   if(n>L.items){trunc=true; out.push('[truncated: '+(n-L.items)+' more items]');}
   return out;
  }
  const keys=Object.keys(v), out={};
  for(let i=0;i<Math.min(keys.length,L.fields);i++){
   if(budget<=0){trunc=true; out['…']='[truncated]'; return out;}
   let x; try{ x=v[keys[i]]; }catch(e){ x='[getter threw]'; }
   out[str(keys[i])]=ser(x,d+1);
  }
  if(keys.length>L.fields){trunc=true; out['…']='[truncated: '+(keys.length-L.fields)+' more fields]';}
  return out;
 }catch(e){ return '[unserializable]'; }
}
const r=ser(this,0); return {v:r,t:trunc};
}`

// Evaluate runs a JavaScript expression in the page's main world (awaiting a
// promise) and returns its value bounded: depth 8, 2,000 array items, 200
// object fields, 200,000 characters, with truncation markers.
//
// It runs in the main world of the admitted document, addressed by that
// context's unique id (bound to the document before anything runs), so it
// cannot run in a document that replaced it; the document is admitted again
// afterwards, and a value read across a change is discarded.
func (p *Page) Evaluate(ctx context.Context, expr string) (*EvalResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var w *world
	var mainCtx string
	for attempt := 0; ; attempt++ {
		if w, err = p.mainWorld(ctx); err == nil {
			if err = p.admit(ctx, w); err == nil {
				mainCtx, err = p.mainContextOf(ctx, w)
			}
		}
		if !errors.Is(err, errWorldGone) || attempt == 1 {
			break
		}
	}
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	ep := runtime.EvaluateParams{Expression: expr, AwaitPromise: new(true), ObjectGroup: "webcodex-eval", UniqueContextID: mainCtx}
	res, err := cdproto.Call(ctx, p.sess, runtime.Evaluate, ep)
	if err != nil {
		if r := tooLarge("the value (the expression did run)", err); r != nil {
			return nil, r
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// A script that never yields would wedge the tab for good.
			return nil, p.timedOut(ctx, "the expression", err)
		}
		if isContextGone(err) {
			return nil, fsm.Refuse(fsm.BindingStale, "the document was replaced before the expression ran").WithCause(err)
		}
		if isProtocolError(err) {
			return nil, fsm.Refuse(fsm.InvalidArgument, "the browser refused the expression").WithCause(err)
		}
		return nil, p.dispatchErr(ctx, err)
	}
	defer func() {
		_, _ = cdproto.Call(ctx, p.sess, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: "webcodex-eval"})
	}()
	out, err := p.evalValue(ctx, res)
	if err != nil {
		return nil, err
	}
	// The value is the authorized document's only if that document is still
	// the page's, and still allowed.
	if err := p.admit(ctx, w); err != nil {
		if errors.Is(err, errWorldGone) {
			return nil, fsm.Refuse(fsm.BindingStale, "the document was replaced while the expression ran (it did run); its value is discarded").WithCause(err)
		}
		return nil, p.readErr(ctx, err)
	}
	return out, nil
}

// evalValue reads an evaluation's result into its bounded JSON form.
func (p *Page) evalValue(ctx context.Context, res runtime.EvaluateResult) (*EvalResult, error) {
	out := &EvalResult{}
	if res.ExceptionDetails != nil {
		msg := res.ExceptionDetails.Text
		if res.ExceptionDetails.Exception != nil && res.ExceptionDetails.Exception.Description != "" {
			msg = res.ExceptionDetails.Exception.Description
		}
		out.Exception = capString(firstLine(msg), 2000)
		return out, nil
	}
	r := res.Result
	if r == nil {
		return out, nil
	}
	out.Type = string(r.Type)
	if r.ObjectID == "" {
		switch {
		case r.Type == runtime.RemoteObjectTypeUndefined:
			out.Value = jsonv2.Value(`"[undefined]"`)
		case r.UnserializableValue != "":
			out.Value, _ = jsonv2.Marshal(string(r.UnserializableValue))
		case r.Type == runtime.RemoteObjectTypeString:
			var s string
			_ = jsonv2.Unmarshal(r.Value, &s)
			if len(s) > EvalMaxChars {
				s, out.Truncated = capString(s, EvalMaxChars)+"[truncated]", true
			}
			out.Value, _ = jsonv2.Marshal(s)
		default:
			out.Value = r.Value
		}
		return out, nil
	}
	// The object belongs to the context it was made in: the serializer runs
	// there.
	ser, err := cdproto.Call(ctx, p.sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: serializer, ObjectID: r.ObjectID, ReturnByValue: new(true), Silent: new(true),
	})
	if err != nil {
		if isContextGone(err) {
			return nil, fsm.Refuse(fsm.BindingStale, "the document was replaced while the expression ran (it did run); its value is discarded").WithCause(err)
		}
		return nil, p.readErr(ctx, err)
	}
	if ser.ExceptionDetails != nil || ser.Result == nil {
		out.Value = jsonv2.Value(`"[unserializable]"`)
		return out, nil
	}
	var env struct {
		V jsonv2.Value `json:"v"`
		T bool         `json:"t"`
	}
	if err := jsonv2.Unmarshal(ser.Result.Value, &env); err != nil {
		return nil, fmt.Errorf("surface: evaluate: decoding: %w", err)
	}
	out.Value, out.Truncated = env.V, env.T
	return out, nil
}

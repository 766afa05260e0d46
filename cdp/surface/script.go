package surface

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// The page script lives in inject/, one file per concern, evaluated as one
// function expression of the document nonce (inject/99-api.js says how).
// Go reaches it only through invoke (or invokeObject for element results),
// with an entry point declared once below with the Go types of its argument
// and result: the nonce is added in one place, and a call that reaches
// another document is errWorldGone.

//go:embed inject/*.js
var injectFS embed.FS

// injectJS is the page script: the files of inject/ in name order, inside
// the function expression of the nonce.
var injectJS = mustAssemble(injectFS)

func mustAssemble(fsys fs.FS) string {
	names, err := fs.Glob(fsys, "inject/*.js")
	if err != nil || len(names) == 0 {
		panic(fmt.Sprintf("surface: page script files: %v", err))
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("(function (nonce) {\n'use strict';\n")
	for _, n := range names {
		src, err := fs.ReadFile(fsys, n)
		if err != nil {
			panic(fmt.Sprintf("surface: page script %s: %v", n, err))
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	b.WriteString("return API;\n})")
	return b.String()
}

// wrongDocument is what the script throws when a call carries another
// document's nonce.
const wrongDocument = "wrong-document"

// jsFn is an entry point of the page script, with the Go types of its
// argument (A) and result (R). await says it returns a promise.
type jsFn[A, R any] struct {
	name  string
	await bool
}

// none is the argument of entry points that take none.
type none struct{}

// The entry points. Their results embed pageErr: a refusal is
// {err: code, ...counts} with the project's own codes.
var (
	jsSnapshot    = jsFn[snapArgs, pageSnap]{name: "snapshot"}
	jsMore        = jsFn[snapArgs, pageSnap]{name: "more"}
	jsExpand      = jsFn[expandArgs, pageSnap]{name: "expand"}
	jsFrameOrder  = jsFn[none, frameOrderResult]{name: "frameOrder"}
	jsFrameBox    = jsFn[frameKeyArgs, pointResult]{name: "frameBox"}
	jsPrepare     = jsFn[prepareArgs, prepResult]{name: "prepare"}
	jsCount       = jsFn[targetArgs, countResult]{name: "count"}
	jsReadBack    = jsFn[readBackArgs, readBackResult]{name: "readBack"}
	jsReadChecked = jsFn[none, checkedResult]{name: "readChecked"}
	jsScroll      = jsFn[scrollArgs, scrollResult]{name: "scroll"}
	jsIdentity    = jsFn[none, identityResult]{name: "identity"}
	jsNavState    = jsFn[none, navStateResult]{name: "navState"}
	jsRead        = jsFn[readArgs, readResult]{name: "read"}
	jsWait        = jsFn[waitArgs, waitResult]{name: "wait", await: true}
	jsSettle      = jsFn[settleArgs, settleResult]{name: "settle", await: true}
	jsHitFrame    = jsFn[pointArgs, reachResult]{name: "hitFrame"}
	jsFocusFrame  = jsFn[none, reachResult]{name: "focusFrame"}
	jsFrameLayout = jsFn[frameLayoutArgs, frameBoxes]{name: "frameLayout"}
	jsAfterFrame  = jsFn[none, afterFrameResult]{name: "afterFrame", await: true}
	// armDrag watches for the page's HTML drag; dragState reads (or ends) it.
	jsArmDrag   = jsFn[none, pageErr]{name: "armDrag"}
	jsDragState = jsFn[dragStateArgs, dragStateResult]{name: "dragState"}
	// closedRoot forgets the closed shadow roots kept; called with a root
	// as its element (closedRootFn), it keeps one: see keepClosedRoots.
	jsClosedRoot = jsFn[closedRootArgs, bool]{name: "closedRoot"}
	// Entry points whose result is kept as a remote object (elements).
	jsClosedHosts    = jsObj{name: "closedHosts"}
	jsPendingElement = jsObj{name: "pendingElement"}
	jsElementOf      = jsObj{name: "elementOf"}
	// tagFrame takes an element: see tagChildFrames.
	jsTagFrame = "tagFrame"
)

// jsObj is an entry point whose result stays in the page as a remote
// object.
type jsObj struct{ name string }

// Arguments.
type (
	snapArgs struct {
		Snap        string `json:"snap"`
		Prefix      string `json:"prefix,omitempty"`
		Budget      int    `json:"budget"`
		MaxLines    int    `json:"maxLines,omitempty"`
		Interactive bool   `json:"interactive,omitempty"`
		Full        bool   `json:"full,omitempty"`
		FoldAt      int    `json:"foldAt,omitempty"` // fold only an outline longer than this
		ScopeRef    string `json:"scopeRef,omitempty"`
		ScopeSnap   string `json:"scopeSnap,omitempty"`
		ScopeCSS    string `json:"scopeCss,omitempty"`
		Query       *Query `json:"query,omitempty"`
	}
	expandArgs struct {
		Snap        string `json:"snap"`
		Prefix      string `json:"prefix"`
		Fold        int    `json:"fold"`
		From        int    `json:"from"`
		To          int    `json:"to"`
		Interactive bool   `json:"interactive,omitempty"`
		MaxLines    int    `json:"maxLines"`
	}
	frameKeyArgs struct {
		Key string `json:"key"`
	}
	prepareArgs struct {
		Kind   string     `json:"kind"`
		Target pageTarget `json:"target"`
		Clear  bool       `json:"clear,omitempty"`
		Empty  bool       `json:"empty,omitempty"`
		Want   bool       `json:"want,omitempty"`
		Values []string   `json:"values,omitempty"`
	}
	targetArgs struct {
		Target pageTarget `json:"target"`
	}
	readBackArgs struct {
		Text string `json:"text"`
	}
	scrollArgs struct {
		To string  `json:"to,omitempty"`
		DX float64 `json:"dx,omitempty"`
		DY float64 `json:"dy,omitempty"`
	}
	readArgs struct {
		Max int `json:"max"`
	}
	waitArgs struct {
		Cond    string      `json:"cond"`
		Text    string      `json:"text,omitempty"`
		Timeout int64       `json:"timeout"`
		Target  *pageTarget `json:"target,omitempty"`
	}
	settleArgs struct {
		QuietMs int64 `json:"quietMs"`
		MaxMs   int64 `json:"maxMs"`
	}
	pointArgs struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
)

// Results.
type (
	frameOrderResult struct {
		pageErr
		Keys []string `json:"keys"`
	}
	pointResult struct {
		pageErr
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	countResult struct {
		pageErr
	}
	readBackResult struct {
		pageErr
		Requested int             `json:"requested"`
		Delivered int             `json:"delivered"`
		Length    int             `json:"length"`
		Exact     bool            `json:"exact"`
		Nav       *navStateResult `json:"nav"`
	}
	checkedResult struct {
		pageErr
		Checked *bool `json:"checked"`
	}
	scrollResult struct {
		pageErr
		ScrollState
	}
	identityResult struct {
		pageErr
		URL        string `json:"url"`
		Title      string `json:"title"`
		ReadyState string `json:"readyState"`
	}
	navStateResult struct {
		pageErr
		URL   string `json:"url"`
		Title string `json:"title"`
		Seq   int    `json:"seq"`
		Last  *struct {
			URL          string `json:"url"`
			SameDocument bool   `json:"sameDocument"`
			Download     bool   `json:"download"`
		} `json:"last"`
	}
	readResult struct {
		pageErr
		Text  string `json:"text"`
		Total int    `json:"total"`
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	waitResult struct {
		pageErr
		Found bool `json:"found"`
	}
	settleResult struct {
		pageErr
		Settled bool `json:"settled"`
	}
	reachResult struct {
		pageErr
		Cross bool    `json:"cross"`
		Key   string  `json:"key"`
		X     float64 `json:"x"`
		Y     float64 `json:"y"`
	}
	closedRootArgs struct {
		Reset bool `json:"reset"`
	}
	afterFrameResult struct {
		pageErr
		Frame bool `json:"frame"`
	}
)

// invoke runs fn(arg) in world w and decodes its result. A document that
// is gone, or a world holding another document's nonce, is errWorldGone.
func invoke[A, R any](ctx context.Context, p *Page, w *world, fn jsFn[A, R], arg A) (R, error) {
	var out R
	b, err := jsonv2.Marshal(arg)
	if err != nil {
		return out, fmt.Errorf("surface: %s: %w", fn.name, err)
	}
	ep := w.evaluate(p.callExpr(w, fn.name, string(b)))
	ep.ReturnByValue, ep.AwaitPromise, ep.Silent = new(true), new(fn.await), new(true)
	res, err := p.evaluateIn(ctx, w, fn.name, ep)
	if err != nil {
		return out, err
	}
	if res.Result != nil && len(res.Result.Value) > 0 {
		if err := jsonv2.Unmarshal(res.Result.Value, &out); err != nil {
			return out, fmt.Errorf("surface: %s: decoding: %w", fn.name, err)
		}
	}
	return out, nil
}

// invokeObject runs fn(arg) in world w and returns its result as a remote
// object, which the caller releases.
func (p *Page) invokeObject(ctx context.Context, w *world, fn jsObj, arg any) (*runtime.RemoteObject, error) {
	b, err := jsonv2.Marshal(arg)
	if err != nil {
		return nil, fmt.Errorf("surface: %s: %w", fn.name, err)
	}
	ep := w.evaluate(p.callExpr(w, fn.name, string(b)))
	ep.Silent = new(true)
	res, err := p.evaluateIn(ctx, w, fn.name, ep)
	if err != nil {
		return nil, err
	}
	return res.Result, nil
}

// callExpr is the one expression that calls the page script.
func (p *Page) callExpr(w *world, name, argJSON string) string {
	return p.global + ".call(" + quoteJS(name) + ", " + quoteJS(w.nonce) + ", " + argJSON + ")"
}

// tagFrameFn is the function declaration that tags an <iframe> (its first
// argument) with a frame key, through the same entry as every call.
func (p *Page) tagFrameFn() string {
	return "function(el, n, k){ return " + p.global + ".call(" + quoteJS(jsTagFrame) + ", n, {key: k}, el); }"
}

// closedRootFn is the function declaration that hands a closed shadow root
// (its first argument) to the page script.
func (p *Page) closedRootFn() string {
	return "function(r, n){ return " + p.global + ".call(" + quoteJS(jsClosedRoot.name) + ", n, {}, r); }"
}

// evaluateIn sends a Runtime.evaluate to w and classifies its failures:
// a context or document that is gone, or the wrong document, is
// errWorldGone (and w is dropped).
func (p *Page) evaluateIn(ctx context.Context, w *world, name string, ep runtime.EvaluateParams) (*runtime.EvaluateResult, error) {
	res, err := cdproto.Call(ctx, w.sess, runtime.Evaluate, ep)
	if err != nil {
		if isContextGone(err) {
			p.dropWorld(w)
			return nil, errWorldGone
		}
		return nil, err
	}
	if d := res.ExceptionDetails; d != nil {
		if thrownValue(d) == wrongDocument {
			p.dropWorld(w)
			return nil, errWorldGone
		}
		desc := d.Text
		if d.Exception != nil {
			desc = d.Exception.Description
		}
		if strings.Contains(desc, p.global) || strings.Contains(desc, "Execution context was destroyed") {
			p.dropWorld(w)
			return nil, errWorldGone
		}
		return nil, fmt.Errorf("surface: page script %s failed: %s", name, firstLine(desc))
	}
	return &res, nil
}

// thrownValue is the string a script threw, if it threw a string.
func thrownValue(d *runtime.ExceptionDetails) string {
	if d.Exception == nil || d.Exception.Type != runtime.RemoteObjectTypeString {
		return ""
	}
	var s string
	if jsonv2.Unmarshal(d.Exception.Value, &s) != nil {
		return ""
	}
	return s
}

// scriptCodes are the refusal codes the page script returns (R in
// inject/00-base.js); a test keeps the two sets equal.
var scriptCodes = []fsm.Code{
	fsm.ElementNotFound, fsm.ElementHidden, fsm.ElementAmbiguous, fsm.ElementDisabled,
	fsm.ElementObscured, fsm.BindingStale, fsm.InvalidArgument,
}

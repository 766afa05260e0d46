package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// Tool bounds.
const (
	defaultWaitSeconds = 10
	maxWaitSeconds     = 120
	maxTimeWait        = 30 // seconds, condition time
	maxFormFields      = 50
	maxTabs            = 100
)

// toolOrder is the tool list in the order it is registered.
var toolOrder = []string{
	"browser_launch", "browser_attach", "browser_discover", "browser_status", "browser_reconnect", "browser_close", "browser_adopt",
	"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_fill_form", "browser_press_key",
	"browser_select_option", "browser_hover", "browser_wait_for", "browser_take_screenshot", "browser_evaluate",
	"browser_file_upload", "browser_handle_dialog", "browser_tabs", "browser_console_messages",
	"browser_network_requests", "browser_cdp",
}

func (s *Server) addTools() {
	read := []Scope{ScopeRead}
	launch := []Scope{ScopeLaunch}
	control := []Scope{ScopeControl}

	addTool(s, toolSpec{name: "browser_launch", anyOf: launch,
		desc: "Launch a Chromium webcodex owns: headless on a fresh profile removed on close, or a kept managed one."},
		nil, s.launch)
	addTool(s, toolSpec{name: "browser_attach", anyOf: control,
		desc: "Attach to the person's running Chrome or Edge, or a tab they shared, if the owner allows it and the person approves."},
		nil, s.attach)
	opTool(s, &op.Discover.Meta, "browser_discover", nil, s.discover)
	opTool(s, &op.Status.Meta, "browser_status", nil, s.status)
	addTool(s, toolSpec{name: "browser_reconnect", anyOf: control,
		desc: "Reconnect an attached browser that dropped; old tab ids and refs are refused after."},
		nil, s.reconnect)
	addTool(s, toolSpec{name: "browser_close", anyOf: []Scope{ScopeLaunch, ScopeControl},
		desc: "Close a browser webcodex launched, or detach from an attached one (closing nothing)."},
		nil, s.closeBrowser)
	addTool(s, toolSpec{name: "browser_adopt", anyOf: []Scope{ScopeLaunch, ScopeControl},
		desc: "With a shared Runner: take over a browser an ended session kept, by id."},
		nil, s.adopt)

	opTool(s, &op.Goto.Meta, "browser_navigate", nil, s.navigate)
	opTool(s, &op.TakeSnapshot.Meta, "browser_snapshot",
		func(sc *jsonschema.Schema) {
			bounds(sc, "maxChars", 0, 200000)
			bounds(sc, "depth", 0, 100)
		}, s.snapshot)
	opTool(s, &op.Click.Meta, "browser_click",
		func(sc *jsonschema.Schema) {
			elementTerms(sc)
			enum(sc, "button", "left", "right", "middle")
			enumItems(sc, "modifiers", "Alt", "Control", "ControlOrMeta", "Meta", "Shift")
		}, s.click)
	opTool(s, &op.Type.Meta, "browser_type", nil, s.typeText)
	opTool(s, &op.Fill.Meta, "browser_fill_form",
		func(sc *jsonschema.Schema) {
			maxItems(sc, "fields", 1, maxFormFields)
			enum(sc.Properties["fields"].Items, "type", "textbox", "checkbox", "radio", "combobox", "slider")
		}, s.fillForm)
	opTool(s, &op.Press.Meta, "browser_press_key", nil, s.pressKey)
	opTool(s, &op.Select.Meta, "browser_select_option",
		func(sc *jsonschema.Schema) { maxItems(sc, "values", 1, 100) }, s.selectOption)
	opTool(s, &op.Hover.Meta, "browser_hover", nil, s.hover)
	opTool(s, &op.Wait.Meta, "browser_wait_for",
		func(sc *jsonschema.Schema) {
			enum(sc, "condition", "visible", "hidden", "enabled", "load", "url")
			bounds(sc, "timeout", 0, maxWaitSeconds)
			bounds(sc, "time", 0, maxTimeWait)
		}, s.waitFor)
	opTool(s, &op.Screenshot.Meta, "browser_take_screenshot",
		func(sc *jsonschema.Schema) {
			enum(sc, "type", "png", "jpeg")
			enum(sc, "scale", "css", "device")
		}, s.screenshot)
	opTool(s, &op.Eval.Meta, "browser_evaluate", nil, s.evaluate)
	opTool(s, &op.Upload.Meta, "browser_file_upload",
		func(sc *jsonschema.Schema) {
			maxItems(sc, "paths", 1, 20)
			maxItems(sc, "files", 1, 20)
		}, s.upload)
	opTool(s, &op.HandleDialog.Meta, "browser_handle_dialog", nil, s.handleDialog)
	addTool(s, toolSpec{name: "browser_tabs", anyOf: read,
		desc: "list, new (at url), select (make current) or close (one webcodex opened; default the current) tabs, by index or page id."},
		func(sc *jsonschema.Schema) { enum(sc, "action", "list", "new", "close", "select") }, s.tabs)
	opTool(s, &op.Console.Meta, "browser_console_messages",
		func(sc *jsonschema.Schema) { enum(sc, "level", "error", "warning", "info", "debug") }, s.console)
	opTool(s, &op.Network.Meta, "browser_network_requests", nil, s.network)
	addTool(s, toolSpec{name: "browser_cdp", anyOf: control, group: CapDevtools,
		desc: "One page-scoped DevTools Protocol command; those that bypass a boundary are refused. Off for attached browsers unless allowed."},
		nil, s.cdp)
	s.addVerbTools(read, control)       // history, scroll, probe, downloads (tools_verbs.go)
	s.addPlaywrightTools(read, control) // resize, media, the vision group (tools_playwright.go)
	s.addParityTools()                  // drag, drop, one request (tools_parity.go)
}

// ---------------------------------------------------------------- helpers

func (s *Server) setCurrent(browser, page string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if browser != "" {
		s.current.browser = browser
	}
	s.current.page = page
}

func (s *Server) currentIDs() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current.browser, s.current.page
}

// forgetPage clears the current page when it is id.
func (s *Server) forgetPage(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current.page == id {
		s.current.page = ""
	}
}

// forgetBrowser clears the current browser (and page) when it is id.
func (s *Server) forgetBrowser(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current.browser == id {
		s.current.browser, s.current.page = "", ""
	}
}

// page returns the page a tool acts on: the explicit id, else the current
// page, else the first visible page of the current (or first) browser.
func (s *Server) page(ctx context.Context, explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	cb, cp := s.currentIDs()
	if cp != "" {
		return cp, nil
	}
	st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
	if err != nil {
		return "", err
	}
	if len(st.Browsers) == 0 {
		return "", errNoBrowser
	}
	pick := func(b localapi.BrowserInfo) (string, bool) {
		if len(b.Pages) == 0 {
			return "", false
		}
		s.setCurrent(b.ID, b.Pages[0].ID)
		return b.Pages[0].ID, true
	}
	for _, b := range st.Browsers {
		if b.ID == cb {
			if id, ok := pick(b); ok {
				return id, nil
			}
		}
	}
	for _, b := range st.Browsers {
		if id, ok := pick(b); ok {
			return id, nil
		}
	}
	return "", fsm.Refuse(fsm.NotFound, "no visible page: open one with browser_tabs (action new)")
}

// browser returns the browser a tool acts on: the explicit id, else the
// current browser, else the first one.
func (s *Server) browser(ctx context.Context, explicit string) (localapi.BrowserInfo, error) {
	st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
	if err != nil {
		return localapi.BrowserInfo{}, err
	}
	id := explicit
	if id == "" {
		id, _ = s.currentIDs()
	}
	if id == "" {
		if len(st.Browsers) == 0 {
			return localapi.BrowserInfo{}, errNoBrowser
		}
		return st.Browsers[0], nil
	}
	for _, b := range st.Browsers {
		if b.ID == id {
			return b, nil
		}
	}
	if explicit == "" {
		s.forgetBrowser(id)
		return localapi.BrowserInfo{}, fsm.Refuse(fsm.NotFound, "the current browser is gone; see browser_status")
	}
	return localapi.BrowserInfo{}, fsm.Refuse(fsm.NotFound, "no such browser")
}

// snapshotReply reads a snapshot of page and remembers its id for bare
// refs.
func (s *Server) snapshotReply(ctx context.Context, req op.SnapshotIn) (snapshotView, error) {
	snap, err := callOp(ctx, s.runner, op.TakeSnapshot, req)
	if err != nil {
		return snapshotView{}, err
	}
	v, err := viewSnapshot(snap)
	if err != nil {
		return snapshotView{}, err
	}
	switch {
	case req.Cursor != "": // a chunk of a snapshot noted when it was taken
	case req.Query != nil:
		s.snaps.noteQuery(req.Page, v.id, snap.Text)
	default:
		s.snaps.note(req.Page, v.id)
	}
	return v, nil
}

// withSnapshot adds a fresh snapshot of page to r when asked; a snapshot
// that fails says so in a line, since the action itself happened.
func (s *Server) withSnapshot(ctx context.Context, r *reply, page string, want bool) *reply {
	if !want {
		return r
	}
	v, err := s.snapshotReply(ctx, op.SnapshotIn{OnPage: op.OnPage{Page: page}})
	if err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			ref = forAgent(ref)
			r.fields["snapshot_refusal"] = ref
			r.text += "the snapshot after it was " + errorText(ref) + "\n"
		} else {
			msg := capText(err.Error(), maxErrorChars)
			r.fields["snapshot_error"] = msg
			r.text += "the snapshot after it failed: " + msg + "\n"
		}
		return r
	}
	r.fields["snapshot"] = v.fields
	r.page = append(r.page, pageBlock{origin: v.origin, frame: "main", text: v.text})
	return r
}

// act runs one page action of the table on the page pageArg names (else
// the current one), under the tool call's idempotency key when in has
// none; the answer says what it did and caused.
func act[In op.Input](ctx context.Context, s *Server, o *op.Op[In, op.ActResult], pageArg string, in In, snap bool) (*reply, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, pageArg)
	if err != nil {
		return nil, err
	}
	res, err := actOn(ctx, s, o, page, in)
	if err != nil {
		return nil, err
	}
	r := &reply{text: actionText(&o.Meta, res), fields: map[string]any{"page": page, "result": res}, page: s.actionBlocks(ctx, page, res)}
	return s.withSnapshot(ctx, r, page, snap), nil
}

// actOn runs one page action on page, under the tool call's idempotency
// key when in has none.
func actOn[In op.Input](ctx context.Context, s *Server, o *op.Op[In, op.ActResult], page string, in In) (op.ActResult, error) {
	any(&in).(op.PageSetter).SetPage(page)
	if k, ok := any(&in).(op.Keyer); ok && k.Key() == "" {
		*k.KeyRef(), _ = ctx.Value(effectKeyCtx{}).(string)
	}
	return callOp(ctx, s.runner, o, in)
}

// serverFacts describes this server for status and discover. It never
// lists the allowed origins: the agent learns a site is refused when it
// asks for it, not what is allowed.
func (s *Server) serverFacts(c *toolCall) map[string]any {
	origins := "restricted to the owner's allowed origins"
	if len(s.opts.Allow) == 0 {
		origins = "open web (http, https) for launched browsers; nothing for attached ones"
	}
	mode := "daemon"
	if s.opts.Embedded != nil {
		mode = "embedded"
	}
	return map[string]any{
		"session":              s.opts.Session,
		"runner":               mode,
		"scopes":               s.opts.Scopes.List(),
		"caps":                 s.opts.Caps.List(),
		"attach_allowed":       s.opts.AllowAttach && s.opts.Scopes[ScopeControl],
		"evaluate_on_attached": s.opts.AllowEvaluate,
		"uploads":              s.opts.Uploads,
		"secrets":              secretNames(s.opts.Secrets),
		"output_dir":           s.opts.OutputDir,
		"origins":              origins,
		"host_approval":        s.canAskHost(c.req),
	}
}

// ---------------------------------------------------------------- browsers

func (s *Server) launch(ctx context.Context, c *toolCall, in launchIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	return s.doLaunch(ctx, in)
}

func (s *Server) doLaunch(ctx context.Context, in launchIn) (map[string]any, error) {
	bi, err := call(ctx, s.runner, localapi.Launch, localapi.LaunchRequest{Managed: in.Managed, Headless: in.Headless, Allow: s.opts.Allow, Keep: in.Keep})
	if err != nil {
		return nil, err
	}
	page := ""
	if len(bi.Pages) > 0 {
		page = bi.Pages[0].ID
	} else {
		pi, err := call(ctx, s.runner, localapi.Open, localapi.OpenRequest{Browser: bi.ID})
		if err != nil {
			return nil, err
		}
		page = pi.ID
		bi.Pages = append(bi.Pages, pi)
	}
	s.setCurrent(bi.ID, page)
	return map[string]any{"browser": bi, "page": page}, nil
}

func (s *Server) discover(ctx context.Context, c *toolCall, _ emptyIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	d, err := call(ctx, s.runner, localapi.Discover, struct{}{})
	if err != nil {
		return nil, err
	}
	d.Offers = s.visibleOffers(d.Offers) // bridge.go
	launchAllowed := s.opts.Scopes[ScopeLaunch] && d.Launch.Available
	return map[string]any{"discover": d, "launch_allowed": launchAllowed, "server": s.serverFacts(c)}, nil
}

func (s *Server) status(ctx context.Context, c *toolCall, _ emptyIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
	if err != nil {
		return nil, err
	}
	cb, cp := s.currentIDs()
	return map[string]any{
		"runner": st.Runner, "browsers": st.Browsers, "capabilities": st.Capabilities,
		"current": map[string]string{"browser": cb, "page": cp}, "server": s.serverFacts(c),
	}, nil
}

func (s *Server) reconnect(ctx context.Context, c *toolCall, in browserIn) (any, error) {
	ctx, cancel := withTimeout(ctx, attachTimeout)
	defer cancel()
	b, err := s.browser(ctx, in.Browser)
	if err != nil {
		return nil, err
	}
	res, err := call(ctx, s.runner, localapi.Reconnect, localapi.BrowserRequest{Browser: b.ID})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.current.browser == b.ID {
		s.current.page = "" // old page ids are stale now
	}
	s.mu.Unlock()
	return map[string]any{"reconnect": res, "next": "list tabs (browser_tabs) and take a new snapshot: old page ids and refs are refused"}, nil
}

func (s *Server) closeBrowser(ctx context.Context, c *toolCall, in browserIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	b, err := s.browser(ctx, in.Browser)
	if err != nil {
		return nil, err
	}
	need := ScopeLaunch
	if b.Mode == localapi.ModeAttached {
		need = ScopeControl
	}
	if err := s.opts.Scopes.check(c.tool, need); err != nil {
		return nil, err
	}
	res, err := call(ctx, s.runner, localapi.Close, localapi.BrowserRequest{Browser: b.ID})
	if err != nil {
		return nil, err
	}
	s.forgetBrowser(b.ID)
	return res, nil
}

func (s *Server) adopt(ctx context.Context, c *toolCall, in browserIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	if in.Browser == "" {
		return nil, fsm.Refuse(fsm.InvalidArgument, "adopt needs the browser id")
	}
	bi, err := call(ctx, s.runner, localapi.Adopt, localapi.BrowserRequest{Browser: in.Browser})
	if err != nil {
		return nil, err
	}
	page := ""
	if len(bi.Pages) > 0 {
		page = bi.Pages[0].ID
	}
	s.setCurrent(bi.ID, page)
	return map[string]any{"browser": bi, "page": page}, nil
}

// ---------------------------------------------------------------- pages

func (s *Server) navigate(ctx context.Context, c *toolCall, in navigateIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	launched := ""
	if err == errNoBrowser && s.opts.Scopes[ScopeLaunch] {
		out, lerr := s.doLaunch(ctx, launchIn{})
		if lerr != nil {
			return nil, lerr
		}
		page = out["page"].(string)
		launched, err = out["browser"].(localapi.BrowserInfo).ID, nil
	}
	if err != nil {
		return nil, err
	}
	nav, err := callOp(ctx, s.runner, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: page}, URL: in.URL, Keyed: op.Keyed{IdempotencyKey: in.IdempotencyKey}})
	if err != nil {
		return nil, err
	}
	s.setCurrent("", nav.Page)
	out := map[string]any{"page": nav.Page, "url": nav.URL, "title": nav.Title}
	text := ""
	if nav.Status >= 400 {
		out["status"] = nav.Status
		text += fmt.Sprintf("the server answered HTTP %d\n", nav.Status)
	}
	if nav.Loading {
		out["loading"] = true // committed, not loaded by the call's bound
		text += "still loading: the document committed but had not loaded in time\n"
	}
	if launched != "" {
		out["launched_browser"] = launched
		text += "launched browser " + launched + " for it\n"
	}
	r := &reply{text: text, fields: out, page: []pageBlock{{origin: originOf(nav.URL), frame: "main", text: fmt.Sprintf("url: %s\ntitle: %s", nav.URL, nav.Title)}}}
	return s.withSnapshot(ctx, r, nav.Page, in.Snapshot), nil
}

func (s *Server) snapshot(ctx context.Context, c *toolCall, in snapshotIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	req := op.SnapshotIn{OnPage: op.OnPage{Page: page}, Interactive: in.Interactive, Since: in.Since, MaxChars: in.MaxChars, Cursor: in.Cursor}
	scope := in.Scope
	if in.Target != nil && !in.Target.empty() {
		if scope != nil && !scope.empty() {
			return nil, fsm.Refuse(fsm.InvalidArgument, "give target or scope (the same thing), not both")
		}
		scope = in.Target
	}
	if scope != nil && !scope.empty() {
		req.Scope = scope.wire()
	}
	if q := in.Query; q != nil {
		if q.Role == "" && q.Name == "" && q.Text == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, `query names what to find: role, name or text, e.g. {"role":"row","text":"Item 2999"}`)
		}
		req.Query = &op.Query{Role: q.Role, Name: q.Name, Text: q.Text}
	}
	v, err := s.snapshotReply(ctx, req)
	if err != nil {
		return nil, err
	}
	v.fields["page"] = page
	if in.Depth > 0 {
		var cut int
		v.text, cut = limitDepth(v.text, in.Depth)
		v.fields["depthCut"] = cut
	}
	return &reply{fields: v.fields, page: []pageBlock{{origin: v.origin, frame: "main", text: v.text}}}, nil
}

func (s *Server) click(ctx context.Context, c *toolCall, in clickIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return act(ctx, s, op.Click, in.Page, op.ClickIn{Element: op.Element{Target: t}, Button: in.Button, DoubleClick: in.DoubleClick, Modifiers: in.Modifiers}, in.Snapshot)
}

func (s *Server) hover(ctx context.Context, c *toolCall, in hoverIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return act(ctx, s, op.Hover, in.Page, op.HoverIn{Element: op.Element{Target: t}}, in.Snapshot)
}

func (s *Server) typeText(ctx context.Context, c *toolCall, in typeIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	snap, el := in.Snapshot && !in.Submit, op.Element{Target: t}
	var r *reply
	if in.Clear != nil && !*in.Clear {
		r, err = act(ctx, s, op.Type, in.Page, op.TypeIn{Element: el, Text: in.Text, Slowly: in.Slowly}, snap)
	} else {
		r, err = act(ctx, s, op.Fill, in.Page, op.FillIn{Element: el, Text: in.Text, Slowly: in.Slowly}, snap)
	}
	if err != nil || !in.Submit {
		return r, err
	}
	sub, err := act(ctx, s, op.Press, r.fields["page"].(string), op.PressIn{Element: el, Keys: "Enter", Keyed: op.Keyed{IdempotencyKey: subKey(in.IdempotencyKey, "submit")}}, in.Snapshot)
	if err != nil {
		ref, ok := fsm.AsRefusal(err)
		if !ok {
			return nil, err
		}
		return nil, fsm.Refuse(ref.Code, "the text was entered, but pressing Enter failed: "+ref.Detail)
	}
	r.fields["submitted"] = sub.fields["result"]
	if snap, ok := sub.fields["snapshot"]; ok {
		r.fields["snapshot"] = snap
	}
	r.text += "submitted: " + sub.text
	return r, nil
}

func (s *Server) fillForm(ctx context.Context, c *toolCall, in fillFormIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	results := make([]localapi.ActResult, 0, len(in.Fields))
	var text strings.Builder
	for i, f := range in.Fields {
		fail := func(err error) (any, error) {
			if ref, ok := fsm.AsRefusal(err); ok {
				return nil, fsm.Refusef(ref.Code, "field %d (%s): %s; fields before it were filled", i, f.Type, ref.Detail)
			}
			return nil, fmt.Errorf("field %d: %w", i, err)
		}
		t, err := f.target(true)
		if err != nil {
			return fail(err)
		}
		el := op.Element{Target: t}
		var res op.ActResult
		var m *op.Meta // the action the field took
		switch f.Type {
		case "textbox", "slider":
			m = &op.Fill.Meta
			res, err = actOn(ctx, s, op.Fill, page, op.FillIn{Element: el, Text: f.Value})
		case "checkbox", "radio":
			switch f.Value {
			case "true":
				m = &op.Check.Meta
				res, err = actOn(ctx, s, op.Check, page, op.CheckIn{Element: el})
			case "false":
				m = &op.Uncheck.Meta
				res, err = actOn(ctx, s, op.Uncheck, page, op.UncheckIn{Element: el})
			default:
				return fail(fsm.Refuse(fsm.InvalidArgument, "a checkbox or radio value is true or false"))
			}
		case "combobox":
			m = &op.Select.Meta
			res, err = actOn(ctx, s, op.Select, page, op.SelectIn{Element: el, Values: []string{f.Value}})
		default:
			return fail(fsm.Refuse(fsm.InvalidArgument, "type is textbox, checkbox, radio, combobox or slider"))
		}
		if err != nil {
			return fail(err)
		}
		results = append(results, res)
		fmt.Fprintf(&text, "field %d: %s", i, actionText(m, res))
	}
	return s.withSnapshot(ctx, &reply{text: text.String(), fields: map[string]any{"page": page, "results": results}}, page, in.Snapshot), nil
}

func (s *Server) pressKey(ctx context.Context, c *toolCall, in pressKeyIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	return act(ctx, s, op.Press, in.Page, op.PressIn{Element: op.Element{Target: t}, Keys: in.Key}, in.Snapshot)
}

func (s *Server) selectOption(ctx context.Context, c *toolCall, in selectIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return act(ctx, s, op.Select, in.Page, op.SelectIn{Element: op.Element{Target: t}, Values: in.Values}, in.Snapshot)
}

func (s *Server) waitFor(ctx context.Context, c *toolCall, in waitIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	other := in.Text != "" || in.TextGone != "" || t != nil || in.URL != "" || in.URLIncludes != "" || in.Condition != ""
	// As Playwright: time waits first (at most maxTimeWait seconds), then
	// textGone, then text; alone, time is the whole wait.
	var waited time.Duration
	if in.Time > 0 {
		waited = time.Duration(min(in.Time, maxTimeWait) * float64(time.Second))
		tm := time.NewTimer(waited)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			// The refusal set's word, not a bare context error: nothing was
			// left half-done, so it is timeout whether the call was
			// cancelled or its deadline passed.
			return nil, fsm.Refusef(fsm.Timeout, "the wait of %gs ended before its time passed: the call was cancelled or its deadline passed", waited.Seconds()).WithCause(ctx.Err())
		}
		if !other {
			return &reply{text: fmt.Sprintf("waited %gs\n", waited.Seconds()), fields: map[string]any{"found": true, "condition": "time", "elapsedMs": waited.Milliseconds()}}, nil
		}
	}
	secs := in.Timeout
	if secs <= 0 {
		secs = defaultWaitSeconds
	}
	secs = min(secs, maxWaitSeconds)
	bound := time.Duration(secs * float64(time.Second))
	ctx, cancel := withTimeout(ctx, 2*bound+30*time.Second)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	type step struct{ cond, text string }
	var steps []step
	if in.TextGone != "" {
		steps = append(steps, step{"text_gone", in.TextGone})
	}
	if in.Text != "" {
		steps = append(steps, step{"text", in.Text})
	}
	if len(steps) == 0 || in.Condition != "" || t != nil || in.URL != "" || in.URLIncludes != "" {
		cond := in.Condition
		if cond == "" {
			switch {
			case t != nil:
				cond = "visible"
			case in.URL != "" || in.URLIncludes != "":
				cond = "url"
			case len(steps) == 0:
				cond = "load"
			}
		}
		if cond != "" {
			steps = append(steps, step{cond: cond})
		}
	}
	var text strings.Builder
	var results []localapi.WaitResult
	if waited > 0 {
		fmt.Fprintf(&text, "waited %gs\n", waited.Seconds())
	}
	for _, st := range steps {
		res, err := callOp(ctx, s.runner, op.Wait, op.WaitIn{OnPage: op.OnPage{Page: page}, Condition: st.cond, Text: st.text, Target: t, URL: in.URL, URLIncludes: in.URLIncludes, TimeoutMS: int(bound.Milliseconds())})
		if err != nil {
			return nil, err
		}
		what := waitWhat(st.cond, st.text)
		if !res.Found {
			return nil, fsm.Refusef(fsm.Timeout, "waited %gs: %s did not happen", secs, what)
		}
		results = append(results, res)
		fmt.Fprintf(&text, "%s after %d ms\n", what, res.ElapsedMS)
	}
	fields := map[string]any{"page": page, "result": results[len(results)-1]}
	if len(results) > 1 {
		fields["results"] = results
	}
	return &reply{text: text.String(), fields: fields}, nil
}

// waitWhat says what a wait waits for, in the words of its arguments.
func waitWhat(cond, text string) string {
	switch cond {
	case "text":
		return fmt.Sprintf("text %q appeared", capText(text, 80))
	case "text_gone":
		return fmt.Sprintf("text %q went", capText(text, 80))
	case "visible", "hidden", "enabled":
		return "the element became " + cond
	case "url":
		return "the url matched"
	}
	return "the page loaded"
}

func (s *Server) screenshot(ctx context.Context, c *toolCall, in screenshotIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	if in.FullPage && t != nil {
		return nil, fsm.Refuse(fsm.InvalidArgument, "fullPage captures the page; an element's capture is its own box: give one of them")
	}
	if in.Filename != "" {
		if err := outputName(in.Filename); err != nil {
			return nil, err
		}
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	shot, err := callOp(ctx, s.runner, op.Screenshot, op.ScreenshotIn{OnPage: op.OnPage{Page: page}, FullPage: in.FullPage, Element: op.Element{Target: t}})
	if err != nil {
		return nil, err
	}
	data, mime := shot.PNG, "image/png"
	if in.Type == "jpeg" {
		if data, err = pngToJPEG(shot.PNG); err != nil {
			return nil, err
		}
		mime = "image/jpeg"
	}
	if len(data) > MaxScreenshotBytes {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the screenshot is %d bytes; screenshots are bounded at %d: capture the viewport or one element", len(data), MaxScreenshotBytes)
	}
	meta := map[string]any{"page": page, "width": shot.Width, "height": shot.Height, "bytes": len(data), "mimeType": mime}
	if in.Filename != "" {
		path, err := s.saveOutput(in.Filename, data)
		if err != nil {
			return nil, err
		}
		meta["savedTo"] = path
	}
	b, _ := json.Marshal(meta)
	return &sdk.CallToolResult{
		StructuredContent: json.RawMessage(b),
		Content:           []sdk.Content{&sdk.ImageContent{Data: data, MIMEType: mime}, &sdk.TextContent{Text: string(b)}},
	}, nil
}

func (s *Server) evaluate(ctx context.Context, c *toolCall, in evaluateIn) (any, error) {
	expr := in.Expression
	if (in.Expression == "") == (in.Function == "") {
		return nil, fsm.Refuse(fsm.InvalidArgument, "give exactly one of expression and function")
	}
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	switch {
	case t != nil && in.Function == "":
		return nil, fsm.Refuse(fsm.InvalidArgument, "on an element, give function, e.g. (element) => element.textContent")
	case t != nil:
		expr = in.Function // called with the element
	case in.Function != "":
		expr = "(" + in.Function + ")()"
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := callOp(ctx, s.runner, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: page}, Expr: expr, Target: t})
	if err != nil {
		return nil, err
	}
	v, err := json.Marshal(res.Value)
	if err != nil {
		return nil, fmt.Errorf("mcp: encode the value: %w", err)
	}
	text := ""
	if res.Truncated {
		text = "the value was truncated at the bound\n"
	}
	block := pageBlock{origin: s.pageOrigin(ctx, page), frame: "main", text: string(v)}
	return &reply{text: text, page: []pageBlock{block}, fields: map[string]any{"page": page, "value": res.Value, "truncated": res.Truncated}}, nil
}

func (s *Server) upload(ctx context.Context, c *toolCall, in uploadIn) (any, error) {
	files := in.Paths
	switch {
	case len(in.Paths) > 0 && len(in.Files) > 0:
		return nil, fsm.Refuse(fsm.InvalidArgument, "give paths or files (the same thing), not both")
	case len(in.Files) > 0:
		files = in.Files
	case len(files) == 0:
		return nil, fsm.Refuse(fsm.InvalidArgument, "paths names the files to upload, in the owner's upload directory (webcodex has no file chooser to cancel)")
	}
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	if t == nil {
		// As Playwright's chooser: the page's one file input; several are
		// refused as ambiguous, with their count.
		t = &localapi.Target{CSS: "input[type=file]"}
	}
	return act(ctx, s, op.Upload, in.Page, op.UploadIn{Element: op.Element{Target: t}, Files: files}, false)
}

func (s *Server) handleDialog(ctx context.Context, c *toolCall, in dialogIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := callOp(ctx, s.runner, op.HandleDialog, op.DialogIn{OnPage: op.OnPage{Page: page}, Accept: in.Accept, Text: in.PromptText})
	if err != nil {
		return nil, err
	}
	r := &reply{text: dialogText(res), fields: map[string]any{"page": page, "result": res}}
	if res.Dialog != nil {
		r.page = []pageBlock{{origin: s.pageOrigin(ctx, page), frame: "main", text: res.Dialog.Message}}
	}
	return r, nil
}

func (s *Server) tabs(ctx context.Context, c *toolCall, in tabsIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	switch in.Action {
	case "list":
		st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
		if err != nil {
			return nil, err
		}
		_, cp := s.currentIDs()
		type tab struct {
			localapi.PageInfo
			Current bool `json:"current,omitempty"`
		}
		out := []tab{}
		for _, b := range st.Browsers {
			if in.Browser != "" && b.ID != in.Browser {
				continue
			}
			for _, p := range b.Pages {
				if len(out) < maxTabs {
					out = append(out, tab{PageInfo: p, Current: p.ID == cp})
				}
			}
		}
		var text strings.Builder
		for _, t := range out {
			mark := ""
			if t.Current {
				mark = " (current)"
			}
			fmt.Fprintf(&text, "%s%s %q %s\n", t.ID, mark, capText(t.Title, 200), t.URL)
		}
		if len(out) == 0 {
			text.WriteString("no tabs\n")
		}
		return &reply{text: text.String(), fields: map[string]any{"tabs": out}}, nil
	case "new":
		if err := s.opts.Scopes.check(c.tool+" new", ScopeControl); err != nil {
			return nil, err
		}
		b, err := s.browser(ctx, in.Browser)
		if err != nil {
			return nil, err
		}
		pi, err := call(ctx, s.runner, localapi.Open, localapi.OpenRequest{Browser: b.ID, URL: in.URL})
		if err != nil {
			return nil, err
		}
		s.setCurrent(b.ID, pi.ID)
		return map[string]any{"tab": pi, "current": true}, nil
	case "close":
		if err := s.opts.Scopes.check(c.tool+" close", ScopeControl); err != nil {
			return nil, err
		}
		id, err := s.tabID(ctx, in, true)
		if err != nil {
			return nil, err
		}
		res, err := call(ctx, s.runner, localapi.ClosePage, localapi.ClosePageRequest{Page: id})
		if err != nil {
			return nil, err
		}
		s.forgetPage(id)
		return res, nil
	case "select":
		id, err := s.tabID(ctx, in, false)
		if err != nil {
			return nil, err
		}
		in.Page = id
		st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
		if err != nil {
			return nil, err
		}
		for _, b := range st.Browsers {
			for _, p := range b.Pages {
				if p.ID == in.Page {
					s.setCurrent(b.ID, p.ID)
					return map[string]any{"tab": p, "current": true}, nil
				}
			}
		}
		return nil, fsm.Refuse(fsm.NotFound, "no such page")
	}
	return nil, fsm.Refusef(fsm.InvalidArgument, "unknown action %q", in.Action)
}

// tabID is the tab a close or select names: by page id, by index in the
// list browser_tabs shows (from 0), or for close the current one.
func (s *Server) tabID(ctx context.Context, in tabsIn, currentByDefault bool) (string, error) {
	switch {
	case in.Page != "" && in.Index != nil:
		return "", fsm.Refuse(fsm.InvalidArgument, "give index or page, not both")
	case in.Page != "":
		return in.Page, nil
	case in.Index == nil && currentByDefault:
		return s.page(ctx, "")
	case in.Index == nil:
		return "", fsm.Refusef(fsm.InvalidArgument, "%s needs index (from the tab list, from 0) or page (its id)", in.Action)
	}
	st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, b := range st.Browsers {
		if in.Browser != "" && b.ID != in.Browser {
			continue
		}
		for _, p := range b.Pages {
			ids = append(ids, p.ID)
		}
	}
	if *in.Index < 0 || *in.Index >= len(ids) {
		return "", fsm.Refusef(fsm.InvalidArgument, "index %d is out of range: there are %d tabs (0 to %d)", *in.Index, len(ids), len(ids)-1)
	}
	return ids[*in.Index], nil
}

func (s *Server) console(ctx context.Context, c *toolCall, in consoleIn) (any, error) {
	level := in.Level
	if level == "" {
		level = "info"
	}
	keep := func(e op.DiagEntry) bool { return levelRank(e) <= levelRanks[level] }
	return s.diag(ctx, in.diagIn, keep, func(ctx context.Context, page string) (op.DiagResult, error) {
		return callOp(ctx, s.runner, op.Console, op.ConsoleIn{OnPage: op.OnPage{Page: page}, Since: in.Since, ErrorsOnly: in.ErrorsOnly, Clear: in.Clear, SinceNavigation: !in.All})
	})
}

func (s *Server) network(ctx context.Context, c *toolCall, in networkIn) (any, error) {
	var filter *regexp.Regexp
	if in.Filter != "" {
		var err error
		if len(in.Filter) > maxFilterChars {
			return nil, fsm.Refusef(fsm.InvalidArgument, "filter is a URL regexp of at most %d characters", maxFilterChars)
		}
		if filter, err = regexp.Compile(in.Filter); err != nil {
			return nil, fsm.Refusef(fsm.InvalidArgument, "filter is a URL regexp (RE2 syntax): %s", capText(err.Error(), 120))
		}
	}
	keep := func(e op.DiagEntry) bool {
		if !in.Static && staticTypes[e.Type] && e.Failed == "" && e.Status < 400 {
			return false
		}
		return filter == nil || filter.MatchString(e.URL)
	}
	return s.diag(ctx, in.diagIn, keep, func(ctx context.Context, page string) (op.DiagResult, error) {
		return callOp(ctx, s.runner, op.Network, op.NetworkIn{OnPage: op.OnPage{Page: page}, Since: in.Since, ErrorsOnly: in.ErrorsOnly, Clear: in.Clear})
	})
}

// maxFilterChars bounds a network filter.
const maxFilterChars = 500

// staticTypes are the resource types Playwright MCP calls static: left out
// of browser_network_requests when they loaded, unless static is true.
var staticTypes = map[string]bool{"Image": true, "Font": true, "Stylesheet": true, "Script": true, "Media": true, "Manifest": true}

// levelRanks orders console levels, most severe first: a level includes
// the ones before it.
var levelRanks = map[string]int{"error": 0, "warning": 1, "info": 2, "debug": 3}

func levelRank(e op.DiagEntry) int {
	switch {
	case e.Kind == "exception" || e.Level == "error":
		return 0
	case e.Level == "warning":
		return 1
	case e.Level == "debug" || e.Level == "verbose":
		return 3
	}
	return 2 // log, info
}

func (s *Server) diag(ctx context.Context, in diagIn, keep func(op.DiagEntry) bool, read func(ctx context.Context, page string) (op.DiagResult, error)) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := read(ctx, page)
	if err != nil {
		return nil, err
	}
	kept := res.Entries[:0]
	for _, e := range res.Entries {
		if keep(e) {
			kept = append(kept, e)
		}
	}
	res.Entries = kept
	text := fmt.Sprintf("%d entries; next cursor %d\n", len(kept), res.Next)
	if res.More {
		text += "more remain: read again with since\n"
	}
	if res.Discarded != "" {
		text += "some entries were discarded (" + string(res.Discarded) + ")\n"
	}
	return &reply{text: text, fields: map[string]any{"page": page, "log": res}, page: diagBlocks(kept, s.pageOrigin(ctx, page))}, nil
}

func (s *Server) cdp(ctx context.Context, c *toolCall, in cdpIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	var params json.RawMessage
	if in.Params != nil {
		if params, err = json.Marshal(in.Params); err != nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "params must be a JSON object")
		}
	}
	return call(ctx, s.runner, localapi.CDP, localapi.CDPRequest{Page: page, Method: in.Method, Params: params, IdempotencyKey: in.IdempotencyKey})
}

// subKey derives the key of a call's second effect (type's Enter) from the
// caller's, so a repeat repeats neither; "" stays "" (minted per effect).
func subKey(key, part string) string {
	if key == "" {
		return ""
	}
	return key + "#" + part
}

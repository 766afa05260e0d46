package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// Tool bounds.
const (
	defaultWaitMS = 10000
	maxWaitMS     = 120000
	maxTimeWait   = 30 // seconds, condition time
	maxFormFields = 50
	maxTabs       = 100
)

// toolOrder is the tool list in the order it is registered.
var toolOrder = []string{
	"browser_launch", "browser_attach", "browser_discover", "browser_status", "browser_reconnect", "browser_close", "browser_adopt",
	"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_fill_form", "browser_press_key",
	"browser_select_option", "browser_hover", "browser_wait_for", "browser_take_screenshot", "browser_evaluate",
	"browser_file_upload", "browser_handle_dialog", "browser_tabs", "browser_console_messages",
	"browser_network_requests", "browser_cdp",
}

const elementHelp = " Name the element with ref and snapshotId from browser_snapshot, or with target {role,name | label | text | placeholder | testId | css} (index only when several visible matches are intended); a missing, hidden, disabled or ambiguous element is refused, never guessed."

func (s *Server) addTools() {
	read := []Scope{ScopeRead}
	launch := []Scope{ScopeLaunch}
	control := []Scope{ScopeControl}

	addTool(s, toolSpec{name: "browser_launch", title: "Launch a browser", anyOf: launch, openWorld: true,
		desc: "Launch a Chromium that webcodex owns: by default headless on a fresh temporary profile (no cookies, no logins; removed on close), or a named private managed profile kept between launches. It becomes the current browser and its first tab the current page. Sites it may reach are the owner's allowed origins (the open web when the owner gave none)."},
		nil, s.launch)
	addTool(s, toolSpec{name: "browser_attach", title: "Attach to the person's browser", anyOf: control, openWorld: true,
		desc: "Attach to the person's own running Chrome, Chromium or Edge (browser_discover lists candidates), or, with offer, exactly the one tab the person shared from the webcodex extension (browser_discover lists pending offers; no approval step: the Share was the consent). Needs the browser:control scope and the owner's --allow-attach. The person approves first: this server asks them through your host when it can; otherwise the refusal browser_consent_required names the command they run. Chrome then shows its own \"Allow remote debugging?\" prompt. Only tabs on the owner's allowed origins are visible; detaching never closes anything."},
		nil, s.attach)
	addTool(s, toolSpec{name: "browser_discover", title: "What can be launched or attached", anyOf: read, readOnly: true,
		desc: "Say what this machine offers: whether a Chromium can be launched (and shown), the managed profiles, each installed browser profile's attach state (not_running, debugging_off or ready, with the next step), whether this server may attach at all, and the tabs the person shared from the webcodex extension (offers; origin and title shown only where this server's allowlist allows them)."},
		nil, s.discover)
	addTool(s, toolSpec{name: "browser_status", title: "Status", anyOf: read, readOnly: true,
		desc: "The Runner, every browser (id, mode, state, connection generation, visible pages), the current browser and page, this server's scopes and settings, and the capability bits browser_managed_profile, browser_extension_bridge and browser_surface_handoff (true only when really supported here)."},
		nil, s.status)
	addTool(s, toolSpec{name: "browser_reconnect", title: "Reconnect an attached browser", anyOf: control, openWorld: true,
		desc: "Reconnect an attached browser whose connection dropped (at most 3 attempts under one deadline). Page ids and refs from before are refused afterwards (browser_binding_stale): list tabs and snapshot again."},
		nil, s.reconnect)
	addTool(s, toolSpec{name: "browser_close", title: "Close or detach a browser", anyOf: []Scope{ScopeLaunch, ScopeControl}, destructive: true,
		desc: "Close a browser webcodex launched (needs browser:launch), or detach from an attached one (needs browser:control; nothing of the person's is closed)."},
		nil, s.closeBrowser)
	addTool(s, toolSpec{name: "browser_adopt", title: "Adopt a kept browser", anyOf: []Scope{ScopeLaunch, ScopeControl},
		desc: "With a shared Runner (webcodex mcp --runner): make a browser that an ended session kept (browser_launch keep) this session's, by its id. A session sees and acts only on browsers it launched, attached or adopted; a browser another session owns, or one created under other limits, is refused like an unknown id."},
		nil, s.adopt)

	addTool(s, toolSpec{name: "browser_navigate", title: "Navigate", anyOf: control, openWorld: true,
		desc: "Load a URL in a page (default: the current page; with no browser yet, one is launched when the server grants browser:launch). The destination must be on the owner's allowed origins; the URL and title are read back live, and a redirect that leaves the allowed origins is reported and leaves the page unreadable."},
		nil, s.navigate)
	addTool(s, toolSpec{name: "browser_snapshot", title: "Page snapshot", anyOf: read, readOnly: true,
		desc: "Return a bounded outline of the page: one line per node (role, name, states) with refs like e12 for actionable elements, and a snapshotId to pass with those refs. Frames of origins the owner did not allow are not read. Use interactive for a smaller list, since for only what changed, and cursor to read the next chunk of a truncated outline."},
		func(sc *jsonschema.Schema) { bounds(sc, "maxChars", 0, 200000) }, s.snapshot)
	addTool(s, toolSpec{name: "browser_click", title: "Click", anyOf: control, openWorld: true,
		desc: "Click an element with real mouse input (the click point is checked to be the element)." + elementHelp},
		nil, s.click)
	addTool(s, toolSpec{name: "browser_type", title: "Type text", anyOf: control, openWorld: true,
		desc: "Type text into an editable element as real input (frameworks such as React see it), replacing its value unless clear is false; submit presses Enter. The result counts characters delivered and never echoes the text." + elementHelp},
		nil, s.typeText)
	addTool(s, toolSpec{name: "browser_fill_form", title: "Fill a form", anyOf: control, openWorld: true,
		desc: "Fill several fields in order: textboxes get their text, checkboxes and radios true or false, comboboxes (select) an option. Stops at the first field that fails and says which."},
		func(sc *jsonschema.Schema) {
			maxItems(sc, "fields", 1, maxFormFields)
			enum(sc.Properties["fields"].Items, "type", "textbox", "checkbox", "radio", "combobox")
		}, s.fillForm)
	addTool(s, toolSpec{name: "browser_press_key", title: "Press a key", anyOf: control, openWorld: true,
		desc: "Press a key or chord (Enter, Tab, Escape, ArrowDown, Control+a, …) as real key events, in the focused element or in the named element after focusing it."},
		nil, s.pressKey)
	addTool(s, toolSpec{name: "browser_select_option", title: "Select options", anyOf: control, openWorld: true,
		desc: "Select options of a <select> by value or visible label; the selected values are read back." + elementHelp},
		func(sc *jsonschema.Schema) { maxItems(sc, "values", 1, 100) }, s.selectOption)
	addTool(s, toolSpec{name: "browser_hover", title: "Hover", anyOf: control, openWorld: true,
		desc: "Move the mouse over an element (menus and tooltips open as for a person)." + elementHelp},
		nil, s.hover)
	addTool(s, toolSpec{name: "browser_wait_for", title: "Wait for a condition", anyOf: read, readOnly: true,
		desc: "Wait, driven by page events, until text appears (text) or disappears (textGone), an element is visible, hidden or enabled (element arguments), the URL matches, the page loads, or a number of seconds passes (time). A timeout is a result, found: false, not an error."},
		func(sc *jsonschema.Schema) {
			enum(sc, "condition", "load", "url", "text", "text_gone", "visible", "hidden", "enabled", "time")
			bounds(sc, "timeoutMs", 0, maxWaitMS)
			bounds(sc, "time", 0, maxTimeWait)
		}, s.waitFor)
	addTool(s, toolSpec{name: "browser_take_screenshot", title: "Screenshot", anyOf: read, readOnly: true,
		desc: "Capture the viewport, the full page (fullPage) or one element as a PNG image."},
		nil, s.screenshot)
	addTool(s, toolSpec{name: "browser_evaluate", title: "Evaluate JavaScript", anyOf: control, openWorld: true,
		desc: "Evaluate JavaScript in the page (an expression, or a function to call) and return its value, bounded (depth, items, 200,000 characters). On for browsers webcodex launched; off for attached browsers unless the owner passed --allow-evaluate."},
		nil, s.evaluate)
	addTool(s, toolSpec{name: "browser_file_upload", title: "Upload files", anyOf: control, openWorld: true,
		desc: "Set files on a file input. Only files inside the owner's upload directory (--upload-dir) can be sent; without one every upload is refused. The result names files by base name only." + elementHelp},
		func(sc *jsonschema.Schema) { maxItems(sc, "files", 1, 20) }, s.upload)
	addTool(s, toolSpec{name: "browser_handle_dialog", title: "Handle a dialog", anyOf: control, openWorld: true,
		desc: "Accept or dismiss the JavaScript dialog (alert, confirm, prompt, beforeunload) open on the page; without accept it only reports the dialog."},
		nil, s.handleDialog)
	addTool(s, toolSpec{name: "browser_tabs", title: "Tabs", anyOf: read,
		desc: "list the visible tabs (pages) of the browsers, new opens a tab (optionally loading url), close closes a tab webcodex opened, select makes a tab the current page. new and close need browser:control. Tabs on origins the owner did not allow are never listed, and their ids are refused like unknown ones."},
		func(sc *jsonschema.Schema) { enum(sc, "action", "list", "new", "close", "select") }, s.tabs)
	addTool(s, toolSpec{name: "browser_console_messages", title: "Console messages", anyOf: read, readOnly: true,
		desc: "Read the page's console messages and uncaught exceptions, bounded; pass the returned next as since to read only newer ones. discarded says the bounded log dropped entries."},
		nil, s.console)
	addTool(s, toolSpec{name: "browser_network_requests", title: "Network requests", anyOf: read, readOnly: true,
		desc: "Read the page's network requests (method, URL, status, failure), bounded; pass the returned next as since to read only newer ones. inFlight counts requests still open."},
		nil, s.network)
	addTool(s, toolSpec{name: "browser_cdp", title: "Raw page CDP", anyOf: control, openWorld: true,
		desc: "Send one Chrome DevTools Protocol command to the page's own session. Page-scoped domains pass; browser-wide domains (Target, Browser, Storage, SystemInfo, …), domains not on the reviewed list and commands that step around a boundary (the cookie jar, Page.navigate, DOM.setFileInputFiles, download behaviour, Runtime.addBinding, cross-origin storage) are refused with cdp_policy_denied. On for browsers webcodex launched; off for attached ones unless the owner passed --allow-evaluate. Results are bounded at 200,000 characters."},
		nil, s.cdp)
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

// withSnapshot adds a fresh snapshot of page to out when asked.
func (s *Server) withSnapshot(ctx context.Context, out map[string]any, page string, want bool) map[string]any {
	if !want {
		return out
	}
	raw, err := call(ctx, s.runner, localapi.Snapshot, localapi.SnapshotRequest{Page: page})
	if err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			out["snapshot_refusal"] = ref
		} else {
			out["snapshot_error"] = capText(err.Error(), maxErrorChars)
		}
		return out
	}
	out["snapshot"] = raw
	return out
}

// act runs one page action and shapes its result.
func (s *Server) act(ctx context.Context, pageArg string, req localapi.ActRequest, snap bool) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, pageArg)
	if err != nil {
		return nil, err
	}
	req.Page = page
	raw, err := call(ctx, s.runner, localapi.Act, req)
	if err != nil {
		return nil, err
	}
	return s.withSnapshot(ctx, map[string]any{"page": page, "result": raw}, page, snap), nil
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
		"attach_allowed":       s.opts.AllowAttach && s.opts.Scopes[ScopeControl],
		"evaluate_on_attached": s.opts.AllowEvaluate,
		"uploads":              s.opts.Uploads,
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
	nav, err := call(ctx, s.runner, localapi.Goto, localapi.GotoRequest{Page: page, URL: in.URL})
	if err != nil {
		return nil, err
	}
	s.setCurrent("", nav.Page)
	out := map[string]any{"page": nav.Page, "url": nav.URL, "title": nav.Title}
	if nav.Loading {
		out["loading"] = true // committed, not loaded by the call's bound
	}
	if launched != "" {
		out["launched_browser"] = launched
	}
	return s.withSnapshot(ctx, out, page, in.Snapshot), nil
}

func (s *Server) snapshot(ctx context.Context, c *toolCall, in snapshotIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	req := localapi.SnapshotRequest{Page: page, Interactive: in.Interactive, Since: in.Since, MaxChars: in.MaxChars, Cursor: in.Cursor}
	if in.Scope != nil && !in.Scope.empty() {
		req.Scope = in.Scope.wire()
	}
	raw, err := call(ctx, s.runner, localapi.Snapshot, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"page": page, "snapshot": raw}, nil
}

func (s *Server) click(ctx context.Context, c *toolCall, in clickIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "click", Target: t}, in.Snapshot)
}

func (s *Server) hover(ctx context.Context, c *toolCall, in clickIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "hover", Target: t}, in.Snapshot)
}

func (s *Server) typeText(ctx context.Context, c *toolCall, in typeIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	action := "fill"
	if in.Clear != nil && !*in.Clear {
		action = "type"
	}
	out, err := s.act(ctx, in.Page, localapi.ActRequest{Action: action, Target: t, Text: in.Text}, in.Snapshot && !in.Submit)
	if err != nil || !in.Submit {
		return out, err
	}
	m := out.(map[string]any)
	sub, err := s.act(ctx, m["page"].(string), localapi.ActRequest{Action: "press", Target: t, Keys: "Enter"}, in.Snapshot)
	if err != nil {
		ref, ok := fsm.AsRefusal(err)
		if !ok {
			return nil, err
		}
		return nil, fsm.Refuse(ref.Code, "the text was entered, but pressing Enter failed: "+ref.Detail)
	}
	sm := sub.(map[string]any)
	m["submitted"] = sm["result"]
	if snap, ok := sm["snapshot"]; ok {
		m["snapshot"] = snap
	}
	return m, nil
}

func (s *Server) fillForm(ctx context.Context, c *toolCall, in fillFormIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	results := make([]json.RawMessage, 0, len(in.Fields))
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
		req := localapi.ActRequest{Page: page, Target: t}
		switch f.Type {
		case "textbox":
			req.Action, req.Text = "fill", f.Value
		case "checkbox", "radio":
			switch f.Value {
			case "true":
				req.Action = "check"
			case "false":
				req.Action = "uncheck"
			default:
				return fail(fsm.Refuse(fsm.InvalidArgument, "a checkbox or radio value is true or false"))
			}
		case "combobox":
			req.Action, req.Values = "select", []string{f.Value}
		default:
			return fail(fsm.Refuse(fsm.InvalidArgument, "type is textbox, checkbox, radio or combobox"))
		}
		raw, err := call(ctx, s.runner, localapi.Act, req)
		if err != nil {
			return fail(err)
		}
		results = append(results, raw)
	}
	return s.withSnapshot(ctx, map[string]any{"page": page, "results": results}, page, in.Snapshot), nil
}

func (s *Server) pressKey(ctx context.Context, c *toolCall, in pressKeyIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "press", Target: t, Keys: in.Key}, in.Snapshot)
}

func (s *Server) selectOption(ctx context.Context, c *toolCall, in selectIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "select", Target: t, Values: in.Values}, in.Snapshot)
}

func (s *Server) waitFor(ctx context.Context, c *toolCall, in waitIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	cond := in.Condition
	if cond == "" {
		switch {
		case in.Time > 0:
			cond = "time"
		case in.TextGone != "":
			cond = "text_gone"
		case in.Text != "":
			cond = "text"
		case t != nil:
			cond = "visible"
		case in.URL != "":
			cond = "url"
		default:
			cond = "load"
		}
	}
	if cond == "time" {
		if in.Time <= 0 {
			return nil, fsm.Refuse(fsm.InvalidArgument, "condition time needs time, in seconds (at most 30)")
		}
		d := time.Duration(min(in.Time, maxTimeWait)) * time.Second
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
			return map[string]any{"found": true, "condition": "time", "elapsedMs": d.Milliseconds()}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	text := in.Text
	if cond == "text_gone" && in.TextGone != "" {
		text = in.TextGone
	}
	ms := in.TimeoutMS
	if ms <= 0 {
		ms = defaultWaitMS
	}
	ms = min(ms, maxWaitMS)
	ctx, cancel := withTimeout(ctx, time.Duration(ms)*time.Millisecond+30*time.Second)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	raw, err := call(ctx, s.runner, localapi.Wait, localapi.WaitRequest{Page: page, Condition: cond, Text: text, Target: t, URL: in.URL, URLIncludes: in.URLIncludes, TimeoutMS: ms})
	if err != nil {
		return nil, err
	}
	return map[string]any{"page": page, "result": raw}, nil
}

func (s *Server) screenshot(ctx context.Context, c *toolCall, in screenshotIn) (any, error) {
	t, err := in.target(false)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	shot, err := call(ctx, s.runner, localapi.Screenshot, localapi.ScreenshotRequest{Page: page, FullPage: in.FullPage, Target: t})
	if err != nil {
		return nil, err
	}
	if len(shot.PNG) > MaxScreenshotBytes {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the screenshot is %d bytes; screenshots are bounded at %d: capture the viewport or one element", len(shot.PNG), MaxScreenshotBytes)
	}
	meta, _ := json.Marshal(map[string]any{"page": page, "width": shot.Width, "height": shot.Height, "bytes": len(shot.PNG), "mimeType": "image/png"})
	return &sdk.CallToolResult{
		StructuredContent: json.RawMessage(meta),
		Content:           []sdk.Content{&sdk.ImageContent{Data: shot.PNG, MIMEType: "image/png"}, &sdk.TextContent{Text: string(meta)}},
	}, nil
}

func (s *Server) evaluate(ctx context.Context, c *toolCall, in evaluateIn) (any, error) {
	expr := in.Expression
	switch {
	case (in.Expression == "") == (in.Function == ""):
		return nil, fsm.Refuse(fsm.InvalidArgument, "give exactly one of expression and function")
	case in.Function != "":
		expr = "(" + in.Function + ")()"
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := call(ctx, s.runner, localapi.Eval, localapi.EvalRequest{Page: page, Expr: expr})
	if err != nil {
		return nil, err
	}
	return map[string]any{"page": page, "value": res.Value, "truncated": res.Truncated}, nil
}

func (s *Server) upload(ctx context.Context, c *toolCall, in uploadIn) (any, error) {
	t, err := in.target(true)
	if err != nil {
		return nil, err
	}
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "upload", Target: t, Files: in.Files}, false)
}

func (s *Server) handleDialog(ctx context.Context, c *toolCall, in dialogIn) (any, error) {
	return s.act(ctx, in.Page, localapi.ActRequest{Action: "dialog", Accept: in.Accept, Text: in.PromptText}, false)
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
		return map[string]any{"tabs": out}, nil
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
		if in.Page == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "close needs the page id")
		}
		res, err := call(ctx, s.runner, localapi.ClosePage, localapi.ClosePageRequest{Page: in.Page})
		if err != nil {
			return nil, err
		}
		s.forgetPage(in.Page)
		return res, nil
	case "select":
		if in.Page == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "select needs the page id")
		}
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

func (s *Server) console(ctx context.Context, c *toolCall, in diagIn) (any, error) {
	return s.diag(ctx, in, localapi.Console)
}

func (s *Server) network(ctx context.Context, c *toolCall, in diagIn) (any, error) {
	return s.diag(ctx, in, localapi.Network)
}

func (s *Server) diag(ctx context.Context, in diagIn, rt localapi.Route[localapi.DiagRequest, json.RawMessage]) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	raw, err := call(ctx, s.runner, rt, localapi.DiagRequest{Page: page, Since: in.Since, ErrorsOnly: in.ErrorsOnly, Clear: in.Clear})
	if err != nil {
		return nil, err
	}
	return map[string]any{"page": page, "log": raw}, nil
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
	raw, err := call(ctx, s.runner, localapi.CDP, localapi.CDPRequest{Page: page, Method: in.Method, Params: params})
	if err != nil {
		return nil, err
	}
	return map[string]any{"page": page, "method": in.Method, "result": raw}, nil
}

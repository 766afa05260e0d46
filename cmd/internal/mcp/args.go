package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// The tools' arguments. Field tags carry the descriptions agents read; the
// JSON schemas are derived from these types (jsonschema.For) and tightened
// with enums and bounds in tools.go.

// TargetArg is a semantic element target: give a ref with its snapshotId,
// or one way of finding the element on the live page.
type TargetArg struct {
	Ref         string `json:"ref,omitempty" jsonschema:"element ref from browser_snapshot, e.g. e12 (or f1e3 inside a frame); needs snapshotId"`
	SnapshotID  string `json:"snapshotId,omitempty" jsonschema:"the snapshotId of the browser_snapshot the ref came from"`
	Role        string `json:"role,omitempty" jsonschema:"ARIA role, e.g. button, link, textbox, checkbox, combobox; usually with name"`
	Name        string `json:"name,omitempty" jsonschema:"accessible name to match together with role, e.g. Submit"`
	Label       string `json:"label,omitempty" jsonschema:"text of the form field's label, e.g. Email"`
	Text        string `json:"text,omitempty" jsonschema:"visible text of the element (a text leaf is projected to its nearest actionable ancestor)"`
	Placeholder string `json:"placeholder,omitempty" jsonschema:"placeholder of an input, e.g. Search"`
	TestID      string `json:"testId,omitempty" jsonschema:"the element's data-testid"`
	CSS         string `json:"css,omitempty" jsonschema:"CSS selector (shadow roots: host >>> inner)"`
	Index       *int   `json:"index,omitempty" jsonschema:"zero-based index among the visible matches, only when several matches are intended"`
}

func (t TargetArg) empty() bool { return t == TargetArg{} }

func (t TargetArg) wire() *localapi.Target {
	return &localapi.Target{Ref: t.Ref, SnapshotID: t.SnapshotID, Role: t.Role, Name: t.Name, Label: t.Label,
		Text: t.Text, Placeholder: t.Placeholder, TestID: t.TestID, CSS: t.CSS, Index: t.Index}
}

// PageArg names the page a tool acts on.
type PageArg struct {
	Page string `json:"page,omitempty" jsonschema:"page (tab) id from browser_tabs or browser_launch; default: the current page"`
}

// ElementArgs name the page and the element a tool acts on.
type ElementArgs struct {
	PageArg
	ElementRef
}

// ElementRef names an element: ref and snapshotId from a snapshot, or a
// target object.
type ElementRef struct {
	Element    string     `json:"element,omitempty" jsonschema:"human-readable description of the element, for the person reviewing the call (not used to find it)"`
	Ref        string     `json:"ref,omitempty" jsonschema:"element ref from browser_snapshot, e.g. e12; needs snapshotId. Alternative to target"`
	SnapshotID string     `json:"snapshotId,omitempty" jsonschema:"the snapshotId of the browser_snapshot the ref came from"`
	Target     *TargetArg `json:"target,omitempty" jsonschema:"the element by semantics instead of a ref: {role,name}, {label}, {text}, {placeholder}, {testId}, {css}, optionally index"`
}

// target returns the one target the arguments name. required says a
// target must be given.
func (e ElementRef) target(required bool) (*localapi.Target, error) {
	hasRef := e.Ref != "" || e.SnapshotID != ""
	hasTarget := e.Target != nil && !e.Target.empty()
	switch {
	case hasRef && hasTarget:
		return nil, fsm.Refuse(fsm.InvalidArgument, "give ref and snapshotId, or target, not both")
	case hasRef:
		if e.Ref == "" || e.SnapshotID == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "a ref needs the snapshotId of the snapshot it came from (and the other way round)")
		}
		return (TargetArg{Ref: e.Ref, SnapshotID: e.SnapshotID}).wire(), nil
	case hasTarget:
		return e.Target.wire(), nil
	case required:
		return nil, fsm.Refuse(fsm.InvalidArgument, "name the element: ref and snapshotId from browser_snapshot, or target {role,name | label | text | placeholder | testId | css}")
	}
	return nil, nil
}

// SnapshotAfter asks for a snapshot with an action's result.
type SnapshotAfter struct {
	Snapshot bool `json:"snapshot,omitempty" jsonschema:"also return a fresh snapshot of the page after the action (default false: snapshots only when asked)"`
}

type launchIn struct {
	Managed  string `json:"managed,omitempty" jsonschema:"name of a private managed profile kept between launches (1-48 of a-z 0-9 -); omit for a fresh temporary profile"`
	Headless *bool  `json:"headless,omitempty" jsonschema:"run without a window; default true for a temporary profile, false for a managed one (a visible browser needs a display)"`
	Keep     bool   `json:"keep,omitempty" jsonschema:"with a shared Runner (webcodex mcp --runner): keep the browser when this session ends, for a later session to adopt by id (browser_adopt); otherwise it is closed"`
}

type attachIn struct {
	Candidate  string `json:"candidate,omitempty" jsonschema:"a candidate name from browser_discover, e.g. google-chrome or chromium"`
	ProfileDir string `json:"profileDir,omitempty" jsonschema:"instead of candidate: the running browser's profile directory"`
	Endpoint   string `json:"endpoint,omitempty" jsonschema:"instead of candidate: the debugging endpoint, 127.0.0.1:PORT (loopback only)"`
	Offer      string `json:"offer,omitempty" jsonschema:"instead of candidate: the offer of a tab the person shared from the webcodex extension (browser_discover lists them)"`
	// The person decides: the request is shown at approval.
	PressPrompt bool `json:"pressPrompt,omitempty" jsonschema:"ask the person to let webcodex press Chrome's own Allow-remote-debugging prompt for them (Linux X11 with accessibility on)"`
}

type emptyIn struct{}

type browserIn struct {
	Browser string `json:"browser,omitempty" jsonschema:"browser id from browser_status; default: the current browser"`
}

type navigateIn struct {
	PageArg
	URL string `json:"url" jsonschema:"absolute http or https URL to load; it must be on the owner's allowed origins (the tool says when it is not)"`
	SnapshotAfter
}

type snapshotIn struct {
	PageArg
	Interactive bool       `json:"interactive,omitempty" jsonschema:"list only actionable elements (smaller)"`
	Scope       *TargetArg `json:"scope,omitempty" jsonschema:"limit the outline to one subtree: a ref with its snapshotId, or a css selector"`
	Since       string     `json:"since,omitempty" jsonschema:"a snapshotId of this page: return only the lines that changed since it"`
	MaxChars    int        `json:"maxChars,omitempty" jsonschema:"character budget of this chunk (default 20000, at most 200000)"`
	Cursor      string     `json:"cursor,omitempty" jsonschema:"cursor from a truncated snapshot: read its next chunk"`
}

type clickIn struct {
	ElementArgs
	SnapshotAfter
}

type typeIn struct {
	ElementArgs
	Text   string `json:"text" jsonschema:"text to enter; it is typed as real input and never echoed back"`
	Clear  *bool  `json:"clear,omitempty" jsonschema:"replace the field's current value (default true); false appends"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter afterwards"`
	SnapshotAfter
}

type formField struct {
	ElementRef
	Type  string `json:"type" jsonschema:"textbox (also textarea, contenteditable), checkbox, radio or combobox (a select)"`
	Value string `json:"value" jsonschema:"textbox: the text; checkbox or radio: true or false; combobox: the option's value or visible label"`
}

type fillFormIn struct {
	PageArg
	Fields []formField `json:"fields" jsonschema:"the fields to fill, in order (at most 50); each names its element like browser_click"`
	SnapshotAfter
}

type pressKeyIn struct {
	ElementArgs
	Key string `json:"key" jsonschema:"key or chord, e.g. Enter, Tab, ArrowDown, Escape, Control+a; with an element it is focused first"`
	SnapshotAfter
}

type selectIn struct {
	ElementArgs
	Values []string `json:"values" jsonschema:"option values or visible labels to select (several for a multiple select)"`
	SnapshotAfter
}

type waitIn struct {
	ElementArgs
	Condition   string `json:"condition,omitempty" jsonschema:"load, url, text, text_gone, visible, hidden, enabled or time; default: inferred from the other arguments"`
	Text        string `json:"text,omitempty" jsonschema:"text to wait for (condition text)"`
	TextGone    string `json:"textGone,omitempty" jsonschema:"text to wait to disappear (condition text_gone)"`
	URL         string `json:"url,omitempty" jsonschema:"exact URL the page must be at (condition url, or a constraint on any condition)"`
	URLIncludes string `json:"urlIncludes,omitempty" jsonschema:"substring the page URL must contain"`
	TimeoutMS   int    `json:"timeoutMs,omitempty" jsonschema:"how long to wait in milliseconds (default 10000, at most 120000); a timeout returns found: false"`
	Time        int    `json:"time,omitempty" jsonschema:"condition time: seconds to wait (at most 30)"`
}

type screenshotIn struct {
	ElementArgs
	FullPage bool `json:"fullPage,omitempty" jsonschema:"capture the whole scrollable page instead of the viewport"`
}

type evaluateIn struct {
	PageArg
	Expression string `json:"expression,omitempty" jsonschema:"JavaScript expression evaluated in the page (a promise is awaited); its value is returned bounded"`
	Function   string `json:"function,omitempty" jsonschema:"instead of expression: a function to call, e.g. () => document.title"`
}

type uploadIn struct {
	ElementArgs
	Files []string `json:"files" jsonschema:"file names inside the owner's upload directory (--upload-dir); anything outside it is refused"`
}

type dialogIn struct {
	PageArg
	Accept     *bool  `json:"accept,omitempty" jsonschema:"true accepts the open dialog, false dismisses it; omit to only report it"`
	PromptText string `json:"promptText,omitempty" jsonschema:"text to enter in a prompt() dialog before accepting"`
}

type tabsIn struct {
	Action  string `json:"action" jsonschema:"list, new, close or select"`
	Browser string `json:"browser,omitempty" jsonschema:"list, new: the browser (default: the current one; list: every browser)"`
	Page    string `json:"page,omitempty" jsonschema:"close, select: the page id"`
	URL     string `json:"url,omitempty" jsonschema:"new: a URL to load in the new tab"`
}

type diagIn struct {
	PageArg
	Since      uint64 `json:"since,omitempty" jsonschema:"cursor from the previous read (its next): only newer entries"`
	ErrorsOnly bool   `json:"errorsOnly,omitempty" jsonschema:"only errors (console errors and exceptions; failed or 4xx/5xx requests)"`
	Clear      bool   `json:"clear,omitempty" jsonschema:"clear the log after reading"`
}

type cdpIn struct {
	PageArg
	Method string         `json:"method" jsonschema:"a page-scoped CDP command, Domain.command, e.g. DOM.getDocument or Emulation.setDeviceMetricsOverride"`
	Params map[string]any `json:"params,omitempty" jsonschema:"the command's parameters, as the DevTools protocol defines them"`
}

// schemaTweaks tighten derived schemas.
func enum(s *jsonschema.Schema, field string, values ...string) {
	p := s.Properties[field]
	if p == nil {
		panic("mcp: no field " + field)
	}
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

func bounds(s *jsonschema.Schema, field string, lo, hi float64) {
	p := s.Properties[field]
	if p == nil {
		panic("mcp: no field " + field)
	}
	p.Minimum, p.Maximum = &lo, &hi
}

func maxItems(s *jsonschema.Schema, field string, lo, hi int) {
	p := s.Properties[field]
	if p == nil {
		panic("mcp: no field " + field)
	}
	p.MinItems, p.MaxItems = &lo, &hi
}

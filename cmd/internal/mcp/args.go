package mcp

import (
	"bytes"
	"encoding/json"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// The tools' arguments. Field tags carry the descriptions agents read; the
// JSON schemas are derived from these types (jsonschema.For) and tightened
// with enums and bounds in tools.go.

// TargetArg names an element: a ref from a snapshot ("e5", or
// {"ref":"e5","snapshotId":…}), or one way of finding it on the live page
// ({"role":"button","name":"Save"}, {"label":…}, {"text":…},
// {"placeholder":…}, {"testId":…}, {"css":…}), optionally with index. It
// decodes itself, so a malformed target is refused with a hint naming the
// keys it takes rather than a schema validator's message; its advertised
// schema is one description (targetSchema), not a copy of these fields in
// every tool.
type TargetArg struct {
	Ref         string `json:"ref,omitempty"`
	SnapshotID  string `json:"snapshotId,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testId,omitempty"`
	CSS         string `json:"css,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

// targetHelp is the shape of a target, as hints and descriptions say it.
const targetHelp = `{"role":"button","name":"Save"}, or one of label, text, placeholder, testId, css (e.g. {"label":"Email"}); add index to pick one of several visible matches`

func (t TargetArg) empty() bool { return t == TargetArg{} }

func (t TargetArg) wire() *localapi.Target {
	return &localapi.Target{Ref: t.Ref, SnapshotID: t.SnapshotID, Role: t.Role, Name: t.Name, Label: t.Label,
		Text: t.Text, Placeholder: t.Placeholder, TestID: t.TestID, CSS: t.CSS, Index: t.Index}
}

// UnmarshalJSON takes a ref string, a selector string (as Playwright MCP's
// target: a unique element selector) or a target object with known keys.
func (t *TargetArg) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		if refPattern.MatchString(str) {
			*t = TargetArg{Ref: str}
			return nil
		}
		sel, err := selectorTarget(str)
		if err != nil {
			return err
		}
		*t = sel
		return nil
	}
	type plain TargetArg
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fsm.Refuse(fsm.InvalidArgument, "target is a ref (e5), a CSS selector, or an object: "+targetHelp)
	}
	*t = TargetArg(p)
	return t.check()
}

// selectorTarget reads a selector string the way the CLI does
// (localapi.SelectorTarget: CSS, or Playwright's text=…, role=…[name="…"]
// and data-testid=…), its refusals naming the argument. The element must be
// unique: more than one visible match is refused as ambiguous and none as
// not found, each naming the count.
func selectorTarget(sel string) (TargetArg, error) {
	t, err := localapi.SelectorTarget(sel)
	if err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			return TargetArg{}, fsm.Refuse(ref.Code, "target: "+ref.Detail+"; or give a ref (e5, from browser_snapshot)")
		}
		return TargetArg{}, err
	}
	return TargetArg{Role: t.Role, Name: t.Name, Text: t.Text, TestID: t.TestID, CSS: t.CSS}, nil
}

// check refuses a target that names no element, or more than one way.
func (t TargetArg) check() error {
	kinds := 0
	for _, s := range []string{t.Ref, t.Role, t.Label, t.Text, t.Placeholder, t.TestID, t.CSS} {
		if s != "" {
			kinds++
		}
	}
	switch {
	case t.Name != "" && t.Role == "":
		return fsm.Refuse(fsm.InvalidArgument, `target.name goes with target.role, e.g. {"role":"button","name":"Save"}`)
	case kinds == 0:
		return fsm.Refuse(fsm.InvalidArgument, "target names no element: give "+targetHelp)
	case kinds > 1:
		return fsm.Refuse(fsm.InvalidArgument, "target gives more than one way to find the element: give one of role (with name), label, text, placeholder, testId, css, or ref")
	case t.Ref != "" && !refPattern.MatchString(t.Ref):
		return fsm.Refusef(fsm.InvalidArgument, "target.ref %q is not a ref like e5 (from browser_snapshot)", capText(t.Ref, 40))
	case t.Index != nil && *t.Index < 0:
		return fsm.Refuse(fsm.InvalidArgument, "target.index is zero or more")
	}
	return nil
}

// refPattern is a ref as snapshots print it: e5, or f1e3 inside a frame.
var refPattern = regexp.MustCompile(`^(f[0-9]+)?e[0-9]+$`)

// PageArg names the page a tool acts on.
type PageArg struct {
	Page string `json:"page,omitempty"`
}

// ElementArgs name the page and the element a tool acts on.
type ElementArgs struct {
	PageArg
	ElementRef
}

// ElementRef names an element the way Playwright MCP does (ref, with an
// optional human description), or by target.
type ElementRef struct {
	Element    string     `json:"element,omitempty"`
	Ref        string     `json:"ref,omitempty"`
	SnapshotID string     `json:"snapshotId,omitempty"`
	Target     *TargetArg `json:"target,omitempty"`

	// latest is the page's latest snapshot, filled in by the server
	// (fillSnapshot) for a ref given without snapshotId.
	latest string
}

// fillSnapshot records the page's latest snapshot for a bare ref. The ref
// stays fenced: the Runner refuses it as stale when that snapshot's
// document is gone, and never rebinds it to another snapshot.
func (e *ElementRef) fillSnapshot(page string, latest func(page, ref string) string) {
	if ref := e.ref(); ref != "" && e.snapshotID() == "" {
		e.latest = latest(page, ref)
	}
}

func (e *ElementRef) ref() string {
	if e.Ref == "" && e.Target != nil {
		return e.Target.Ref
	}
	return e.Ref
}

func (e *ElementRef) snapshotID() string {
	if e.SnapshotID == "" && e.Target != nil {
		return e.Target.SnapshotID
	}
	return e.SnapshotID
}

func (a *ElementArgs) fillSnapshot(latest func(page, ref string) string) {
	a.ElementRef.fillSnapshot(a.Page, latest)
}

// snapshotFiller is implemented by arguments that may carry a bare ref.
type snapshotFiller interface {
	fillSnapshot(latest func(page, ref string) string)
}

// target returns the one target the arguments name. required says a
// target must be given.
func (e ElementRef) target(required bool) (*localapi.Target, error) {
	hasRef := e.Ref != "" || e.SnapshotID != ""
	hasTarget := e.Target != nil && !e.Target.empty()
	switch {
	case hasRef && hasTarget:
		return nil, fsm.Refuse(fsm.InvalidArgument, "give ref or target, not both")
	case hasRef:
		if e.Ref == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "snapshotId goes with ref (e5, from that snapshot)")
		}
		return refTarget(TargetArg{Ref: e.Ref, SnapshotID: e.SnapshotID}, e.latest)
	case hasTarget:
		if e.Target.Ref != "" {
			return refTarget(*e.Target, e.latest)
		}
		return e.Target.wire(), nil
	case required:
		return nil, fsm.Refuse(fsm.InvalidArgument, "name the element: ref (e5, from browser_snapshot), or target "+targetHelp)
	}
	return nil, nil
}

// refTarget is a ref target with its snapshot: the given one, else the
// page's latest.
func refTarget(t TargetArg, latest string) (*localapi.Target, error) {
	if !refPattern.MatchString(t.Ref) {
		return nil, fsm.Refusef(fsm.InvalidArgument, "ref %q is not a ref like e5: use one browser_snapshot listed, or name the element with target %s", capText(t.Ref, 40), targetHelp)
	}
	if t.SnapshotID == "" {
		t.SnapshotID = latest
	}
	if t.SnapshotID == "" {
		return nil, fsm.Refusef(fsm.InvalidArgument, "ref %s: this page has no snapshot in this session yet; call browser_snapshot and use a ref it lists", t.Ref)
	}
	return t.wire(), nil
}

// SnapshotAfter asks for a snapshot with an action's result (the server's
// instructions say so once, not every tool).
type SnapshotAfter struct {
	Snapshot bool `json:"snapshot,omitempty"`
}

type launchIn struct {
	Managed  string `json:"managed,omitempty" jsonschema:"a kept profile's name"`
	Headless *bool  `json:"headless,omitempty" jsonschema:"default: not if managed"`
	Keep     bool   `json:"keep,omitempty" jsonschema:"keep after the session"`
}

type attachIn struct {
	Candidate  string `json:"candidate,omitempty" jsonschema:"from browser_discover"`
	ProfileDir string `json:"profileDir,omitempty" jsonschema:"or its profile directory"`
	Endpoint   string `json:"endpoint,omitempty" jsonschema:"or its 127.0.0.1:PORT"`
	Offer      string `json:"offer,omitempty" jsonschema:"or a shared tab"`
	// The person decides: the request is shown at approval.
	PressPrompt bool `json:"pressPrompt,omitempty" jsonschema:"press Chrome's prompt for them"`
}

type emptyIn struct{}

type browserIn struct {
	Browser string `json:"browser,omitempty" jsonschema:"default: the current one"`
}

// EffectKey names a side effect: a call repeated with the same key gets
// the outcome recorded for it and does nothing again (minted when absent).
type EffectKey struct {
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

type navigateIn struct {
	PageArg
	URL string `json:"url"`
	EffectKey
	SnapshotAfter
}

type snapshotIn struct {
	PageArg
	Interactive bool       `json:"interactive,omitempty" jsonschema:"actionable lines only"`
	Target      *TargetArg `json:"target,omitempty" jsonschema:"only this element's subtree"`
	Scope       *TargetArg `json:"scope,omitempty" jsonschema:"same as target"`
	Depth       int        `json:"depth,omitempty" jsonschema:"levels of the tree to show"`
	Since       string     `json:"since,omitempty" jsonschema:"a snapshotId: changes since"`
	MaxChars    int        `json:"maxChars,omitempty" jsonschema:"default 20000"`
	Cursor      string     `json:"cursor,omitempty" jsonschema:"the next chunk"`
	Query       *queryArg  `json:"query,omitempty" jsonschema:"only what matches"`
}

// queryArg finds elements on a page too big to read whole (the surface's
// default limit of matches applies).
type queryArg struct {
	Role string `json:"role,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text,omitempty"`
}

type clickIn struct {
	ElementArgs
	DoubleClick bool     `json:"doubleClick,omitempty"`
	Button      string   `json:"button,omitempty" jsonschema:"default left"`
	Modifiers   []string `json:"modifiers,omitempty" jsonschema:"held during the click"`
	SnapshotAfter
	EffectKey
}

type hoverIn struct {
	ElementArgs
	SnapshotAfter
	EffectKey
}

type typeIn struct {
	ElementArgs
	Text   string `json:"text"`
	Clear  *bool  `json:"clear,omitempty" jsonschema:"default true; false appends"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter after"`
	Slowly bool   `json:"slowly,omitempty" jsonschema:"a key event per character"`
	SnapshotAfter
	EffectKey
}

type formField struct {
	ElementRef
	Name  string `json:"name,omitempty" jsonschema:"what the field is, for the person"`
	Type  string `json:"type"`
	Value string `json:"value" jsonschema:"text, true/false or option"`
}

type fillFormIn struct {
	PageArg
	Fields []formField `json:"fields" jsonschema:"elements as in browser_click"`
	SnapshotAfter
}

type pressKeyIn struct {
	ElementArgs
	Key string `json:"key" jsonschema:"e.g. Enter, Control+a"`
	SnapshotAfter
	EffectKey
}

type selectIn struct {
	ElementArgs
	Values []string `json:"values"`
	SnapshotAfter
	EffectKey
}

type waitIn struct {
	ElementArgs
	Text        string  `json:"text,omitempty"`
	TextGone    string  `json:"textGone,omitempty"`
	Time        float64 `json:"time,omitempty" jsonschema:"seconds"`
	Condition   string  `json:"condition,omitempty" jsonschema:"of the element (default visible)"`
	URL         string  `json:"url,omitempty" jsonschema:"exact"`
	URLIncludes string  `json:"urlIncludes,omitempty"`
	Timeout     float64 `json:"timeout,omitempty" jsonschema:"seconds (default 10)"`
}

type screenshotIn struct {
	ElementArgs
	FullPage bool   `json:"fullPage,omitempty"`
	Type     string `json:"type,omitempty" jsonschema:"default png"`
	Scale    string `json:"scale,omitempty" jsonschema:"css (default) or device pixels"`
	Filename string `json:"filename,omitempty" jsonschema:"also save into the session's output directory"`
}

type evaluateIn struct {
	ElementArgs
	Expression string `json:"expression,omitempty" jsonschema:"a promise is awaited"`
	Function   string `json:"function,omitempty" jsonschema:"e.g. () => document.title"`
}

type uploadIn struct {
	ElementArgs
	Paths []string `json:"paths,omitempty" jsonschema:"files in the owner's upload directory (absolute or relative to it)"`
	Files []string `json:"files,omitempty" jsonschema:"same as paths"`
}

type dialogIn struct {
	PageArg
	Accept     *bool  `json:"accept,omitempty"`
	PromptText string `json:"promptText,omitempty" jsonschema:"for a prompt()"`
}

type tabsIn struct {
	Action  string `json:"action"`
	Browser string `json:"browser,omitempty" jsonschema:"default: current (list: all)"`
	Index   *int   `json:"index,omitempty" jsonschema:"close, select: its place in list, from 0"`
	Page    string `json:"page,omitempty" jsonschema:"close, select: its id"`
	URL     string `json:"url,omitempty" jsonschema:"new: where"`
}

type diagIn struct {
	PageArg
	Since      uint64 `json:"since,omitempty" jsonschema:"the last answer's next"`
	ErrorsOnly bool   `json:"errorsOnly,omitempty"`
	Clear      bool   `json:"clear,omitempty" jsonschema:"after reading"`
}

type consoleIn struct {
	diagIn
	Level string `json:"level,omitempty" jsonschema:"and more severe (default info)"`
	All   bool   `json:"all,omitempty" jsonschema:"also before the last navigation"`
}

type networkIn struct {
	diagIn
	Static bool   `json:"static,omitempty" jsonschema:"include loaded images, fonts, scripts, styles"`
	Filter string `json:"filter,omitempty" jsonschema:"URL regexp"`
}

type cdpIn struct {
	PageArg
	Method string         `json:"method" jsonschema:"e.g. DOM.getDocument"`
	Params map[string]any `json:"params,omitempty"`
	EffectKey
}

// elementTerms describes the element arguments once, in browser_click; the
// other element tools take the same and leave them undescribed, since
// every byte of the tool list reaches the model on every turn.
func elementTerms(s *jsonschema.Schema) {
	s.Properties["ref"].Description = "e5, from the latest browser_snapshot"
	s.Properties["target"].Description = "a ref or a unique CSS selector; or {role,name}, {label}, {text}, {placeholder}, {testId}, {css} +index"
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

// enumItems limits the items of an array field to values.
func enumItems(s *jsonschema.Schema, field string, values ...string) {
	p := s.Properties[field]
	if p == nil || p.Items == nil {
		panic("mcp: no array field " + field)
	}
	p.Items.Enum = nil
	for _, v := range values {
		p.Items.Enum = append(p.Items.Enum, v)
	}
}

func maxItems(s *jsonschema.Schema, field string, lo, hi int) {
	p := s.Properties[field]
	if p == nil {
		panic("mcp: no field " + field)
	}
	p.MinItems, p.MaxItems = &lo, &hi
}

func (f *fillFormIn) fillSnapshot(latest func(page, ref string) string) {
	for i := range f.Fields {
		f.Fields[i].ElementRef.fillSnapshot(f.Page, latest)
	}
}

func (s *snapshotIn) fillSnapshot(latest func(page, ref string) string) {
	for _, t := range []*TargetArg{s.Scope, s.Target} {
		if t != nil && t.Ref != "" && t.SnapshotID == "" {
			t.SnapshotID = latest(s.Page, t.Ref)
		}
	}
}

func (k EffectKey) effectKey() string { return k.IdempotencyKey }

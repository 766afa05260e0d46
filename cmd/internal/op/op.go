// Package op is the operation table: each operation of the Runner is
// declared once here, with its own input and output types, and everything
// else about it is derived from that declaration — the local API route
// (localapi), admission (which page or browser it touches, read from its
// input's typed fields), whether it is an effect (then its input carries an
// idempotency key, and the Runner's effect ledger and mutation gate apply),
// its time bound, its audit record, its MCP tools and its CLI verb.
//
// Adding a parameter is one field on the input type plus the line of the
// Runner's handler that uses it; adding an operation is one declaration
// here plus one handler in the Runner. TestTable fails when a declaration
// lacks any part.
//
// The package imports no cdp package: its wire types are what the local
// API carries, and the Runner converts them to the page surface's own.
package op

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"
)

// Scope is the permission an operation needs from an MCP server's agent.
type Scope string

// The scopes (an MCP server's --scopes).
const (
	Read    Scope = "browser:read"    // status, discovery, snapshots, screenshots, diagnostics, waits
	Launch  Scope = "browser:launch"  // launch and close browsers webcodex owns
	Control Scope = "browser:control" // every effect on a page, attach, reconnect, raw CDP
)

// Capability groups: tools listed only when the owner names their group
// (an MCP server's --caps), since the tool list reaches the model on every
// turn. "" lists a tool always.
const (
	CapVision   = "vision"   // coordinate mouse tools (browser_mouse_*_xy)
	CapPDF      = "pdf"      // browser_pdf_save
	CapDevtools = "devtools" // raw CDP and probing: debugging webcodex or a page
)

// Addr is what an operation's input addresses: the Runner admits the call
// only when its client may see that page and browser (localapi.Boundary and
// the session that owns the browser).
type Addr struct {
	Page    string
	Browser string
}

// Input is an operation's input type: it says what it addresses from its
// own typed fields, never from a re-encoding of itself. The input of an
// operation addressed to nothing (AdmitNothing) is struct{}.
type Input interface {
	Addr() Addr
}

// AddrOf is what in addresses: nothing for an input that is no Input
// (struct{}, of an operation addressed to nothing).
func AddrOf(in any) Addr {
	if i, ok := in.(Input); ok {
		return i.Addr()
	}
	return Addr{}
}

// Admission is what an operation is addressed to, and so how the Runner
// admits a call before it runs (TestTable holds each input to it).
type Admission int

const (
	// AdmitPage: the page its input names (Addr().Page), whose browser the
	// client must see. The zero value: a declaration that says nothing is
	// a page's.
	AdmitPage Admission = iota
	// AdmitBrowser: the browser its input names (Addr().Browser), which
	// the client must see.
	AdmitBrowser
	// AdmitCreator: the browser its input names, created under the
	// client's boundary; whose session owns it is what the operation
	// changes (adopt), so ownership is not required.
	AdmitCreator
	// AdmitNothing: no page or browser (its input is struct{} or names
	// neither): the Runner itself, a browser it creates, an approval. Its
	// result shows only what the client may see.
	AdmitNothing
)

// OnPage is the page an operation acts on; an input embeds it.
type OnPage struct {
	Page string `json:"page"`
}

// Addr admits the page.
func (a OnPage) Addr() Addr { return Addr{Page: a.Page} }

// SetPage names the page (a client fills it in after resolving the
// current one).
func (a *OnPage) SetPage(id string) { a.Page = id }

// Keyed is the idempotency key of an effect; the input of every effect
// embeds it. A repeat with the same key gets the recorded outcome and is
// never dispatched again. Minted when empty.
type Keyed struct {
	IdempotencyKey string `json:"idempotencyKey,omitempty" flag:"idempotency-key" usage:"name this effect: repeating it with the same key returns the recorded outcome and does nothing again"`
}

// Key is the caller's idempotency key.
func (k Keyed) Key() string { return k.IdempotencyKey }

// KeyRef is the key's field, for a client that sets it.
func (k *Keyed) KeyRef() *string { return &k.IdempotencyKey }

// Keyer is the input of an effect.
type Keyer interface {
	Key() string
	KeyRef() *string
}

// PageSetter is an input that names its page.
type PageSetter interface {
	SetPage(string)
}

// Bound is how long the Runner lets an operation run.
type Bound int

const (
	// CallBound is the Runner's call bound (its --call-bound).
	CallBound Bound = iota + 1
	// LaunchBound is the call bound, never shorter than the default one:
	// a browser's start-up takes what it takes.
	LaunchBound
	// StatusBound answers whatever a browser does (each asked within the
	// status bound; one that does not answer is reported unresponsive).
	StatusBound
	// ShutdownBound is the bound of closing every browser of a Runner or a
	// session.
	ShutdownBound
	// PersonBound: the operation waits for a person (consent, an
	// approval's answer, the desktop's notification service) and bounds
	// each wait by its own deadline (the consent deadline, the approval's
	// expiry), which no call bound may cut short. Not for a page's
	// operation.
	PersonBound
	// WaitBound is the call bound plus the wait the input asks for
	// (Waiter), at most MaxWait.
	WaitBound
)

// MaxWait bounds any wait a caller asks for.
const MaxWait = 2 * time.Minute

// Waiter is the input of an operation bound by WaitBound: how long it asks
// to wait.
type Waiter interface {
	WaitFor() time.Duration
}

// Judge is how the Runner finds and judges the page an operation names
// before it runs (after admission).
type Judge int

const (
	// JudgeLive (the default): the page's live URL is judged by the origin
	// gate, and its origin is what the operation acted on.
	JudgeLive Judge = iota
	// JudgeNavigable: a page webcodex opened may move even when it left the
	// allowlist (back is the way home); a tab of the person's must be
	// readable. Where it may go is the handler's to check.
	JudgeNavigable
	// JudgeTarget: judged by the URL the browser reports for the target,
	// which answers while a JavaScript dialog blocks the page's scripts.
	JudgeTarget
	// JudgeNone: the page is only found (closing it needs no look at it);
	// the handler refuses what it must.
	JudgeNone
)

// Audit says what the audit trail records of an operation.
type Audit int

const (
	// NotAudited: a read; it changes nothing.
	NotAudited Audit = iota + 1
	// AuditActed records the operation on the origin it acted on, read
	// before it acted (an action may navigate). An input that names files
	// (AuditFiles) gets one record per file with its path and size; one
	// that names where it goes (AuditURL: a navigation) is recorded on that
	// origin.
	AuditActed
	// AuditRecorded: the handler appends the one record, naming what only
	// it knows (the browser a launch or attach created, the CDP method's
	// policy name, an approval's evidence). Not for a page action.
	AuditRecorded
	// AuditLanded records it on the origin the page is on after it acted
	// (a move through history).
	AuditLanded
)

// Reveal is what an operation's answer may show of a page. Whatever it
// says, every answer and error of the Runner passes its one redaction of
// secret values (package secret), which puts a secret's placeholder where
// its value was; Reveal says what else the outputs do.
type Reveal int

const (
	// RevealsNothing: only webcodex's own words, ids and counts.
	RevealsNothing Reveal = iota + 1
	// RevealsPageText: text a page wrote (an outline, a title, a URL, a
	// console or dialog message, an evaluated value); an MCP server shows
	// it inside a fence naming its origin and frame.
	RevealsPageText
	// RevealsPixels: an image of the page; password fields are masked.
	RevealsPixels
)

// SecretTag marks an input field that may carry secret placeholders
// ({{secret.NAME}}): the Runner types a secret's value in their place, and
// only into a document of an origin the secret is bound to.
const SecretTag = "secret"

// Typed returns the fields of the input in points to that may carry secret
// placeholders (tagged `secret:"typed"`), at any depth of its embedded
// structs.
func Typed(in any) []*string {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	var out []*string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				walk(v.Field(i))
			case f.Tag.Get(SecretTag) == "typed" && f.Type.Kind() == reflect.String && f.IsExported():
				out = append(out, v.Field(i).Addr().Interface().(*string))
			}
		}
	}
	walk(v.Elem())
	return out
}

// Files is an input that names files of the caller's, audited one record
// each (uploads).
type Files interface {
	AuditFiles() []string
}

// Tool is an MCP tool derived from an operation: its name, its
// description (lean: tools/list is sent on every turn) and its capability
// group ("" always listed). Its arguments are the MCP server's own input
// type, which keeps Playwright MCP's names and shapes.
type Tool struct {
	Name  string
	Desc  string
	Group string
	// Scopes are the scopes any of which admits the tool; nil: the
	// operation's. A tool that does several operations (browser_tabs lists,
	// opens and closes) names what admits all of them.
	Scopes []Scope
	// ClosedWorld: a read that reads only webcodex's own state, not a site.
	ClosedWorld bool
}

// TargetArg says whether a CLI verb takes a TARGET after PAGE.
type TargetArg int

const (
	NoTarget TargetArg = iota
	OptionalTarget
	RequiredTarget
)

// Verb is the CLI verb derived from an operation: `webcodex NAME PAGE
// [TARGET]` for a page's, its flags read from the input type's `flag`
// tags; a browser's or the Runner's verb takes its use line and help from
// here.
type Verb struct {
	Name   string
	Use    string
	Short  string
	Target TargetArg
}

// Meta is the non-generic part of a declaration.
type Meta struct {
	// Name is the operation's name: its local API route and audit action.
	Name  string
	Scope Scope
	// Admit is what the operation is addressed to (AdmitPage when unset).
	Admit Admission
	// Effect: a call may change the page; its input embeds Keyed, and the
	// Runner runs it under the effect ledger.
	Effect bool
	// Changes: a call may change a browser, a grant or the Runner though
	// it is no effect of the ledger (it takes no idempotency key: a
	// launch, a close, an attach).
	Changes bool
	Bound   Bound
	// Judge is how its page is found and judged (default JudgeLive).
	Judge Judge
	Audit Audit
	// Reveals is what its answer may show of a page.
	Reveals Reveal
	// MCP are the tools derived from the operation (none: the MCP server
	// does not offer it on its own).
	MCP []Tool
	// CLI is the CLI verb derived from it (nil: none).
	CLI *Verb
	// Probe: the probe may perform it (ProbeIn.Action names it).
	Probe bool
	// Says is what a page action did, in one line of its result text
	// (Meta.Said); every page action says it.
	Says func(ActionResult) string
}

// Acts reports whether a call may change anything: a client that loses
// its answer then says outcome_unknown, never "unreachable" (which a
// caller would retry), and its MCP tool is not read-only.
func (m *Meta) Acts() bool { return m.Effect || m.Changes }

// Op is one operation: In is its input (an Input, or struct{} for one
// addressed to nothing), Out its result.
type Op[In, Out any] struct {
	Meta
}

// Decl is a declaration of the table, whatever its types.
type Decl interface {
	Declared() *Meta
	// NewInput returns a pointer to a zero input.
	NewInput() any
	// NewOutput returns a pointer to a zero result.
	NewOutput() any
	// Decode decodes an input strictly and returns it as an Input (nil
	// for struct{}).
	Decode(raw json.RawMessage) (Input, error)
}

// Declared returns the declaration's metadata.
func (o *Op[In, Out]) Declared() *Meta { return &o.Meta }

// NewInput returns a pointer to a zero In.
func (o *Op[In, Out]) NewInput() any { return new(In) }

// NewOutput returns a pointer to a zero Out.
func (o *Op[In, Out]) NewOutput() any { return new(Out) }

// Decode decodes raw into In, refusing unknown fields.
func (o *Op[In, Out]) Decode(raw json.RawMessage) (Input, error) {
	var in In
	if err := decodeStrict(raw, &in); err != nil {
		return nil, err
	}
	i, _ := any(in).(Input)
	return i, nil
}

var table []Decl

// Params are the JSON names of the parameters an input type takes, page
// and key included, in field order.
func Params(d Decl) []string {
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				walk(f.Type)
			case name != "" && name != "-" && f.IsExported():
				out = append(out, name)
			}
		}
	}
	walk(reflect.TypeOf(d.NewInput()).Elem())
	return out
}

func declare[In, Out any](m Meta) *Op[In, Out] {
	o := &Op[In, Out]{Meta: m}
	table = append(table, o)
	return o
}

// All returns every declaration in declaration order.
func All() []Decl { return append([]Decl(nil), table...) }

// Lookup returns the declaration named name.
func Lookup(name string) (Decl, bool) {
	for _, d := range table {
		if d.Declared().Name == name {
			return d, true
		}
	}
	return nil, false
}

// decodeStrict decodes one JSON value, refusing unknown fields: a
// parameter an operation does not take is refused, never dropped.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("op: trailing data after the input")
	}
	return nil
}

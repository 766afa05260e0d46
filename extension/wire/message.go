package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Limits of protocol version 1. A frame's limit is its message kind's
// class: commands (Runner to extension), responses, events (everything
// else the extension or host sends).
const (
	MaxCommand  = 256 << 10 // a CDP command or bridge control
	MaxResponse = 4 << 20   // a command's response
	MaxEvent    = 64 << 10  // an event, share, revoke, detach or handshake

	MaxPeers          = 4        // connections, unverified handshakes included
	MaxChannels       = 64       // attached tabs across all peers
	MaxQueuedCommands = 32       // commands sent to one peer and not yet answered
	MaxQueuedBytes    = 16 << 20 // response and event bytes waiting for their reader, all peers
	HandshakeTimeout  = 2 * time.Second
	TokenBytes        = 32 // 256-bit token
)

// MaxInbound is the largest frame the Runner admits from a peer, read from
// its header before the body is allocated: a response may be up to
// MaxResponse, but only while a command of that peer awaits one; otherwise
// nothing the peer may send is above MaxEvent.
func MaxInbound(awaitingResponse bool) int {
	if awaitingResponse {
		return MaxResponse
	}
	return MaxEvent
}

// Kind is a message's type: its "t" member.
type Kind string

// Message kinds.
const (
	// KindAuth is the native host's first frame on the Runner's socket:
	// token and instance id. The host never relays it to the extension.
	KindAuth Kind = "auth"

	// Runner to extension (relayed by the host).
	KindReady   Kind = "ready"   // the peer is authenticated
	KindCommand Kind = "cmd"     // a CDP command on a channel
	KindControl Kind = "ctl"     // a bridge control (see Op)
	KindOffered Kind = "offered" // the offer id minted for a shared tab
	KindEnded   Kind = "ended"   // an offer expired on the Runner's side

	// Extension to Runner.
	KindResponse Kind = "res"      // the answer to a cmd or ctl
	KindEvent    Kind = "ev"       // a CDP event of a channel
	KindShare    Kind = "share"    // the person shared a tab
	KindRevoke   Kind = "revoke"   // the person revoked a tab
	KindDetached Kind = "detached" // the debugger left a tab, with a fixed reason
)

// Op is a bridge control: the closed set of what the Runner may ask of
// the extension besides a CDP command. There is no control that closes
// the browser.
type Op string

// The closed bridge controls.
const (
	OpAttach    Op = "attach"     // consume an offer: attach the debugger to its tab
	OpDetach    Op = "detach"     // detach the debugger from a channel's tab
	OpTargets   Op = "targets"    // the channel's tab: target id, URL, title
	OpNewPage   Op = "new_page"   // open a tab and attach it to the channel's lease
	OpClosePage Op = "close_page" // close a tab opened with new_page
)

// Ops lists the bridge controls.
var Ops = []Op{OpAttach, OpDetach, OpTargets, OpNewPage, OpClosePage}

// Detach reasons: fixed codes for why the debugger left a tab. None of
// them permits reattaching.
const (
	ReasonTargetClosed   = "debugger_target_closed"
	ReasonCanceledByUser = "debugger_canceled_by_user"
	ReasonDetached       = "debugger_detached" // any other or unknown reason
	ReasonNative         = "native_disconnected"
	ReasonRevoke         = "explicit_revoke"
	ReasonTabClosed      = "tab_closed"
)

// Reasons lists the detach reasons.
var Reasons = []string{ReasonTargetClosed, ReasonCanceledByUser, ReasonDetached, ReasonNative, ReasonRevoke, ReasonTabClosed}

// HostName is the Native Messaging host's registered name.
const HostName = "com.webcodex.bridge"

// OfferTTL is how long a shared tab waits to be attached.
const OfferTTL = 10 * time.Minute

// DiagnosticEvents are the seven diagnostic events the extension forwards
// (projected onto the fields the Runner records), and StateEvents the page
// events the Runner's fences need (frames, lifecycle, execution contexts,
// dialogs). No other event leaves the browser.
var (
	DiagnosticEvents = []string{"Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded",
		"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished", "Network.loadingFailed"}
	StateEvents = []string{"Page.lifecycleEvent", "Page.frameNavigated", "Page.navigatedWithinDocument",
		"Page.frameStartedLoading", "Page.frameStoppedLoading", "Page.frameAttached", "Page.frameDetached",
		"Page.javascriptDialogOpening", "Page.javascriptDialogClosed", "Runtime.executionContextCreated",
		"Runtime.executionContextDestroyed", "Runtime.executionContextsCleared"}
)

// Why the Runner ends an offer (an "ended" message): nobody consumed it in
// time, or it was refused when shared (16 offers already wait; it then
// names no offer).
const (
	ReasonOfferExpired = "offer_expired"
	ReasonOfferRefused = "offer_refused"
)

// DiscardedMethod is the event the extension sends instead of an event it
// could not forward within MaxEvent: a bounded marker of loss, never a
// disconnect.
const DiscardedMethod = "WebCodex.eventsDiscarded"

// Error is a failed response.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// Message is one frame body. Which members a kind carries is checked by
// [Decode]; unknown members are refused.
//
// Token is a secret: a Message is never logged or formatted.
type Message struct {
	T        Kind            `json:"t"`
	V        int64           `json:"v,omitempty"`        // auth, ready: the protocol version
	ID       int64           `json:"id,omitempty"`       // cmd, ctl, res
	Ch       int64           `json:"ch,omitempty"`       // cmd, ctl, ev, detached: the channel (one attached tab)
	Op       Op              `json:"op,omitempty"`       // ctl
	Method   string          `json:"method,omitempty"`   // cmd, ev
	Params   json.RawMessage `json:"params,omitempty"`   // cmd, ev
	Result   json.RawMessage `json:"result,omitempty"`   // res
	Error    *Error          `json:"error,omitempty"`    // res
	Offer    string          `json:"offer,omitempty"`    // ctl attach, offered, ended
	Tab      int64           `json:"tab,omitempty"`      // share, revoke, detached, offered
	Target   string          `json:"target,omitempty"`   // share
	URL      string          `json:"url,omitempty"`      // share
	Title    string          `json:"title,omitempty"`    // share
	Reason   string          `json:"reason,omitempty"`   // detached, ended
	Token    string          `json:"token,omitempty"`    // auth
	Instance string          `json:"instance,omitempty"` // auth
	Origin   string          `json:"origin,omitempty"`   // auth: the extension origin Chrome named
}

// Direction says who sent a frame, which fixes the kinds it may carry.
type Direction int

// Directions.
const (
	FromHost      Direction = iota // the native host, before authentication: auth only
	FromExtension                  // responses and events
	FromRunner                     // commands, controls, ready, offered, ended
)

var kindsFrom = map[Direction][]Kind{
	FromHost:      {KindAuth},
	FromExtension: {KindResponse, KindEvent, KindShare, KindRevoke, KindDetached},
	FromRunner:    {KindReady, KindCommand, KindControl, KindOffered, KindEnded},
}

// Limit returns the largest body of a message of kind k.
func Limit(k Kind) int {
	switch k {
	case KindCommand, KindControl, KindReady, KindOffered, KindEnded:
		return MaxCommand
	case KindResponse:
		return MaxResponse
	}
	return MaxEvent
}

// methodPattern is a CDP method name, as the raw CDP policy reads it.
var methodPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,40}\.[a-z][A-Za-z0-9]{0,60}$`)

// maxID is the largest id: every id is exact in a JavaScript number.
const maxID = 1<<53 - 1

// Decode checks body as strict I-JSON, decodes it and checks that it is a
// message dir may send, with the members its kind needs, within its
// kind's limit. Every failure wraps [ErrMalformed] or [ErrFrameTooLarge].
func Decode(body []byte, dir Direction) (*Message, error) {
	if err := Validate(body); err != nil {
		return nil, err
	}
	if err := exactMembers(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m Message
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, decodeReason(err))
	}
	if !slices.Contains(kindsFrom[dir], m.T) {
		return nil, fmt.Errorf("%w: a message of kind %.20q may not come from this side", ErrMalformed, m.T)
	}
	if len(body) > Limit(m.T) {
		return nil, &LimitError{Size: uint64(len(body)), Limit: Limit(m.T)}
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrMalformed, m.T, err)
	}
	return &m, nil
}

// memberNames are the protocol's member names, exactly as
// spec/bridge-protocol.md spells them: a frame's and an error's.
var memberNames, errorMemberNames = jsonNames(reflect.TypeFor[Message]()), jsonNames(reflect.TypeFor[Error]())

func jsonNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}

// exactMembers refuses a member whose name is not exactly one of the
// protocol's: encoding/json matches names case-insensitively, so without
// this {"T":"auth"} would be read as {"t":"auth"}. body is valid I-JSON.
func exactMembers(body []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return fmt.Errorf("%w: %s", ErrMalformed, decodeReason(err))
	}
	for name, v := range top {
		if !memberNames[name] {
			return fmt.Errorf("%w: an unknown member (names are case-sensitive)", ErrMalformed)
		}
		if name != "error" || string(v) == "null" {
			continue
		}
		var e map[string]json.RawMessage
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("%w: member error has the wrong type", ErrMalformed)
		}
		for n := range e {
			if !errorMemberNames[n] {
				return fmt.Errorf("%w: an unknown member of error (names are case-sensitive)", ErrMalformed)
			}
		}
	}
	return nil
}

// decodeReason names what encoding/json refused without quoting content.
func decodeReason(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return "member " + e.Field + " has the wrong type"
	case *json.SyntaxError:
		return "syntax"
	}
	return "an unknown member or a value of the wrong type"
}

// check enforces the members each kind needs and forbids the rest that
// matter (a token only in auth, an id only where it is answered).
func (m *Message) check() error {
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("needs %s", what)
		}
		return nil
	}
	if m.ID < 0 || m.ID > maxID || m.Ch < 0 || m.Ch > maxID || m.Tab < 0 || m.Tab > maxID {
		return fmt.Errorf("an id, channel or tab out of range")
	}
	if m.T != KindAuth && (m.Token != "" || m.Instance != "") {
		return fmt.Errorf("carries credentials")
	}
	switch m.T {
	case KindAuth:
		return firstErr(need(m.V == Version, "v 1"), need(isHex(m.Token, 2*TokenBytes), "a 256-bit hex token"),
			need(isHex(m.Instance, 32), "a 128-bit hex instance id"), need(len(m.Origin) <= 128, "a short origin"))
	case KindReady:
		return need(m.V == Version, "v 1")
	case KindCommand:
		return firstErr(need(m.ID > 0, "an id"), need(m.Ch > 0, "a channel"), need(methodPattern.MatchString(m.Method), "a method name"),
			need(isObjectOrEmpty(m.Params), "params as an object"))
	case KindControl:
		return firstErr(need(m.ID > 0, "an id"), need(slices.Contains(Ops, m.Op), "a known op"), need(m.Ch > 0, "a channel"),
			need(m.Op != OpAttach || (m.Offer != "" && m.Tab > 0), "an offer and tab to attach"))
	case KindOffered:
		return firstErr(need(m.Tab > 0, "a tab"), need(m.Offer != "", "an offer"))
	case KindEnded:
		return firstErr(need(m.Tab > 0, "a tab"), need(m.Reason == ReasonOfferExpired || m.Reason == ReasonOfferRefused, "a known reason"),
			need((m.Offer != "") == (m.Reason == ReasonOfferExpired), "an offer when it expired"))
	case KindResponse:
		return firstErr(need(m.ID > 0, "an id"), need((m.Error == nil) != (len(m.Result) == 0), "exactly one of result and error"),
			need(isObjectOrEmpty(m.Result), "result as an object"))
	case KindEvent:
		return firstErr(need(m.Ch > 0, "a channel"), need(methodPattern.MatchString(m.Method), "a method name"),
			need(isObjectOrEmpty(m.Params), "params as an object"))
	case KindShare:
		return firstErr(need(m.Tab > 0, "a tab"), need(m.Target != "" && len(m.Target) <= 64, "a target id"), need(m.URL != "", "a URL"))
	case KindRevoke:
		return need(m.Tab > 0, "a tab")
	case KindDetached:
		return firstErr(need(m.Tab > 0, "a tab"), need(slices.Contains(Reasons, m.Reason), "a known reason"))
	}
	return fmt.Errorf("unknown kind")
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isObjectOrEmpty(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) == 0 || raw[0] == '{'
}

// Encode encodes m and checks it against its kind's limit.
func Encode(m *Message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("wire: encode %s: %w", m.T, err)
	}
	if len(b) > Limit(m.T) {
		return nil, &LimitError{Size: uint64(len(b)), Limit: Limit(m.T)}
	}
	return b, nil
}

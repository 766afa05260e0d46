package fsm

import (
	"errors"
	"fmt"
	"regexp"
)

// Code is a refusal reason: policy saying no. The string is the wire form
// shared by the CLI, the local API and MCP: never rename one, never reuse one.
type Code string

// The closed set of refusal codes. Only this package declares codes.
const (
	TransitionRefused     Code = "transition_refused"              // no edge for this trigger in this state, or its guard is false
	ConsentRequired       Code = "browser_consent_required"        // no live grant: a person must approve out of band
	ConsentRevoked        Code = "browser_consent_revoked"         // the person dismissed the prompt or the grant was revoked
	EndpointOwnerMismatch Code = "browser_endpoint_owner_mismatch" // the endpoint is not owned by the approved browser process
	BindingStale          Code = "browser_binding_stale"           // a capability minted in an older generation or document
	WrongTargetRefused    Code = "browser_wrong_target_refused"    // the target is not the one the capability names
	RouteUnavailable      Code = "browser_route_unavailable"       // this route is not supported here or not built yet
	ReconnectExhausted    Code = "browser_reconnect_exhausted"     // the reconnect budget or deadline is spent
	InputIncomplete       Code = "browser_input_incomplete"        // fewer characters were delivered than requested
	RequiresSetup         Code = "browser_requires_setup"          // something must be installed or configured first
	ElementNotFound       Code = "browser_element_not_found"       // no element matches the target
	ElementHidden         Code = "browser_element_hidden"          // matches exist but none is visible
	ElementDisabled       Code = "browser_element_disabled"        // the element is disabled
	ElementAmbiguous      Code = "browser_element_ambiguous"       // several visible elements match
	ElementObscured       Code = "browser_element_obscured"        // the click point hits another element
	PageClosed            Code = "browser_page_closed"             // the tab is gone
	NavigationFailed      Code = "browser_navigation_failed"       // the browser reported a load error
	InvalidArgument       Code = "invalid_argument"                // the request is malformed
	NotFound              Code = "not_found"                       // no such browser or page (unknown and unauthorized look alike)
	ScopeDenied           Code = "scope_denied"                    // the session's scopes do not allow this tool
	PolicyDenied          Code = "cdp_policy_denied"               // the CDP command is withheld by the domain policy
	ApprovalInvalid       Code = "approval_invalid"                // the approval request is unknown, expired, used or mismatched
	LeaseHeld             Code = "lease_held"                      // another holder has the lease
	OriginDenied          Code = "origin_denied"                   // the URL's origin is not on the owner's allowlist
	OutcomeUnknown        Code = "outcome_unknown"                 // the effect was dispatched but its acknowledgement was lost
	AttachmentLost        Code = "attachment_lost"                 // the browser connection is gone for good
	DiagnosticsDiscarded  Code = "diagnostic_events_discarded"     // bounded diagnostic queues dropped entries
	UploadDenied          Code = "upload_denied"                   // the file is outside the owner-named upload directory
	LimitExceeded         Code = "limit_exceeded"                  // a bound was hit (message size, queue, count)
	DialogOpen            Code = "browser_dialog_open"             // a JavaScript dialog blocks the page
	ProfileUnsafe         Code = "browser_profile_unsafe"          // the profile directory is not private
	Timeout               Code = "timeout"                         // a deadline passed before what was waited for happened
)

// Codes lists every refusal code, in the order spec/refusals.md shows them.
var Codes = []Code{
	TransitionRefused, ConsentRequired, ConsentRevoked, EndpointOwnerMismatch,
	BindingStale, WrongTargetRefused, RouteUnavailable, ReconnectExhausted,
	InputIncomplete, RequiresSetup, ElementNotFound, ElementHidden,
	ElementDisabled, ElementAmbiguous, ElementObscured, PageClosed,
	NavigationFailed, InvalidArgument, NotFound, ScopeDenied, PolicyDenied,
	ApprovalInvalid, LeaseHeld, OriginDenied, OutcomeUnknown, AttachmentLost,
	DiagnosticsDiscarded, UploadDenied, LimitExceeded, DialogOpen, ProfileUnsafe,
	Timeout,
}

// codeDocs is the one-line meaning and the caller's next step for each code.
var codeDocs = map[Code][2]string{
	TransitionRefused:     {"No edge for this trigger in this state, or its guard is false.", "Read the state (`webcodex status`) and send a trigger it accepts."},
	ConsentRequired:       {"No live grant covers this browser: a person must approve.", "Run `webcodex approve ID` in a terminal, then retry."},
	ConsentRevoked:        {"The person dismissed the browser's prompt, or the grant was revoked.", "Ask the person; a new approval is needed. Never retried automatically."},
	EndpointOwnerMismatch: {"The debugging endpoint is not owned by the approved browser process.", "Check which browser listens there; attach to it by its profile."},
	BindingStale:          {"The capability was minted in an older connection generation or document.", "Take a new snapshot or list pages again and use the new ids."},
	WrongTargetRefused:    {"The capability names a different target than the one addressed.", "Use the page id the capability was minted for."},
	RouteUnavailable:      {"This route is not available in this build or on this platform.", "Use another mode (launch, attach); see `webcodex status` capabilities."},
	ReconnectExhausted:    {"The reconnect budget (3 attempts, one deadline) is spent.", "Check the browser is running, then attach or launch again."},
	InputIncomplete:       {"Fewer characters reached the field than were requested.", "Read the field back, then type the remainder."},
	RequiresSetup:         {"Something must be installed or configured first.", "Do the step the detail names, then retry."},
	ElementNotFound:       {"No element matches the target.", "Take a snapshot and choose a target that exists."},
	ElementHidden:         {"Elements match, but none is visible.", "Wait for it to become visible, or scroll or open its container."},
	ElementDisabled:       {"The element is disabled.", "Wait for it to be enabled (`wait --enabled`)."},
	ElementAmbiguous:      {"Several visible elements match.", "Narrow the target or pass --index."},
	ElementObscured:       {"Another element covers the click point.", "Close the overlay first."},
	PageClosed:            {"The page (tab) is closed.", "List pages and pick an open one."},
	NavigationFailed:      {"The browser reported a load error.", "Check the URL and the server."},
	InvalidArgument:       {"The request is malformed.", "Fix the argument named in the detail."},
	NotFound:              {"No such browser or page.", "List browsers and pages (`webcodex status`)."},
	ScopeDenied:           {"The session's scopes do not allow this tool.", "Ask the owner to start the server with the scope."},
	PolicyDenied:          {"The CDP command is withheld by the domain policy.", "Use the gated verb for it (navigate, upload, …)."},
	ApprovalInvalid:       {"The approval request is unknown, expired, used or does not match.", "Attach again to get a fresh approval request."},
	LeaseHeld:             {"Another holder has the lease (profile or target).", "Close the other holder, or wait."},
	OriginDenied:          {"The URL's origin is not authorized for this browser.", "The owner can add the origin with --allow."},
	OutcomeUnknown:        {"The effect was dispatched but its acknowledgement was lost; it is never replayed.", "Observe the page to learn whether it happened."},
	AttachmentLost:        {"The browser connection is gone.", "Reconnect or attach again."},
	DiagnosticsDiscarded:  {"Bounded diagnostic queues dropped entries since the last clear.", "Read what remains; clear before claiming quiet."},
	UploadDenied:          {"The file is outside the owner-named upload directory (or none is set), has more than one hard link, or is on another device than that directory.", "The owner sets --upload-dir; pick a plain file inside it."},
	LimitExceeded:         {"A bound was hit (message size, queue, count).", "Ask for less (a cursor, a narrower scope)."},
	DialogOpen:            {"A JavaScript dialog blocks the page.", "Accept or dismiss it first (`webcodex dialog PAGE --accept`)."},
	ProfileUnsafe:         {"A directory that must be private (the state directory or a profile) is not: another owner, a mode other than 0700, another user's symlink, or a parent others may write.", "Fix the directory as the detail says (owned by you, mode 0700; `webcodex doctor` checks the state directory), or choose another profile name."},
	Timeout:               {"The call's deadline passed before what it waited for happened (the detail says what); nothing with an effect was left half-done, or the refusal would be outcome_unknown.", "Check the page or browser (`webcodex status` marks what does not answer), then retry or ask for less."},
}

var codePattern = regexp.MustCompile(`^[a-z_]+$`)

// Valid reports whether c is in the closed set.
func (c Code) Valid() bool {
	_, ok := codeDocs[c]
	return ok
}

// Doc returns the code's one-line meaning.
func (c Code) Doc() string { return codeDocs[c][0] }

// NextStep returns what a caller can do after this refusal.
func (c Code) NextStep() string { return codeDocs[c][1] }

// HTTPStatus is the local API's status for a refusal with this code.
func (c Code) HTTPStatus() int {
	switch c {
	case NotFound, PageClosed, ElementNotFound:
		return 404
	case InvalidArgument:
		return 400
	case LeaseHeld, BindingStale, DialogOpen, ElementAmbiguous, ElementHidden, ElementDisabled, ElementObscured, WrongTargetRefused:
		return 409
	case ConsentRequired, ConsentRevoked, ScopeDenied, PolicyDenied, OriginDenied, UploadDenied, ApprovalInvalid, EndpointOwnerMismatch, ProfileUnsafe:
		return 403
	case RouteUnavailable, RequiresSetup:
		return 501
	case LimitExceeded:
		return 413
	case Timeout:
		return 504
	}
	return 422
}

// CLIExit is the webcodex CLI's exit status for a refusal with this code:
// 2 (usage) for a malformed request, which is the caller's mistake; 1
// (failure) for a navigation the network or the server failed, which is
// something breaking rather than policy; 3 (refused) for every other code.
func (c Code) CLIExit() int {
	switch c {
	case InvalidArgument:
		return 2
	case NavigationFailed:
		return 1
	}
	return 3
}

// MarshalText implements encoding.TextMarshaler; an unknown code fails.
func (c Code) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("fsm: unknown refusal code %q", string(c))
	}
	return []byte(c), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown codes fail to
// decode, so the set stays closed across process boundaries.
func (c *Code) UnmarshalText(b []byte) error {
	v := Code(b)
	if !v.Valid() {
		return fmt.Errorf("fsm: unknown refusal code %q", string(b))
	}
	*c = v
	return nil
}

// Refusal is policy saying no. It is returned, never panicked. Detail is safe
// to show an agent: it never holds paths, ports, tokens, URLs of the endpoint
// or page text. The wrapped error is internal and never crosses the wire.
type Refusal struct {
	Code   Code   `json:"code"`
	Detail string `json:"detail,omitempty"`
	Next   string `json:"next,omitempty"`
	// ApprovalID names the approval request a person answers, when Code is
	// browser_consent_required and a request is waiting.
	ApprovalID string `json:"approvalId,omitempty"`
	// Browser and Page name the browser or page the refused call was
	// about, when it named one.
	Browser string `json:"browser,omitempty"`
	Page    string `json:"page,omitempty"`
	err     error
}

// Refuse returns a refusal with code and a safe detail.
func Refuse(code Code, detail string) *Refusal {
	return &Refusal{Code: code, Detail: detail, Next: code.NextStep()}
}

// Refusef is Refuse with a formatted detail. Only pass values that are safe to
// show an agent.
func Refusef(code Code, format string, args ...any) *Refusal {
	return Refuse(code, fmt.Sprintf(format, args...))
}

// WithCause attaches an internal cause that stays in this process.
func (r *Refusal) WithCause(err error) *Refusal {
	r.err = err
	return r
}

func (r *Refusal) Error() string {
	if r.Detail == "" {
		return string(r.Code)
	}
	return string(r.Code) + ": " + r.Detail
}

// Unwrap returns the internal cause, if any.
func (r *Refusal) Unwrap() error { return r.err }

// AsRefusal returns the refusal in err's chain, if there is one.
func AsRefusal(err error) (*Refusal, bool) {
	return errors.AsType[*Refusal](err)
}

// IsCode reports whether err carries a refusal with code c.
func IsCode(err error, c Code) bool {
	r, ok := AsRefusal(err)
	return ok && r.Code == c
}

package localapi

import (
	"encoding/json"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/op"
)

// The wire types of the local API. Fields are only ever added; their JSON
// names are the stable `--json` output of the CLI.

// The JSON convention of the local API and of every `--json` output (the
// README states it for users): keys are camelCase; a page id is always
// "page" and a browser id always "browser", in requests and results alike;
// every result is one JSON object at the top level (a list sits under a
// named key); values from a closed set (modes, states, refusal codes,
// capability names) are snake_case strings; times are RFC 3339; durations
// are integers with their unit in the key (elapsedMs).

// Modes of a Browser.
const (
	ModeEphemeral = "owned_ephemeral"
	ModeManaged   = "owned_managed_persistent"
	ModeAttached  = "attached_external"
)

// LaunchRequest starts a browser webcodex owns.
type LaunchRequest struct {
	Managed  string   `json:"managed,omitempty"`  // profile name; empty = ephemeral
	Headless *bool    `json:"headless,omitempty"` // nil: ephemeral headless, managed visible
	Allow    []string `json:"allow,omitempty"`    // origin allowlist for this browser
	// Keep asks that the browser outlive the MCP session launching it:
	// when the session ends it is released (adoptable by id), not closed.
	Keep bool `json:"keep,omitempty"`
}

// BrowserInfo is op.BrowserInfo.
type BrowserInfo = op.BrowserInfo

// EndSessionResult is op.EndSessionResult.
type EndSessionResult = op.EndSessionResult

// PageInfo is op.PageInfo.
type PageInfo = op.PageInfo

// Status is op.RunnerStatus.
type Status = op.RunnerStatus

// RunnerInfo is op.RunnerInfo.
type RunnerInfo = op.RunnerInfo

// Availability is op.Availability.
type Availability = op.Availability

// Sandbox is op.Sandbox.
type Sandbox = op.Sandbox

// PingResult is op.PingResult.
type PingResult = op.PingResult

// StopResult is op.StopResult.
type StopResult = op.StopResult

// PagesResult lists a browser's pages.
type PagesResult struct {
	Browser string     `json:"browser"`
	Pages   []PageInfo `json:"pages"`
}

// BrowserRequest names a browser.
type BrowserRequest struct {
	Browser string `json:"browser"`
}

// OpenRequest opens a new page.
type OpenRequest struct {
	Browser string `json:"browser"`
	URL     string `json:"url,omitempty"`
}

// PageRequest names a page.
type PageRequest struct {
	Page string `json:"page"`
}

// NavResult is the page after a navigation (op.NavResult).
type NavResult = op.NavResult

// EvalResult is a bounded JSON value (op.EvalResult).
type EvalResult = op.EvalResult

// ReadResult is bounded visible text (op.ReadResult).
type ReadResult = op.ReadResult

// ScreenshotResult is a PNG (op.ScreenshotResult).
type ScreenshotResult = op.ScreenshotResult

// CloseResult reports a browser's teardown.
type CloseResult struct {
	Browser  string `json:"browser"`
	Mode     string `json:"mode"`
	Teardown string `json:"teardown"` // "closed" or "detached"
	// AuditHead is the audit trail's head hash after the close record.
	AuditHead string `json:"auditHead,omitempty"`
}

// Target is op.Target.
type Target = op.Target

// AttachRequest attaches to a person's running browser.
type AttachRequest struct {
	ProfileDir    string   `json:"profileDir,omitempty"` // read its DevToolsActivePort
	Endpoint      string   `json:"endpoint,omitempty"`   // 127.0.0.1:PORT (loopback only)
	Allow         []string `json:"allow,omitempty"`      // origin allowlist; empty = nothing
	AllowEvaluate bool     `json:"allowEvaluate,omitempty"`
	// PressPrompt asks that webcodex press the browser's own "Allow remote
	// debugging?" prompt for the person (Linux: over AT-SPI); the approval
	// shows it, and only a grant that says so lets the Runner press.
	PressPrompt bool   `json:"pressPrompt,omitempty"`
	Request     string `json:"request,omitempty"` // approval request id, when the caller names one
	// Scopes are the caller's scopes (an MCP server's --scopes); nil is
	// every scope (the CLI). They are part of what the person approves.
	// The session a grant is bound to is never a field: the Runner derives
	// it from who is calling.
	Scopes []string `json:"scopes"`
}

// AttachResult reports a live attachment. It never holds a grant id,
// profile identity, generation secret, port or URL.
type AttachResult struct {
	Browser                 BrowserInfo     `json:"browser"`
	Product                 string          `json:"product"`
	CapabilitiesInvalidated bool            `json:"capabilitiesInvalidated"`
	NextAction              string          `json:"nextAction"`
	EndpointOwnership       string          `json:"endpointOwnership"`
	SideEffects             map[string]bool `json:"sideEffects"`
}

// ApprovalRequest names an approval request. On the approval route,
// Challenge asks the Runner to check the calling terminal and choose the
// factor the answer needs; approve and deny carry the Code the person typed
// or their login Password (checked by the Runner, never stored, logged or
// audited).
type ApprovalRequest struct {
	ID        string `json:"id"`
	Challenge bool   `json:"challenge,omitempty"`
	Code      string `json:"code,omitempty"`
	Password  string `json:"password,omitempty"`
}

// Second factors an approval can have.
const (
	SecondFactorPassword = "login_password"       // the person's own login password, checked as pam_unix checks it
	SecondFactorDesktop  = "desktop_notification" // a one-time code shown through the desktop's notifications
	SecondFactorNone     = "none"                 // no password and no graphical session: the terminal confirmation alone
)

// ApprovalSummary is what `webcodex approve` shows the person.
type ApprovalSummary struct {
	ID      string    `json:"id"`
	Summary string    `json:"summary"`
	Expires time.Time `json:"expires"`
	// SecondFactor, on a challenge, says what the answer needs: the login
	// password of Account, the one-time code from the desktop notification,
	// or nothing more than the terminal's answer.
	SecondFactor string `json:"secondFactor,omitempty"`
	Account      string `json:"account,omitempty"`
	// NoPassword, when the factor is not the password, says why (the
	// login's password is locked, or the system would not say).
	NoPassword string `json:"noPassword,omitempty"`
}

// ReconnectResult reports a reconnect.
type ReconnectResult struct {
	Browser                 string `json:"browser"`
	Generation              uint64 `json:"generation"`
	CapabilitiesInvalidated bool   `json:"capabilitiesInvalidated"`
	Attempts                int    `json:"attempts"`
}

// ClosePageRequest closes a page webcodex opened.
type ClosePageRequest struct {
	Page string `json:"page"`
}

// CDPRequest sends one raw Chrome DevTools Protocol command to a page's own
// session, after the CDP domain policy and the origin gate. Params, when
// set, is a JSON object.
type CDPRequest struct {
	Page   string          `json:"page"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// IdempotencyKey: as op.Keyed's.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// DiscoverResult is op.DiscoverResult.
type DiscoverResult = op.DiscoverResult

// LaunchAvailability is op.LaunchAvailability.
type LaunchAvailability = op.LaunchAvailability

// AttachCandidate is op.AttachCandidate.
type AttachCandidate = op.AttachCandidate

// The results of the page-surface routes: the surface's own result under
// the page's id, which comes first as in every page verb's result.

// SnapshotResult is one chunk of a page outline (op.SnapshotResult).
type SnapshotResult = op.SnapshotResult

// ActResult is op.ActResult.
type ActResult = op.ActResult

// DialogResult is the page's dialog (op.DialogResult).
type DialogResult = op.DialogResult

// WaitResult is the outcome of a wait; a timeout is found: false
// (op.WaitResult).
type WaitResult = op.WaitResult

// DiagResult is one bounded read of the console or network log
// DiagResult is op.DiagResult.
type DiagResult = op.DiagResult

// ProbeResult is op.ProbeResult.
type ProbeResult = op.ProbeResult

// ClosePageResult reports a closed page.
type ClosePageResult struct {
	Page   string `json:"page"`
	Closed bool   `json:"closed"`
}

// ApprovalAnswer reports a person's answer recorded from a terminal.
type ApprovalAnswer struct {
	Approved bool `json:"approved,omitempty"`
	Denied   bool `json:"denied,omitempty"`
}

// CDPResult is a raw CDP command's result: a JSON object, bounded.
type CDPResult struct {
	Page   string          `json:"page"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

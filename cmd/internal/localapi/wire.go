package localapi

import (
	"encoding/json"
	"time"
)

// The wire types of the local API. Fields are only ever added; their JSON
// names are the stable `--json` output of the CLI.

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

// BrowserInfo describes one browser. It never holds ports, URLs or paths.
type BrowserInfo struct {
	ID         string     `json:"id"`
	Mode       string     `json:"mode"`
	Profile    string     `json:"profile,omitempty"` // managed profile name
	State      string     `json:"state"`
	Generation uint64     `json:"generation"`
	Headless   bool       `json:"headless"`
	Pages      []PageInfo `json:"pages"`
	// Attached browsers only.
	GrantExpires *time.Time `json:"grant_expires,omitempty"`
	AttemptsLeft *int       `json:"reconnect_attempts_left,omitempty"`
	// Session is the MCP session that owns the browser, if any.
	Session string `json:"session,omitempty"`
	// Unresponsive: the browser did not answer within the status bound;
	// its pages show what was last known of them.
	Unresponsive bool `json:"unresponsive,omitempty"`
	// LostReason says why a lost browser was lost: crashed (it exited on
	// its own) or connection_lost. It stays listed until closed.
	LostReason string `json:"lostReason,omitempty"`
}

// EndSessionResult reports the end of an MCP session.
type EndSessionResult struct {
	Ended int `json:"ended"` // browsers closed or detached
}

// PageInfo describes one page.
type PageInfo struct {
	ID      string `json:"id"`
	Browser string `json:"browser"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	// Unresponsive: the browser did not answer for this page within the
	// status bound; URL and title are what was last known.
	Unresponsive bool `json:"unresponsive,omitempty"`
}

// Status is the Runner's state.
type Status struct {
	Runner       RunnerInfo      `json:"runner"`
	Browsers     []BrowserInfo   `json:"browsers"`
	Capabilities map[string]bool `json:"capabilities"`
}

// RunnerInfo describes the Runner process.
type RunnerInfo struct {
	Version string    `json:"version"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
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

// GotoRequest navigates a page.
type GotoRequest struct {
	Page string `json:"page"`
	URL  string `json:"url"`
}

// NavResult is the page after a navigation, read live from the page.
type NavResult struct {
	Page  string `json:"page"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Loading: the document committed but had not loaded by the call's
	// bound (a huge page); URL and title are what the browser knew then.
	Loading bool `json:"loading,omitempty"`
}

// ReadRequest reads a page's visible text.
type ReadRequest struct {
	Page     string `json:"page"`
	MaxChars int    `json:"max_chars,omitempty"`
}

// ReadResult is bounded visible text.
type ReadResult struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Chars     int    `json:"total_chars"`
}

// ScreenshotRequest captures a page.
type ScreenshotRequest struct {
	Page     string  `json:"page"`
	FullPage bool    `json:"full_page,omitempty"`
	Target   *Target `json:"target,omitempty"`
}

// ScreenshotResult is a PNG.
type ScreenshotResult struct {
	PNG    []byte `json:"png"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// EvalRequest evaluates an expression in the page.
type EvalRequest struct {
	Page string `json:"page"`
	Expr string `json:"expr"`
}

// EvalResult is a bounded JSON value.
type EvalResult struct {
	Value     any  `json:"value"`
	Truncated bool `json:"truncated"`
}

// CloseResult reports a browser's teardown.
type CloseResult struct {
	Browser  string `json:"browser"`
	Mode     string `json:"mode"`
	Teardown string `json:"teardown"` // "closed" or "detached"
}

// Target is a semantic element target.
type Target struct {
	Ref         string `json:"ref,omitempty"`
	SnapshotID  string `json:"snapshot_id,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"test_id,omitempty"`
	CSS         string `json:"css,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

// AttachRequest attaches to a person's running browser.
type AttachRequest struct {
	ProfileDir    string   `json:"profile_dir,omitempty"` // read its DevToolsActivePort
	Endpoint      string   `json:"endpoint,omitempty"`    // 127.0.0.1:PORT (loopback only)
	Allow         []string `json:"allow,omitempty"`       // origin allowlist; empty = nothing
	AllowEvaluate bool     `json:"allow_evaluate,omitempty"`
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
	CapabilitiesInvalidated bool            `json:"capabilities_invalidated"`
	NextAction              string          `json:"next_action"`
	EndpointOwnership       string          `json:"endpoint_ownership"`
	SideEffects             map[string]bool `json:"side_effects"`
}

// ApprovalRequest names an approval request. On the approval route,
// Challenge asks the Runner to check the calling terminal and show the
// one-time code through the desktop; approve and deny carry the Code the
// person typed.
type ApprovalRequest struct {
	ID        string `json:"id"`
	Challenge bool   `json:"challenge,omitempty"`
	Code      string `json:"code,omitempty"`
}

// Second factors an approval can have.
const (
	SecondFactorDesktop = "desktop_notification" // a one-time code shown through the desktop's notifications
	SecondFactorNone    = "none"                 // no graphical session: the terminal confirmation alone
)

// ApprovalSummary is what `webcodex approve` shows the person.
type ApprovalSummary struct {
	ID      string    `json:"id"`
	Summary string    `json:"summary"`
	Expires time.Time `json:"expires"`
	// SecondFactor, on a challenge, says whether the answer needs the
	// one-time code from the desktop notification.
	SecondFactor string `json:"second_factor,omitempty"`
}

// ReconnectResult reports a reconnect.
type ReconnectResult struct {
	Browser                 string `json:"browser"`
	Generation              uint64 `json:"generation"`
	CapabilitiesInvalidated bool   `json:"capabilities_invalidated"`
	Attempts                int    `json:"attempts"`
}

// SnapshotRequest takes a page outline (or its next chunk with Cursor).
type SnapshotRequest struct {
	Page        string  `json:"page"`
	Scope       *Target `json:"scope,omitempty"`
	Interactive bool    `json:"interactive,omitempty"`
	Since       string  `json:"since,omitempty"`
	MaxChars    int     `json:"max_chars,omitempty"`
	Cursor      string  `json:"cursor,omitempty"`
}

// ActRequest is one page action: click, hover, type, fill, press, select,
// check, uncheck, scroll, upload or dialog.
type ActRequest struct {
	Page   string   `json:"page"`
	Action string   `json:"action"`
	Target *Target  `json:"target,omitempty"`
	Text   string   `json:"text,omitempty"`   // type, fill; dialog prompt text
	Keys   string   `json:"keys,omitempty"`   // press: "Enter", "ArrowDown", "Control+a"
	Values []string `json:"values,omitempty"` // select: values or visible labels
	Files  []string `json:"files,omitempty"`  // upload: names inside the upload directory
	To     string   `json:"to,omitempty"`     // scroll: top or bottom
	DX     float64  `json:"dx,omitempty"`     // scroll by pixels
	DY     float64  `json:"dy,omitempty"`
	Accept *bool    `json:"accept,omitempty"` // dialog: accept (true) or dismiss
}

// WaitRequest waits for a condition: load, url, text, text_gone, visible,
// hidden or enabled. A timeout is a result (found: false).
type WaitRequest struct {
	Page        string  `json:"page"`
	Condition   string  `json:"condition"`
	Text        string  `json:"text,omitempty"`
	Target      *Target `json:"target,omitempty"`
	URL         string  `json:"url,omitempty"`
	URLIncludes string  `json:"url_includes,omitempty"`
	TimeoutMS   int     `json:"timeout_ms,omitempty"`
}

// DiagRequest reads console messages or network requests.
type DiagRequest struct {
	Page       string `json:"page"`
	Since      uint64 `json:"since,omitempty"`
	ErrorsOnly bool   `json:"errors_only,omitempty"`
	Clear      bool   `json:"clear,omitempty"`
}

// ProbeRequest performs one action and reports its effect.
type ProbeRequest struct {
	ActRequest
	SettleMS int `json:"settle_ms,omitempty"`
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
}

// DiscoverResult says, honestly, what can be launched and attached on this
// machine. It never holds paths, ports or URLs.
type DiscoverResult struct {
	Launch          LaunchAvailability `json:"launch"`
	ManagedProfiles []string           `json:"managed_profiles"`
	Attach          []AttachCandidate  `json:"attach_candidates"`
	// ExtensionBridge reports whether attaching through the extension bridge
	// is available in this build.
	ExtensionBridge bool `json:"extension_bridge"`
}

// LaunchAvailability says whether an owned browser can be launched.
type LaunchAvailability struct {
	Available bool   `json:"available"`
	Product   string `json:"product,omitempty"` // chromium, chrome, edge
	Visible   bool   `json:"visible"`           // a display is present for a visible (headed) browser
	Reason    string `json:"reason,omitempty"`  // why not, and what to do
}

// AttachCandidate is a browser profile of this user that webcodex could
// attach to, named by a stable label rather than its path.
type AttachCandidate struct {
	Name    string `json:"name"`    // e.g. "google-chrome", "chromium"
	Product string `json:"product"` // chrome, chromium, edge
	// State is not_running, debugging_off or ready.
	State string `json:"state"`
	Next  string `json:"next"` // what the person or agent does next
}

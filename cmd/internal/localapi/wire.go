package localapi

import "time"

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
}

// PageInfo describes one page.
type PageInfo struct {
	ID      string `json:"id"`
	Browser string `json:"browser"`
	URL     string `json:"url"`
	Title   string `json:"title"`
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

package op

import "time"

// The wire types of the operations addressed to a browser or to the
// Runner (browser_ops.go). localapi keeps their old names as aliases.

// PingResult is the answer to ping: the Runner answers, and with what
// environment it was started.
type PingResult struct {
	OK bool `json:"ok"`
	// Version is the Runner's version (cmdutil.Version): a CLI of another
	// version warns that it talks to an older or newer Runner.
	Version string            `json:"version,omitempty"`
	Env     map[string]string `json:"env"`
	Sandbox *Sandbox          `json:"sandbox,omitempty"`
}

// Sandbox is whether owned browsers run sandboxed.
type Sandbox struct {
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason"` // why not; empty when enabled
}

// RunnerStatus is the Runner's state.
type RunnerStatus struct {
	Running      bool            `json:"running"` // the CLI says false, with no Runner field, when none runs
	Runner       RunnerInfo      `json:"runner"`
	Browsers     []BrowserInfo   `json:"browsers"`
	Capabilities map[string]bool `json:"capabilities"`
}

// RunnerInfo describes the Runner process.
type RunnerInfo struct {
	Version string    `json:"version"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Sandbox says whether owned browsers run with Chromium's sandbox, and
	// when not, why.
	Sandbox Sandbox `json:"sandbox"`
	// IdleExitMs is how long the Runner waits with no browser, no approval
	// pending and no client connected before it exits; 0 never.
	IdleExitMs int64 `json:"idleExitMs"`
	// PromptPress says whether this desktop session could let webcodex
	// press the browser's own consent prompt for a person who allows it
	// (attach --press-prompt), and when not, why.
	PromptPress Availability `json:"promptPress"`
	// Env fingerprints the environment variables the Runner reads (see
	// localapi.EnvFingerprint): a client compares it with its own to learn that
	// the Runner was started with a different environment.
	Env map[string]string `json:"env"`
}

// Availability is whether something is supported here, and why not.
type Availability struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"` // why not, when not
}

// BrowserInfo describes one browser. It never holds ports, URLs or paths.
type BrowserInfo struct {
	ID         string     `json:"browser"`
	Mode       string     `json:"mode"`
	Profile    string     `json:"profile,omitempty"` // managed profile name
	State      string     `json:"state"`
	Generation uint64     `json:"generation"`
	Headless   bool       `json:"headless"`
	Pages      []PageInfo `json:"pages"`
	// Attached browsers only.
	GrantExpires *time.Time `json:"grantExpires,omitempty"`
	AttemptsLeft *int       `json:"reconnectAttemptsLeft,omitempty"`
	// Session is the MCP session that owns the browser, if any.
	Session string `json:"session,omitempty"`
	// Unresponsive: the browser did not answer within the status bound;
	// its pages show what was last known of them.
	Unresponsive bool `json:"unresponsive,omitempty"`
	// LostReason says why a lost browser was lost: crashed (it exited on
	// its own) or connection_lost. It stays listed until closed.
	LostReason string `json:"lostReason,omitempty"`
	// Via is "extension" for a tab shared from the webcodex extension.
	Via string `json:"via,omitempty"`
}

// PageInfo describes one page.
type PageInfo struct {
	ID      string `json:"page"`
	Browser string `json:"browser"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	// Unresponsive: the browser did not answer for this page within the
	// status bound; URL and title are what was last known.
	Unresponsive bool `json:"unresponsive,omitempty"`
}

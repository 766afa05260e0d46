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

// EndSessionResult reports the end of an MCP session.
type EndSessionResult struct {
	Ended int `json:"ended"` // browsers closed or detached
}

// StopResult reports a stop: the Runner closed its owned browsers and
// detached from attached ones before answering.
type StopResult struct {
	Stopped        bool `json:"stopped"`        // false: no Runner was running
	BrowsersClosed int  `json:"browsersClosed"` // owned browsers closed, attached ones detached
	// AuditHead is the audit trail's head hash after the stop: `webcodex
	// audit verify --head` finds a later cut against it.
	AuditHead string `json:"auditHead,omitempty"`
}

// DiscoverResult says, honestly, what can be launched and attached on this
// machine. It never holds paths, ports or URLs.
type DiscoverResult struct {
	Launch          LaunchAvailability `json:"launch"`
	ManagedProfiles []string           `json:"managedProfiles"`
	Attach          []AttachCandidate  `json:"attachCandidates"`
	// ExtensionBridge reports whether attaching through the extension bridge
	// is available: installed, and this Runner listens for it.
	ExtensionBridge bool `json:"extensionBridge"`
	// Offers are the tabs people shared from the extension, waiting to be
	// attached (attach --offer ID).
	Offers []BridgeOffer `json:"offers"`
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

// BridgeOffer is a shared tab waiting to be attached. Origin and Title are
// set only when the caller's allowlist allows the tab's URL; the id alone
// is always listed.
type BridgeOffer struct {
	ID      string    `json:"offer"`
	Origin  string    `json:"origin,omitempty"`
	Title   string    `json:"title,omitempty"`
	Expires time.Time `json:"expires"`
}

// BridgeState reports the extension bridge: counts only, never a token,
// port or URL.
type BridgeState struct {
	Installed bool `json:"installed"`
	Listening bool `json:"listening"`
	Peers     int  `json:"peers"`     // native-host connections, unverified included
	Connected int  `json:"connected"` // authenticated native hosts
	Offers    int  `json:"offers"`    // shared tabs waiting
	Attached  int  `json:"attached"`  // shared tabs attached
	// Why says why no native host is connected, when none is: from the
	// host's own record of its last start, and the installed manifest.
	Why  string `json:"why,omitempty"`
	Next string `json:"next,omitempty"`
}

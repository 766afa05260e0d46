package op

// The reads of a page: they change nothing, so they are not effects and
// not audited.

// ConsoleIn reads a page's console messages and exceptions.
type ConsoleIn struct {
	OnPage
	Since      uint64 `json:"since,omitempty" flag:"since" usage:"only entries after this cursor"`
	ErrorsOnly bool   `json:"errorsOnly,omitempty" flag:"errors" usage:"errors only"`
	Clear      bool   `json:"clear,omitempty" flag:"clear" usage:"clear the log after reading (resets the discarded marker)"`
	// SinceNavigation reads only what was logged since the page's last
	// main-document navigation.
	SinceNavigation bool `json:"sinceNavigation,omitempty"`
}

// NetworkIn reads a page's network requests.
type NetworkIn struct {
	OnPage
	Since      uint64 `json:"since,omitempty" flag:"since" usage:"only entries after this cursor"`
	ErrorsOnly bool   `json:"errorsOnly,omitempty" flag:"errors" usage:"errors only"`
	Clear      bool   `json:"clear,omitempty" flag:"clear" usage:"clear the log after reading (resets the discarded marker)"`
}

// DiagResult is one bounded read of the console or network log.
type DiagResult struct {
	Page string `json:"page"`
	DiagRead
}

// The diagnostics reads.
var (
	Console = declare[ConsoleIn, DiagResult](Meta{Name: "console", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_console_messages", Desc: "The page's console messages and exceptions since its last navigation, bounded."}},
		CLI: &Verb{Name: "console", Use: "console PAGE", Short: "Read console messages and JS exceptions (bounded, --since cursor)"}})
	Network = declare[NetworkIn, DiagResult](Meta{Name: "network", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_network_requests", Desc: "The page's requests (method, url, status, failure), bounded; loaded static resources only with static."}},
		CLI: &Verb{Name: "network", Use: "network PAGE", Short: "Read network requests (bounded, --since cursor)"}})
)

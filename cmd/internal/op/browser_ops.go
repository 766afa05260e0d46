package op

// The operations addressed to a browser or to the Runner itself rather
// than to a page: each declared once, like a page's, with what it is
// addressed to (Admit) read from its input's typed fields. An operation
// addressed to nothing takes struct{}.

// The Runner's own operations.
var (
	Ping = declare[struct{}, PingResult](Meta{Name: "ping", Scope: Read, Admit: AdmitNothing, Bound: CallBound, Audit: NotAudited, Reveals: RevealsNothing})
	// Status lists only the browsers the client may see.
	Status = declare[struct{}, RunnerStatus](Meta{Name: "status", Scope: Read, Admit: AdmitNothing, Bound: StatusBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_status", ClosedWorld: true, Desc: "Browsers, tabs, the current ones, this server's scopes and settings, and capabilities."}},
		CLI: &Verb{Name: "status", Use: "status", Short: "Show the Runner, its browsers and their pages (never starts a Runner)"}})
)

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

// What can be reached here, and the Runner's and a session's end.
var (
	Discover = declare[struct{}, DiscoverResult](Meta{Name: "discover", Scope: Read, Admit: AdmitNothing, Bound: CallBound, Audit: NotAudited, Reveals: RevealsNothing,
		MCP: []Tool{{Name: "browser_discover", ClosedWorld: true, Desc: "What can be launched or attached here: managed profiles, installed browsers with their next step, shared tabs."}},
		CLI: &Verb{Name: "discover", Use: "discover", Short: "What can be launched or attached here, and the tabs shared from the extension (attach --offer ID)"}})
	// BridgeStatus's verb is `webcodex bridge status`, a verb of the bridge
	// group.
	BridgeStatus = declare[struct{}, BridgeState](Meta{Name: "bridge_status", Scope: Read, Admit: AdmitNothing, Bound: CallBound, Audit: NotAudited, Reveals: RevealsNothing})
	// EndSession ends the calling MCP session: its browsers are closed or
	// detached (or released, when kept).
	EndSession = declare[struct{}, EndSessionResult](Meta{Name: "end_session", Scope: Read, Admit: AdmitNothing, Changes: true, Bound: ShutdownBound, Audit: NotAudited, Reveals: RevealsNothing})
	Stop       = declare[struct{}, StopResult](Meta{Name: "stop", Scope: Launch, Admit: AdmitNothing, Changes: true, Bound: ShutdownBound, Audit: AuditRecorded, Reveals: RevealsNothing,
		CLI: &Verb{Name: "stop", Use: "stop", Short: "Stop the background Runner; returns after owned browsers have closed"}})
)

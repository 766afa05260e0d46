package lifetime

import "github.com/webcodex/webcodex/fsm"

// RawState is a state of a page's raw CDP session.
type RawState string

// Raw CDP session states. Their exits are rendered from the declared edges (spec/).
const (
	RawUnused    RawState = "unused"    // no raw command yet.
	RawWatching  RawState = "watching"  // the commit watcher is subscribed.
	RawAttaching RawState = "attaching" // Target.attachToTarget in flight.
	RawAttached  RawState = "attached"  // a raw session for one document.
	RawDetached  RawState = "detached"  // no raw session; the watcher runs.
	RawClosed    RawState = "closed"    // the page or its browser is gone.
)

// RawTrigger is an event in a raw CDP session's life.
type RawTrigger string

// Raw CDP session triggers.
const (
	RawCommand      RawTrigger = "command"       // a raw command needs a session
	RawAttach       RawTrigger = "attach"        // the watcher runs: attach now
	RawAttachedOK   RawTrigger = "attached"      // the browser gave a session
	RawAttachFailed RawTrigger = "attach_failed" // it did not
	RawCommitted    RawTrigger = "committed"     // the main frame committed another document
	RawDropped      RawTrigger = "dropped"       // the browser ended the session itself
	RawClose        RawTrigger = "close"         // the page or its browser is gone
)

// Raw CDP session effects.
const (
	// EffectWatchCommits subscribes to the surface session's main-frame
	// commits before the first attach, so no commit after it goes unseen.
	EffectWatchCommits fsm.Effect = "watch_commits"
	// EffectAttachRaw attaches a flattened session of raw CDP's own.
	EffectAttachRaw fsm.Effect = "attach_raw_session"
	// EffectDetachRaw detaches it: Chrome drops everything the session set
	// up (overrides, headers, scripts for new documents, domains).
	EffectDetachRaw fsm.Effect = "detach_raw_session"
)

type rawEdge = fsm.Edge[RawState, RawTrigger, struct{}]

// RawSessionSpec is the life of raw CDP's own session on one page: never
// the page surface's session, and never carried into another document.
var RawSessionSpec = (&fsm.Spec[RawState, RawTrigger, struct{}]{
	Name:  "raw_cdp_session",
	Title: "Raw CDP session (one page)",
	Guards: "Raw CDP's own flattened session on one page, attached lazily by the first raw command and never the page " +
		"surface's, so a raw command cannot reconfigure the domains the surface relies on. A commit of another main-frame " +
		"document detaches it (at once, by the commit watcher, and in any case before the next command, which finds its " +
		"document replaced): what a raw command set up in one document never survives into a document committed after " +
		"the next one. Each attach and each reset has its own counter, so no attach or detach is dispatched twice under one key. Closing the page or its browser ends it.",
	Initial: RawUnused,
	States: []fsm.StateDoc[RawState]{
		fsm.Doc(RawUnused, "No raw command has run on the page; nothing is subscribed or attached."),
		fsm.Doc(RawWatching, "The watcher of the page's main-frame commits is subscribed; nothing is attached yet."),
		fsm.Doc(RawAttaching, "Target.attachToTarget is in flight for the authorized document."),
		fsm.Doc(RawAttached, "A raw session attached in one document; commands run on it."),
		fsm.Doc(RawDetached, "No raw session (reset by a commit, dropped by the browser, or its attach failed); the commit watcher still runs."),
		fsm.Doc(RawClosed, "The page or its browser is gone; nothing of the raw session remains."),
	},
	Triggers: []RawTrigger{RawCommand, RawAttach, RawAttachedOK, RawAttachFailed, RawCommitted, RawDropped, RawClose},
	Edges: []rawEdge{
		{From: RawUnused, On: RawCommand, To: RawWatching, Effect: EffectWatchCommits},
		{From: RawUnused, On: RawClose, To: RawClosed},
		{From: RawWatching, On: RawAttach, To: RawAttaching, Effect: EffectAttachRaw, Count: "attaches"},
		{From: RawWatching, On: RawClose, To: RawClosed},
		{From: RawDetached, On: RawCommand, To: RawAttaching, Effect: EffectAttachRaw, Count: "attaches"},
		{From: RawAttaching, On: RawAttachedOK, To: RawAttached},
		{From: RawAttaching, On: RawAttachFailed, To: RawDetached},
		{From: RawAttached, On: RawCommitted, To: RawDetached, Effect: EffectDetachRaw, Count: "resets"},
		{From: RawAttached, On: RawDropped, To: RawDetached},
		{From: RawAttached, On: RawClose, To: RawClosed},
		{From: RawDetached, On: RawClose, To: RawClosed},
	},
	Effects:      []fsm.Effect{EffectWatchCommits, EffectAttachRaw, EffectDetachRaw},
	Stable:       []RawState{RawUnused, RawAttached, RawDetached},
	Terminal:     []RawState{RawClosed},
	MaxTransient: 2,
}).MustValidate()

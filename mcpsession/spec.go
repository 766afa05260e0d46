// Package mcpsession declares the life of one MCP session: a `webcodex mcp`
// server from the moment it is built until its end has run. The server
// (package mcp) owns the machine; this package is the declaration alone,
// so spec/ renders it without linking the Runner.
package mcpsession

import "github.com/webcodex/webcodex/fsm"

// State is a state of an MCP session.
type State string

// Session states. Their exits are rendered from the declared edges (spec/).
const (
	Open    State = "open"    // built, its tools registered; not serving yet.
	Serving State = "serving" // serving one client over its transport.
	Closing State = "closing" // the client went or the process was signalled: the end runs.
	Closed  State = "closed"  // ended: nothing of the session is left running.
)

// Trigger is an event in an MCP session.
type Trigger string

// Session triggers.
const (
	Serve Trigger = "serve" // Run was called with a transport
	End   Trigger = "end"   // the client closed the transport, a signal arrived, or the server is dropped unserved
	Ended Trigger = "ended" // every step of the end ran
)

// EffectEndSession runs the session's end, each step once, newest first:
// the browsers it launched close (unless kept) and those it attached
// detach — on a shared Runner by ending the session there, on an embedded
// one by shutting it down — and its approval socket closes.
const EffectEndSession fsm.Effect = "end_session"

// Spec is the life of an MCP session. A session serves one client once: a
// second Run is refused, and an ended session never serves again.
var Spec = (&fsm.Spec[State, Trigger, struct{}]{
	Name:  "mcp_session",
	Title: "MCP session (one webcodex mcp server)",
	Guards: "One MCP server and the client it serves. It serves one transport once; when the client closes it (stdin) " +
		"or the process is signalled, the session's end runs exactly once: the browsers it launched are closed unless it " +
		"asked to keep them, those it attached are detached, and its approval socket is removed. A server built and never " +
		"served ends the same way. Nothing serves again after the end.",
	Initial: Open,
	States: []fsm.StateDoc[State]{
		fsm.Doc(Open, "Built, tools registered; not serving yet."),
		fsm.Doc(Serving, "Serving one client over its transport."),
		fsm.Doc(Closing, "The client went or a signal arrived: the session's end runs."),
		fsm.Doc(Closed, "Ended: its browsers are closed or detached, its sockets gone."),
	},
	Triggers: []Trigger{Serve, End, Ended},
	Edges: []fsm.Edge[State, Trigger, struct{}]{
		{From: Open, On: Serve, To: Serving},
		{From: Open, On: End, To: Closing, Effect: EffectEndSession},
		{From: Serving, On: End, To: Closing, Effect: EffectEndSession},
		{From: Closing, On: Ended, To: Closed},
	},
	Effects:      []fsm.Effect{EffectEndSession},
	Stable:       []State{Open, Serving},
	Terminal:     []State{Closed},
	MaxTransient: 1,
}).MustValidate()

package bridge

import "github.com/webcodex/webcodex/fsm"

// ListenerState is a state of the bridge's listener (one [Server]).
type ListenerState string

// Listener states. Their exits are rendered from the declared edges (spec/).
const (
	ListenerListening ListenerState = "listening" // accepting native hosts; offers and attaches are served.
	ListenerClosing   ListenerState = "closing"   // the Runner shuts the bridge: peers close, the record goes.
	ListenerClosed    ListenerState = "closed"    // nothing listens; every peer, offer and route is gone.
)

// ListenerTrigger is an event on the bridge's listener.
type ListenerTrigger string

// Listener triggers.
const (
	ListenerClose   ListenerTrigger = "close"   // the Runner shuts down (or the bridge is stopped)
	ListenerStopped ListenerTrigger = "stopped" // every peer and goroutine ended, the record removed
)

// EffectStopListening stops accepting, closes every peer (their leases end
// with native_disconnected), waits for every goroutine of the listener and
// removes the rendezvous record.
const EffectStopListening fsm.Effect = "stop_listening"

// ListenerSpec is the life of the bridge's listener: it serves from the
// moment it is bound until the Runner closes it, once.
var ListenerSpec = (&fsm.Spec[ListenerState, ListenerTrigger, struct{}]{
	Name:  "bridge_listener",
	Title: "Extension bridge: the Runner's listener",
	Guards: "The Runner's one loopback listener for native hosts. While it listens it accepts peers, lists offers and attaches " +
		"them; closing it stops accepting, closes every peer (so every offer, lease and route is invalid), waits for every " +
		"goroutine it started and removes the rendezvous record, once. Nothing is accepted or attached after the close began.",
	Initial: ListenerListening,
	States: []fsm.StateDoc[ListenerState]{
		fsm.Doc(ListenerListening, "Accepting native hosts; offers and attaches are served."),
		fsm.Doc(ListenerClosing, "Stopping: no new peer or attach; peers close and the record is removed."),
		fsm.Doc(ListenerClosed, "Nothing listens; every peer, offer and route is gone."),
	},
	Triggers: []ListenerTrigger{ListenerClose, ListenerStopped},
	Edges: []fsm.Edge[ListenerState, ListenerTrigger, struct{}]{
		{From: ListenerListening, On: ListenerClose, To: ListenerClosing, Effect: EffectStopListening},
		{From: ListenerClosing, On: ListenerStopped, To: ListenerClosed},
	},
	Effects:      []fsm.Effect{EffectStopListening},
	Stable:       []ListenerState{ListenerListening},
	Terminal:     []ListenerState{ListenerClosed},
	MaxTransient: 1,
}).MustValidate()

// SocketState is a state of one attached share's [Socket]: the CDP socket
// the Runner's connection reads a shared tab (and its new_page tabs) from.
type SocketState string

// Socket states. Their exits are rendered from the declared edges (spec/).
const (
	SocketOpen    SocketState = "open"    // at least one route lives: commands and events flow.
	SocketEnded   SocketState = "ended"   // every route ended: what is queued is read, then reads fail.
	SocketClosing SocketState = "closing" // the Runner closes it: live routes are detached, never their tabs closed.
	SocketClosed  SocketState = "closed"  // reads and writes fail; its queued bytes are given back.
)

// SocketTrigger is an event on a Socket.
type SocketTrigger string

// Socket triggers.
const (
	SocketRoutesEnded SocketTrigger = "routes_ended" // its last route ended (revoked, tab closed, detached, peer lost), or its attach failed
	SocketClose       SocketTrigger = "close"        // the Runner closes it (teardown, a failed attach)
	SocketDetached    SocketTrigger = "detached"     // every live route was detached
)

// Socket effects.
const (
	EffectDetachRoutes fsm.Effect = "detach_routes"
	EffectReleaseQueue fsm.Effect = "release_queue"
)

// SocketSpec is the life of one attached share's Socket. Close only ever
// detaches: no tab of the person's is closed by it.
var SocketSpec = (&fsm.Spec[SocketState, SocketTrigger, struct{}]{
	Name:  "bridge_socket",
	Title: "Extension bridge: socket of an attached share",
	Guards: "The CDP socket over the bridge for one attached share: its routes (the shared tab and tabs opened with new_page). " +
		"When its last route ends the socket ends: the Runner reads what was queued, then its reads fail with the share's fixed " +
		"reason. Closing it detaches every route still live (never closing a tab), then fails reads and writes and gives its " +
		"queued bytes back to the bridge's budget, once.",
	Initial: SocketOpen,
	States: []fsm.StateDoc[SocketState]{
		fsm.Doc(SocketOpen, "At least one route lives: commands and events flow."),
		fsm.Doc(SocketEnded, "Every route ended: what is queued is read, then reads fail with the share's reason."),
		fsm.Doc(SocketClosing, "The Runner closes it: live routes are detached, their tabs left open."),
		fsm.Doc(SocketClosed, "Reads and writes fail; its queued bytes are back in the budget."),
	},
	Triggers: []SocketTrigger{SocketRoutesEnded, SocketClose, SocketDetached},
	Edges: []fsm.Edge[SocketState, SocketTrigger, struct{}]{
		{From: SocketOpen, On: SocketRoutesEnded, To: SocketEnded},
		{From: SocketOpen, On: SocketClose, To: SocketClosing, Effect: EffectDetachRoutes},
		{From: SocketEnded, On: SocketClose, To: SocketClosing, Effect: EffectDetachRoutes},
		{From: SocketClosing, On: SocketDetached, To: SocketClosed, Effect: EffectReleaseQueue},
	},
	Effects:      []fsm.Effect{EffectDetachRoutes, EffectReleaseQueue},
	Stable:       []SocketState{SocketOpen, SocketEnded},
	Terminal:     []SocketState{SocketClosed},
	MaxTransient: 1,
}).MustValidate()

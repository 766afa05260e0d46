package bridge

import (
	"strconv"

	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
)

// PeerState is a state of one native-host connection.
type PeerState string

// Peer states. Their exits are rendered from the declared edges (spec/).
const (
	PeerHandshaking PeerState = "handshaking" // accepted, not yet authenticated.
	PeerVerified    PeerState = "verified"    // authenticated: frames flow.
	PeerClosed      PeerState = "closed"      // its offers, leases and routes are invalid.
)

// PeerTrigger is an event on a peer.
type PeerTrigger string

// Peer triggers.
const (
	PeerAuthenticate PeerTrigger = "authenticate" // token and instance matched within the handshake bound
	PeerRefuse       PeerTrigger = "refuse"       // bad or late handshake
	PeerClose        PeerTrigger = "close"        // EOF, a malformed or oversized frame, queue exhaustion, shutdown
)

// Peer effects.
const (
	EffectSendReady      fsm.Effect = "send_ready"
	EffectInvalidatePeer fsm.Effect = "invalidate_offers_leases_routes"
)

// PeerSpec is the life of one native-host connection. A reconnecting host
// is a new peer: nothing of an older one (offers, leases, routes) is
// carried over.
var PeerSpec = (&fsm.Spec[PeerState, PeerTrigger, struct{}]{
	Name:  "bridge_peer",
	Title: "Extension bridge: native-host peer",
	Guards: "One connection from the native host to the Runner's loopback listener. It counts toward the " + strconv.Itoa(wire.MaxPeers) + " peers from " +
		"the moment it is accepted, and must authenticate (token and instance id from the private rendezvous record) within " +
		fsm.HumanDuration(wire.HandshakeTimeout) + ". Closing a verified peer, for any reason (EOF, a malformed or oversized frame, command or response " +
		"queue exhaustion, shutdown), invalidates every offer, lease and route it had.",
	Initial: PeerHandshaking,
	States: []fsm.StateDoc[PeerState]{
		fsm.Doc(PeerHandshaking, "Accepted, not yet authenticated."),
		fsm.Doc(PeerVerified, "Authenticated: frames flow."),
		fsm.Doc(PeerClosed, "Its offers, leases and routes are invalid."),
	},
	Triggers: []PeerTrigger{PeerAuthenticate, PeerRefuse, PeerClose},
	Edges: []fsm.Edge[PeerState, PeerTrigger, struct{}]{
		{From: PeerHandshaking, On: PeerAuthenticate, To: PeerVerified, Effect: EffectSendReady},
		{From: PeerHandshaking, On: PeerRefuse, To: PeerClosed},
		{From: PeerHandshaking, On: PeerClose, To: PeerClosed},
		{From: PeerVerified, On: PeerClose, To: PeerClosed, Effect: EffectInvalidatePeer},
	},
	Effects:      []fsm.Effect{EffectSendReady, EffectInvalidatePeer},
	Stable:       []PeerState{PeerVerified},
	Terminal:     []PeerState{PeerClosed},
	MaxTransient: 1,
}).MustValidate()

// RouteState is a state of one route: an attached tab's channel.
type RouteState string

// Route states. Their exits are rendered from the declared edges (spec/).
const (
	RouteAttaching RouteState = "attaching" // the attach control is in flight.
	RouteOpen      RouteState = "open"      // attached: commands and events flow.
	RouteLossy     RouteState = "lossy"     // events discarded after an overflow.
	RouteClosed    RouteState = "closed"    // the page session ended.
)

// RouteTrigger is an event on a route.
type RouteTrigger string

// Route triggers.
const (
	RouteAttached     RouteTrigger = "attached"      // the extension attached the debugger to the offered tab
	RouteAttachFailed RouteTrigger = "attach_failed" // it could not, or the share ended meanwhile
	RouteOverflow     RouteTrigger = "overflow"      // its event queue or the shared byte budget is full
	RouteDrained      RouteTrigger = "drained"       // its queued events were all read
	RouteEnd          RouteTrigger = "end"           // detached, revoked, tab closed, peer lost, or detached by the Runner
)

// Route effects.
const (
	EffectMarkLoss   fsm.Effect = "queue_loss_marker"
	EffectEndSession fsm.Effect = "end_session"
)

// RouteSpec is the life of one route. Event queue exhaustion closes only
// this route's event stream, never the peer or another route: events are
// discarded and one loss marker is queued (the page then reports
// diagnostic_events_discarded until clear_diagnostics); the stream opens
// again once the queue has drained. No effect is ever retried.
var RouteSpec = (&fsm.Spec[RouteState, RouteTrigger, struct{}]{
	Name:  "bridge_route",
	Title: "Extension bridge: route (one attached tab)",
	Guards: "One tab the Runner attached by consuming its exact offer. Its events are queued for the page's reader within a " +
		"per-route bound and the bridge's " + strconv.Itoa(wire.MaxQueuedBytes>>20) + " MiB budget; when either is full the route turns lossy: its events are " +
		"discarded, one loss marker is queued, and it opens again only after its queue drained. The marker stays on the " +
		"page until an explicit clear. Ending the route (debugger detached, revoked, tab closed, peer lost, Runner detach) " +
		"ends the page session; nothing re-attaches.",
	Initial: RouteAttaching,
	States: []fsm.StateDoc[RouteState]{
		fsm.Doc(RouteAttaching, "The attach control is in flight."),
		fsm.Doc(RouteOpen, "Attached: commands and events flow."),
		fsm.Doc(RouteLossy, "Events discarded after an overflow; commands still flow."),
		fsm.Doc(RouteClosed, "The page session ended; a new Share is needed."),
	},
	Triggers: []RouteTrigger{RouteAttached, RouteAttachFailed, RouteOverflow, RouteDrained, RouteEnd},
	Edges: []fsm.Edge[RouteState, RouteTrigger, struct{}]{
		{From: RouteAttaching, On: RouteAttached, To: RouteOpen},
		{From: RouteAttaching, On: RouteAttachFailed, To: RouteClosed},
		{From: RouteAttaching, On: RouteEnd, To: RouteClosed},
		{From: RouteOpen, On: RouteOverflow, To: RouteLossy, Effect: EffectMarkLoss, Count: "losses"},
		{From: RouteLossy, On: RouteDrained, To: RouteOpen},
		{From: RouteOpen, On: RouteEnd, To: RouteClosed, Effect: EffectEndSession},
		{From: RouteLossy, On: RouteEnd, To: RouteClosed, Effect: EffectEndSession},
	},
	Effects:      []fsm.Effect{EffectMarkLoss, EffectEndSession},
	Stable:       []RouteState{RouteOpen, RouteLossy},
	Terminal:     []RouteState{RouteClosed},
	MaxTransient: 1,
}).MustValidate()

package lease

import "github.com/webcodex/webcodex/fsm"

// AttachState is a state of a Browser's attachment, in any mode.
type AttachState string

// Attachment states. Their exits are rendered from the declared edges (spec/).
const (
	AttachLaunching    AttachState = "launching"    // owned: starting Chromium and connecting.
	AttachAttaching    AttachState = "attaching"    // external: approval, endpoint proof and consent.
	AttachReady        AttachState = "ready"        // connected.
	AttachReconnecting AttachState = "reconnecting" // the reconnect machine runs.
	AttachLost         AttachState = "lost"         // no connection.
	AttachClosing      AttachState = "closing"      // owned: Browser.close sent.
	AttachReleasing    AttachState = "releasing"    // the browser's own teardown ran; what the attachment held is freed next.
	AttachClosed       AttachState = "closed"       // owned process tree gone.
	AttachDetached     AttachState = "detached"     // external browser untouched.
)

// AttachTrigger is an event in a Browser's attachment.
type AttachTrigger string

// Attachment triggers.
const (
	AttachUp          AttachTrigger = "up"          // launched or attached and connected
	AttachFailed      AttachTrigger = "failed"      // launch or attach failed
	AttachSocketLost  AttachTrigger = "socket_lost" // the browser-level socket closed
	AttachReconnected AttachTrigger = "reconnected" // the reconnect machine reached ready_for_rebind
	AttachGiveUp      AttachTrigger = "gave_up"     // the reconnect machine ended without a socket
	AttachClose       AttachTrigger = "close"       // a person or agent closed the browser
	AttachClosedDone  AttachTrigger = "closed"      // Browser.close returned or its wait ended
	AttachExited      AttachTrigger = "exited"      // the owned process exited on its own
	AttachRelease     AttachTrigger = "release"     // teardown frees what the attachment held
)

// Teardown effects. close_browser and reap_process_tree are unreachable in
// the external declaration: Validate rejects them there.
const (
	EffectCloseBrowser   fsm.Effect = "close_browser"
	EffectReap           fsm.Effect = "reap_process_tree"
	EffectDetachDebugger fsm.Effect = "detach_debugger"
	EffectReconnect      fsm.Effect = "start_reconnect"
	// EffectRelease frees what every kind of attachment holds: its
	// connection, download jail, pages, registry entry and mutation gates,
	// and for an owned browser its egress proxy, profile lease, temporary
	// directory and orphan record. Every edge into the terminal state
	// carries it, and no other edge does: it runs exactly once per life.
	EffectRelease fsm.Effect = "release_attachment"
)

// Teardown is what the owner fires, by [fsm.Owner.Run], in each state an
// attachment rests in when it is torn down (closed by a caller, the Runner
// stopping, a launch or attach aborted): its machine moves to the terminal
// state, running the declared effects of the edges it takes and nothing
// else. A teardown of a torn-down attachment fires nothing: the terminal
// state is in no map.
var (
	// OwnedTeardown: Browser.close, reap, then release (a lost browser was
	// reaped on its way to lost; a failed launch reaps what started).
	OwnedTeardown = map[AttachState]AttachTrigger{
		AttachLaunching: AttachFailed, AttachReady: AttachClose, AttachClosing: AttachClosedDone,
		AttachLost: AttachClose, AttachReleasing: AttachRelease,
	}
	// DetachTeardown, for the person's browser and a shared tab: detach the
	// debugger, then release.
	DetachTeardown = map[AttachState]AttachTrigger{
		AttachAttaching: AttachFailed, AttachReady: AttachClose, AttachLost: AttachClose, AttachReleasing: AttachRelease,
	}
)

type attachEdge = fsm.Edge[AttachState, AttachTrigger, struct{}]

// OwnedAttachmentSpec is the life of a Browser webcodex launched (ephemeral
// or managed): teardown closes the browser and reaps its process tree.
var OwnedAttachmentSpec = (&fsm.Spec[AttachState, AttachTrigger, struct{}]{
	Name:  "attachment_owned",
	Title: "Attachment: owned browser (ephemeral, managed)",
	Guards: "The life of a browser webcodex launched. Closing runs Browser.close (so cookies flush), then reaps exactly " +
		"the owned process group; a launch failure or an exit reaps too, so nothing of the group is left behind. A browser " +
		"that exits on its own (crashed, killed) is lost, not closed: it stays listed until someone closes it. Its one " +
		"connection is the DevTools pipe of the process webcodex started, and nothing listens on a port, so there is " +
		"nothing to dial again: a pipe that drops while the process lives means the process is wedged, and it is reaped " +
		"like one that exited (no reconnecting state; Reconnect refuses). Every way to closed ends on an edge that releases " +
		"what the browser held (connection, download jail, pages, gates, egress proxy, profile lease, temporary directory, " +
		"orphan record), once.",
	Initial: AttachLaunching,
	States: []fsm.StateDoc[AttachState]{
		fsm.Doc(AttachLaunching, "Starting Chromium and connecting."),
		fsm.Doc(AttachReady, "Connected."),
		fsm.Doc(AttachLost, "No connection: the browser crashed, was killed or dropped its pipe, and what was left of its group was reaped on the way here. It stays listed, so a caller sees what happened, until someone closes it."),
		fsm.Doc(AttachClosing, "Browser.close sent."),
		fsm.Doc(AttachReleasing, "No process of the group remains; what the browser held is freed next."),
		fsm.Doc(AttachClosed, "No process of the group remains and nothing of it is held: the ephemeral profile and temporary directory are removed, the profile lease released."),
	},
	Triggers: []AttachTrigger{AttachUp, AttachFailed, AttachSocketLost, AttachClose, AttachClosedDone, AttachExited, AttachRelease},
	Edges: []attachEdge{
		{From: AttachLaunching, On: AttachUp, To: AttachReady},
		{From: AttachLaunching, On: AttachFailed, To: AttachReleasing, Effect: EffectReap},
		{From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectReap},
		{From: AttachReady, On: AttachClose, To: AttachClosing, Effect: EffectCloseBrowser},
		{From: AttachReady, On: AttachExited, To: AttachLost, Effect: EffectReap},
		{From: AttachLost, On: AttachClose, To: AttachClosed, Effect: EffectRelease},
		{From: AttachClosing, On: AttachClosedDone, To: AttachReleasing, Effect: EffectReap},
		{From: AttachReleasing, On: AttachRelease, To: AttachClosed, Effect: EffectRelease},
	},
	Effects:      []fsm.Effect{EffectReap, EffectCloseBrowser, EffectRelease},
	Stable:       []AttachState{AttachReady, AttachLost},
	Terminal:     []AttachState{AttachClosed},
	MaxTransient: 2,
	Forbidden:    []fsm.Effect{EffectDetachDebugger, EffectReconnect},
}).MustValidate()

// ExternalAttachmentSpec is the life of the person's own browser, attached
// through its debugging endpoint or the extension: teardown only detaches.
var ExternalAttachmentSpec = (&fsm.Spec[AttachState, AttachTrigger, struct{}]{
	Name:  "attachment_external",
	Title: "Attachment: the person's browser (attached_external)",
	Guards: "The life of an attachment to a browser webcodex does not own. Teardown detaches the debugger and nothing else: " +
		"Browser.close and killing a process are unreachable in this declaration (Validate rejects them), so no window, tab " +
		"or process of the person's is ever closed by teardown. Every way to detached ends on an edge that releases what the " +
		"attachment held (connection, pages, gates), once.",
	Initial: AttachAttaching,
	States: []fsm.StateDoc[AttachState]{
		fsm.Doc(AttachAttaching, "Approval, endpoint proof and consent (the consent machine)."),
		fsm.Doc(AttachReady, "Connected on one socket."),
		fsm.Doc(AttachReconnecting, "The reconnect machine runs."),
		fsm.Doc(AttachLost, "No connection; the browser is untouched."),
		fsm.Doc(AttachReleasing, "Debugger detached; what the attachment held is freed next."),
		fsm.Doc(AttachDetached, "Debugger detached and nothing of the attachment held; the browser and its tabs are as the person left them."),
	},
	Triggers: []AttachTrigger{AttachUp, AttachFailed, AttachSocketLost, AttachReconnected, AttachGiveUp, AttachClose, AttachRelease},
	Edges: []attachEdge{
		{From: AttachAttaching, On: AttachUp, To: AttachReady},
		{From: AttachAttaching, On: AttachFailed, To: AttachDetached, Effect: EffectRelease},
		{From: AttachReady, On: AttachSocketLost, To: AttachReconnecting, Effect: EffectReconnect, Count: "losses"},
		{From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: EffectDetachDebugger},
		{From: AttachReconnecting, On: AttachReconnected, To: AttachReady},
		{From: AttachReconnecting, On: AttachGiveUp, To: AttachLost},
		{From: AttachLost, On: AttachClose, To: AttachDetached, Effect: EffectRelease},
		{From: AttachReleasing, On: AttachRelease, To: AttachDetached, Effect: EffectRelease},
	},
	Effects:      []fsm.Effect{EffectReconnect, EffectDetachDebugger, EffectRelease},
	Stable:       []AttachState{AttachReady, AttachLost},
	Terminal:     []AttachState{AttachDetached},
	MaxTransient: 2,
	Forbidden:    []fsm.Effect{EffectCloseBrowser, EffectReap, "kill_process"},
}).MustValidate()

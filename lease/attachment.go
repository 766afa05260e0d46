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
)

// Teardown effects. close_browser and reap_process_tree are unreachable in
// the external declaration: Validate rejects them there.
const (
	EffectCloseBrowser   fsm.Effect = "close_browser"
	EffectReap           fsm.Effect = "reap_process_tree"
	EffectDetachDebugger fsm.Effect = "detach_debugger"
	EffectReconnect      fsm.Effect = "start_reconnect"
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
		"like one that exited (no reconnecting state; Reconnect refuses).",
	Initial: AttachLaunching,
	States: []fsm.StateDoc[AttachState]{
		fsm.Doc(AttachLaunching, "Starting Chromium and connecting."),
		fsm.Doc(AttachReady, "Connected."),
		fsm.Doc(AttachLost, "No connection: the browser crashed, was killed or dropped its pipe, and what was left of its group was reaped on the way here. It stays listed, so a caller sees what happened, until someone closes it."),
		fsm.Doc(AttachClosing, "Browser.close sent."),
		fsm.Doc(AttachClosed, "No process of the group remains; an ephemeral profile is removed."),
	},
	Triggers: []AttachTrigger{AttachUp, AttachFailed, AttachSocketLost, AttachClose, AttachClosedDone, AttachExited},
	Edges: []attachEdge{
		{From: AttachLaunching, On: AttachUp, To: AttachReady},
		{From: AttachLaunching, On: AttachFailed, To: AttachClosed, Effect: EffectReap},
		{From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectReap},
		{From: AttachReady, On: AttachClose, To: AttachClosing, Effect: EffectCloseBrowser},
		{From: AttachReady, On: AttachExited, To: AttachLost, Effect: EffectReap},
		{From: AttachLost, On: AttachClose, To: AttachClosed},
		{From: AttachClosing, On: AttachClosedDone, To: AttachClosed, Effect: EffectReap},
	},
	Effects:      []fsm.Effect{EffectReap, EffectCloseBrowser},
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
		"or process of the person's is ever closed by teardown.",
	Initial: AttachAttaching,
	States: []fsm.StateDoc[AttachState]{
		fsm.Doc(AttachAttaching, "Approval, endpoint proof and consent (the consent machine)."),
		fsm.Doc(AttachReady, "Connected on one socket."),
		fsm.Doc(AttachReconnecting, "The reconnect machine runs."),
		fsm.Doc(AttachLost, "No connection; the browser is untouched."),
		fsm.Doc(AttachDetached, "Debugger detached; the browser and its tabs are as the person left them."),
	},
	Triggers: []AttachTrigger{AttachUp, AttachFailed, AttachSocketLost, AttachReconnected, AttachGiveUp, AttachClose},
	Edges: []attachEdge{
		{From: AttachAttaching, On: AttachUp, To: AttachReady},
		{From: AttachAttaching, On: AttachFailed, To: AttachDetached},
		{From: AttachReady, On: AttachSocketLost, To: AttachReconnecting, Effect: EffectReconnect, Count: "losses"},
		{From: AttachReady, On: AttachClose, To: AttachDetached, Effect: EffectDetachDebugger},
		{From: AttachReconnecting, On: AttachReconnected, To: AttachReady},
		{From: AttachReconnecting, On: AttachGiveUp, To: AttachLost},
		{From: AttachLost, On: AttachClose, To: AttachDetached},
	},
	Effects:      []fsm.Effect{EffectReconnect, EffectDetachDebugger},
	Stable:       []AttachState{AttachReady, AttachLost},
	Terminal:     []AttachState{AttachDetached},
	MaxTransient: 2,
	Forbidden:    []fsm.Effect{EffectCloseBrowser, EffectReap, "kill_process"},
}).MustValidate()

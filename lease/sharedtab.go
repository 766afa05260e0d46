package lease

import "github.com/webcodex/webcodex/fsm"

// EffectRetirePages retires a shared tab's pages when its share ends: their
// ids stay refused as closed, and nothing re-attaches them.
const EffectRetirePages fsm.Effect = "retire_pages"

// SharedTabSpec is the life of one tab a person shared from the extension.
// A share never reconnects by itself (a new Share is a new offer), so the
// declaration has no reconnecting state: when the share ends the tab is
// lost at once, with the share's fixed reason.
var SharedTabSpec = (&fsm.Spec[AttachState, AttachTrigger, struct{}]{
	Name:  "attachment_shared_tab",
	Title: "Attachment: a tab shared from the extension",
	Guards: "The life of one tab the person shared from the extension and the Runner attached by consuming its exact offer. " +
		"There is nothing to dial again: when the share ends (revoked, the tab closed, the debugger detached, the native host " +
		"gone) its pages are retired and the attachment is lost; a new Share is a new offer and a new attachment. Teardown " +
		"only detaches the debugger: Browser.close, killing a process and reconnecting are unreachable in this declaration. " +
		"Every way to detached ends on an edge that releases what the attachment held (the bridge socket, pages, gates), once.",
	Initial: AttachAttaching,
	States: []fsm.StateDoc[AttachState]{
		fsm.Doc(AttachAttaching, "The offer was consumed; the Runner registers the tab."),
		fsm.Doc(AttachReady, "Attached through the bridge: the shared tab (and tabs opened with new_page) are driven."),
		fsm.Doc(AttachLost, "The share ended with a fixed reason; its pages are retired. The person's tab is untouched."),
		fsm.Doc(AttachReleasing, "Debugger detached; what the attachment held is freed next."),
		fsm.Doc(AttachDetached, "Debugger detached and nothing of the attachment held; the tab is as the person left it."),
	},
	Triggers: []AttachTrigger{AttachUp, AttachFailed, AttachSocketLost, AttachClose, AttachRelease},
	Edges: []attachEdge{
		{From: AttachAttaching, On: AttachUp, To: AttachReady},
		{From: AttachAttaching, On: AttachFailed, To: AttachDetached, Effect: EffectRelease},
		{From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectRetirePages},
		{From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: EffectDetachDebugger},
		{From: AttachLost, On: AttachClose, To: AttachDetached, Effect: EffectRelease},
		{From: AttachReleasing, On: AttachRelease, To: AttachDetached, Effect: EffectRelease},
	},
	Effects:      []fsm.Effect{EffectRetirePages, EffectDetachDebugger, EffectRelease},
	Stable:       []AttachState{AttachReady, AttachLost},
	Terminal:     []AttachState{AttachDetached},
	MaxTransient: 1,
	Forbidden:    []fsm.Effect{EffectCloseBrowser, EffectReap, EffectReconnect, "kill_process"},
}).MustValidate()

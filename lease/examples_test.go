package lease

import (
	"testing"

	"github.com/webcodex/webcodex/fsm/fsmtest"
)

// The lease machines' example tables: (state, trigger, facts) → (state,
// effect) or a refusal, one named row per behaviour, every declared edge
// taken by a row (the rapid properties beside them are in lease_test.go).

type (
	processRow = fsmtest.Example[ProcessState, ProcessTrigger, ProcessFacts]
	gateRow    = fsmtest.Example[GateState, GateTrigger, struct{}]
	offerRow   = fsmtest.Example[OfferState, OfferTrigger, OfferFacts]
	attachRow  = fsmtest.Example[AttachState, AttachTrigger, struct{}]
	ledgerRow  = fsmtest.Example[EffectState, EffectTrigger, EffectFacts]
)

func TestProcessLeaseTable(t *testing.T) {
	free := ProcessFacts{FlockFree: true}
	fsmtest.Examples(t, ProcessSpec, []processRow{
		{Name: "no lock: held", From: ProcessFree, Facts: free, On: ProcessAcquire, To: ProcessHeld},
		{Name: "a stale lock of this host is removed first", From: ProcessFree, Facts: ProcessFacts{FlockFree: true, Lock: LockStale}, On: ProcessAcquire, To: ProcessTakingOver, Effect: EffectRemoveStaleLock},
		{Name: "a live browser's lock refuses", From: ProcessFree, Facts: ProcessFacts{FlockFree: true, Lock: LockLive}, On: ProcessAcquire, To: ProcessRefused},
		{Name: "another host's lock is never adopted", From: ProcessFree, Facts: ProcessFacts{FlockFree: true, Lock: LockForeign}, On: ProcessAcquire, To: ProcessRefused},
		{Name: "another Runner's flock refuses even without a lock", From: ProcessFree, Facts: ProcessFacts{}, On: ProcessAcquire, To: ProcessRefused},
		{Name: "another Runner's flock refuses a stale lock's takeover", From: ProcessFree, Facts: ProcessFacts{Lock: LockStale}, On: ProcessAcquire, To: ProcessRefused},
		{Name: "taken over: held", From: ProcessTakingOver, On: ProcessTaken, To: ProcessHeld},
		{Name: "released: the flock goes, the data stays", From: ProcessHeld, On: ProcessRelease, To: ProcessReleased, Effect: EffectReleaseFlock},
		{Name: "no second acquire while held", From: ProcessHeld, Facts: free, On: ProcessAcquire, Refused: true},
		{Name: "nothing to release while free", From: ProcessFree, On: ProcessRelease, Refused: true},
		{Name: "refused is final", From: ProcessRefused, Facts: free, On: ProcessAcquire, Refused: true},
		{Name: "released is final", From: ProcessReleased, Facts: free, On: ProcessAcquire, Refused: true},
	})
}

func TestGateTable(t *testing.T) {
	fsmtest.Examples(t, GateSpec, []gateRow{
		{Name: "one mutation holds the open gate", From: GateOpen, On: GateAcquire, To: GateHeld},
		{Name: "its release opens it", From: GateHeld, On: GateRelease, To: GateOpen},
		{Name: "a reconnect closes an idle gate at once", From: GateOpen, On: GateClose, To: GateClosed},
		{Name: "a reconnect drains a held gate", From: GateHeld, On: GateClose, To: GateDraining},
		{Name: "the drained mutation's release closes it", From: GateDraining, On: GateRelease, To: GateClosed},
		{Name: "reopened on the next generation", From: GateClosed, On: GateReopen, To: GateOpen},
		{Name: "never two holders", From: GateHeld, On: GateAcquire, Refused: true},
		{Name: "no acquire while draining", From: GateDraining, On: GateAcquire, Refused: true},
		{Name: "no acquire while closed", From: GateClosed, On: GateAcquire, Refused: true},
		{Name: "a draining gate is not reopened", From: GateDraining, On: GateReopen, Refused: true},
		{Name: "an open gate is not reopened", From: GateOpen, On: GateReopen, Refused: true},
		{Name: "nothing to release while open", From: GateOpen, On: GateRelease, Refused: true},
	})
}

func TestOfferTable(t *testing.T) {
	live := OfferFacts{Unexpired: true}
	fsmtest.Examples(t, OfferSpec, []offerRow{
		{Name: "consumed in time: the debugger attaches", From: OfferOffered, Facts: live, On: OfferConsume, To: OfferConsumed, Effect: EffectAttachDebugger},
		{Name: "consumed too late: expired, nothing attaches", From: OfferOffered, On: OfferConsume, To: OfferExpired},
		{Name: "its lifetime ends", From: OfferOffered, On: OfferExpire, To: OfferExpired},
		{Name: "the person withdraws it", From: OfferOffered, On: OfferRevoke, To: OfferRevoked},
		{Name: "single use", From: OfferConsumed, Facts: live, On: OfferConsume, Refused: true},
		{Name: "an expired offer is never consumed", From: OfferExpired, Facts: live, On: OfferConsume, Refused: true},
		{Name: "a revoked offer is never consumed", From: OfferRevoked, Facts: live, On: OfferConsume, Refused: true},
		{Name: "a consumed offer is not revoked after the fact", From: OfferConsumed, On: OfferRevoke, Refused: true},
	})
}

func TestOwnedAttachmentTable(t *testing.T) {
	fsmtest.Examples(t, OwnedAttachmentSpec, []attachRow{
		{Name: "launched", From: AttachLaunching, On: AttachUp, To: AttachReady},
		{Name: "a failed launch reaps what started", From: AttachLaunching, On: AttachFailed, To: AttachReleasing, Effect: EffectReap},
		{Name: "a lost socket reaps the process tree", From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectReap},
		{Name: "close asks the browser first, so cookies flush", From: AttachReady, On: AttachClose, To: AttachClosing, Effect: EffectCloseBrowser},
		{Name: "an exit on its own reaps the rest", From: AttachReady, On: AttachExited, To: AttachLost, Effect: EffectReap},
		{Name: "closing a lost browser reaps nothing twice, and releases what it held", From: AttachLost, On: AttachClose, To: AttachClosed, Effect: EffectRelease},
		{Name: "Browser.close returned: reaped", From: AttachClosing, On: AttachClosedDone, To: AttachReleasing, Effect: EffectReap},
		{Name: "reaped: what the browser held is released", From: AttachReleasing, On: AttachRelease, To: AttachClosed, Effect: EffectRelease},
		{Name: "nothing is released while the browser runs", From: AttachReady, On: AttachRelease, Refused: true},
		{Name: "nothing is released while it closes", From: AttachClosing, On: AttachRelease, Refused: true},
		{Name: "a lost browser is released by its close only", From: AttachLost, On: AttachRelease, Refused: true},
		{Name: "no second close while releasing", From: AttachReleasing, On: AttachClose, Refused: true},
		{Name: "released once", From: AttachClosed, On: AttachRelease, Refused: true},
		{Name: "an owned browser never reconnects", From: AttachReady, On: AttachReconnected, Refused: true},
		{Name: "no second close while closing", From: AttachClosing, On: AttachClose, Refused: true},
		{Name: "closed is final", From: AttachClosed, On: AttachUp, Refused: true},
	})
}

func TestExternalAttachmentTable(t *testing.T) {
	fsmtest.Examples(t, ExternalAttachmentSpec, []attachRow{
		{Name: "attached", From: AttachAttaching, On: AttachUp, To: AttachReady},
		{Name: "a failed attach touches nothing of the browser, and releases what the attempt held", From: AttachAttaching, On: AttachFailed, To: AttachDetached, Effect: EffectRelease},
		{Name: "a lost socket starts one reconnect", From: AttachReady, On: AttachSocketLost, To: AttachReconnecting, Effect: EffectReconnect},
		{Name: "close detaches the debugger only", From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: EffectDetachDebugger},
		{Name: "detached: what the attachment held is released", From: AttachReleasing, On: AttachRelease, To: AttachDetached, Effect: EffectRelease},
		{Name: "nothing is released mid-reconnect", From: AttachReconnecting, On: AttachRelease, Refused: true},
		{Name: "released once", From: AttachDetached, On: AttachRelease, Refused: true},
		{Name: "reconnected", From: AttachReconnecting, On: AttachReconnected, To: AttachReady},
		{Name: "the reconnect gave up", From: AttachReconnecting, On: AttachGiveUp, To: AttachLost},
		{Name: "closing a lost attachment detaches nothing, and releases what it held", From: AttachLost, On: AttachClose, To: AttachDetached, Effect: EffectRelease},
		{Name: "the person's browser is never closed", From: AttachReady, On: AttachClosedDone, Refused: true},
		{Name: "the person's browser exiting is a lost socket, not an exit to reap", From: AttachReady, On: AttachExited, Refused: true},
		{Name: "no second reconnect while one runs", From: AttachReconnecting, On: AttachSocketLost, Refused: true},
		{Name: "detached is final", From: AttachDetached, On: AttachUp, Refused: true},
	})
}

func TestSharedTabTable(t *testing.T) {
	fsmtest.Examples(t, SharedTabSpec, []attachRow{
		{Name: "attached", From: AttachAttaching, On: AttachUp, To: AttachReady},
		{Name: "registration failed: what the attempt held is released", From: AttachAttaching, On: AttachFailed, To: AttachDetached, Effect: EffectRelease},
		{Name: "share ended: its pages retire at once", From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectRetirePages},
		{Name: "closed while attached detaches", From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: EffectDetachDebugger},
		{Name: "detached: what the share held is released", From: AttachReleasing, On: AttachRelease, To: AttachDetached, Effect: EffectRelease},
		{Name: "closed once lost: released", From: AttachLost, On: AttachClose, To: AttachDetached, Effect: EffectRelease},
		{Name: "released once", From: AttachDetached, On: AttachRelease, Refused: true},
		{Name: "no reconnect after the share ended", From: AttachLost, On: AttachReconnected, Refused: true},
		{Name: "no second loss", From: AttachLost, On: AttachSocketLost, Refused: true},
		{Name: "never reconnecting", From: AttachReady, On: AttachReconnected, Refused: true},
		{Name: "never closes the browser", From: AttachReady, On: AttachClosedDone, Refused: true},
		{Name: "detached is final", From: AttachDetached, On: AttachUp, Refused: true},
	})
}

func TestLedgerTable(t *testing.T) {
	fsmtest.Examples(t, LedgerSpec, []ledgerRow{
		{Name: "dispatched once", From: EffectPending, On: EffectDispatch, To: EffectDispatched, Effect: EffectDispatchCDP},
		{Name: "refused before dispatch", From: EffectPending, On: EffectCancel, To: EffectCancelled},
		{Name: "acknowledged", From: EffectDispatched, On: EffectAck, To: EffectAcked},
		{Name: "the browser said it did not happen", From: EffectDispatched, On: EffectFail, To: EffectFailed},
		{Name: "the acknowledgement was lost", From: EffectDispatched, On: EffectAckLost, To: EffectUnknown},
		{Name: "observed to have happened", From: EffectUnknown, Facts: EffectFacts{Happened: true}, On: EffectObserve, To: EffectReconciledYes},
		{Name: "observed not to have happened", From: EffectUnknown, On: EffectObserve, To: EffectReconciledNo},
		{Name: "never dispatched twice", From: EffectDispatched, On: EffectDispatch, Refused: true},
		{Name: "an unknown outcome is never re-sent", From: EffectUnknown, On: EffectDispatch, Refused: true},
		{Name: "an unknown outcome is not settled by an acknowledgement", From: EffectUnknown, On: EffectAck, Refused: true},
		{Name: "a sent effect is not cancelled", From: EffectDispatched, On: EffectCancel, Refused: true},
		{Name: "an acknowledged effect is final", From: EffectAcked, On: EffectDispatch, Refused: true},
		{Name: "a reconciled-not-done effect is not re-sent by the ledger", From: EffectReconciledNo, On: EffectDispatch, Refused: true},
	})
}

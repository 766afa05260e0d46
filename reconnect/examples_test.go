package reconnect

import (
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

type row = fsmtest.Example[State, Trigger, Facts]

// TestReconnectTable is the reconnect machine's examples: (state, counters,
// facts, trigger) → (state, effect) or a refusal, one named row per
// behaviour, every declared edge taken by a row. The rapid properties are
// TestReconnectProperties; the owner's examples (concurrency, deadlines,
// hooks) are the tests in reconnect_test.go.
func TestReconnectTable(t *testing.T) {
	proven := Facts{SameProcess: true, OwnerReproved: true, ExactCandidate: true}
	rows := []row{
		{Name: "a loss elects one leader", From: Ready, On: SocketLost, To: Singleflight, Effect: EffectLead},
		{Name: "a loss after a reconnect leads again", From: ReadyForRebind, Counters: fsm.Counters{"losses": 1, "attempts": MaxAttempts}, On: SocketLost, To: Singleflight, Effect: EffectLead},
		{Name: "the leader closes every gate first", From: Singleflight, On: CloseGates, To: GatesClosed, Effect: EffectCloseGates},
		{Name: "the same process re-proven", From: GatesClosed, Facts: proven, On: Revalidate, To: Revalidated},
		{Name: "a changed process is lost before any dial", From: GatesClosed, On: Revalidate, To: Lost},
		{Name: "the first attempt dials", From: Revalidated, On: Dial, To: ConnectingPending, Effect: EffectDial},
		{Name: "the last attempt within the budget dials", From: Revalidated, Counters: fsm.Counters{"attempts": MaxAttempts - 1}, On: Dial, To: ConnectingPending, Effect: EffectDial},
		{Name: "the budget spent: exhausted", From: Revalidated, Counters: fsm.Counters{"attempts": MaxAttempts}, On: Dial, To: Exhausted},
		{Name: "exactly one proven prompt candidate", From: ConnectingPending, Facts: proven, On: PromptObserved, To: PromptObservedState},
		{Name: "an unproven prompt is never pressed", From: ConnectingPending, On: PromptObserved, To: Ambiguous},
		{Name: "one press", From: PromptObservedState, On: Press, To: Pressed, Effect: EffectPress},
		{Name: "the prompt changed before the press", From: PromptObservedState, On: PromptUnclear, To: Ambiguous},
		{Name: "the prompt changed under the press", From: Pressed, On: PromptUnclear, To: Ambiguous},
		{Name: "a dismissal revokes the grant", From: Dismissed, On: Revoke, To: Revoked, Effect: EffectRevokeGrant},
		{Name: "a new generation refuses every older capability", From: GenerationIncremented, On: Invalidate, To: CapabilitiesInvalid, Effect: EffectInvalidate},
		{Name: "gates reopen only after the invalidation", From: CapabilitiesInvalid, On: ReopenGates, To: GatesReopened, Effect: EffectReopenGates},
		{Name: "callers are told to list pages again", From: GatesReopened, On: Rebind, To: ReadyForRebind},
		{Name: "the session ends at rest: cancelled refuses later losses", From: Ready, On: SessionEnded, To: Cancelled},
		{Name: "the session ends after a reconnect", From: ReadyForRebind, On: SessionEnded, To: Cancelled},

		{Name: "a second loss while one is led opens no second flight", From: Singleflight, On: SocketLost, Refused: true},
		{Name: "no dial before the re-proof", From: GatesClosed, Facts: proven, On: Dial, Refused: true},
		{Name: "no second press in one attempt", From: Pressed, On: Press, Refused: true},
		{Name: "gates never reopen before the invalidation", From: GenerationIncremented, On: ReopenGates, Refused: true},
		{Name: "a revoked grant is never retried", From: Revoked, Facts: proven, On: Dial, Refused: true},
		{Name: "a dismissal is not undone by a connection", From: Dismissed, Facts: proven, On: Connected, Refused: true},
		{Name: "exhausted is final", From: Exhausted, On: SocketLost, Refused: true},
		{Name: "lost is final", From: Lost, Facts: proven, On: Revalidate, Refused: true},
		{Name: "cancelled is final", From: Cancelled, On: SocketLost, Refused: true},
		{Name: "nothing to reconnect while ready", From: Ready, On: Dial, Refused: true},
	}
	for _, s := range attemptStates {
		rows = append(rows,
			row{Name: "connected on the proven owner from " + string(s), From: s, Facts: proven, On: Connected, To: GenerationIncremented, Effect: EffectAdopt},
			row{Name: "connected to another owner from " + string(s) + " is closed and lost", From: s, On: Connected, To: Lost, Effect: EffectClose},
			row{Name: "a failed dial from " + string(s) + " awaits the next attempt", From: s, On: DialFailed, To: Revalidated, Effect: EffectRetry},
			row{Name: "dismissed from " + string(s), From: s, On: PromptDismissed, To: Dismissed})
	}
	for _, s := range inFlight {
		rows = append(rows,
			row{Name: "the deadline passes in " + string(s), From: s, On: DeadlineExpired, To: Exhausted},
			row{Name: "the session ends in " + string(s), From: s, On: SessionEnded, To: Cancelled})
	}
	for _, s := range []State{Ready, ReadyForRebind, GenerationIncremented, CapabilitiesInvalid, GatesReopened} {
		rows = append(rows, row{Name: "no deadline outside a flight: " + string(s), From: s, On: DeadlineExpired, Refused: true})
	}
	fsmtest.Examples(t, Spec, rows)
}

package consent

import (
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

// The consent machines' example tables: (state, counters, facts, trigger)
// → (state, effect) or a refusal, one named row per behaviour, every
// declared edge taken by a row. The rapid properties are the *Properties
// tests; the broker's and grant's examples with a clock are in
// boundary_test.go and consent_test.go.

type (
	attemptRow = fsmtest.Example[State, Trigger, Facts]
	requestRow = fsmtest.Example[RequestState, RequestTrigger, RequestFacts]
	grantRow   = fsmtest.Example[GrantState, GrantTrigger, GrantFacts]
)

func TestAttemptTable(t *testing.T) {
	ok := Facts{Unexpired: true, OwnerMatches: true, ExactCandidate: true}
	rows := []attemptRow{
		{Name: "an approval in time mints the grant", From: ApprovalRequired, Facts: ok, On: Approve, To: GrantActive, Effect: EffectMintGrant},
		{Name: "an approval too late refuses", From: ApprovalRequired, On: Approve, To: Refused},
		{Name: "a denial refuses", From: ApprovalRequired, On: Deny, To: Refused},
		{Name: "the attempt proves the endpoint first", From: GrantActive, On: Connect, To: EndpointPreflight, Effect: EffectProveEndpoint},
		{Name: "a grant revoked before the connect", From: GrantActive, On: Revoke, To: GrantRevoked, Effect: EffectRevokeGrant},
		{Name: "the approved process listens: one dial", From: EndpointPreflight, Facts: ok, On: OwnerProven, To: ConnectingPendingConsent, Effect: EffectDial},
		{Name: "another process listens: refused, nothing dialed", From: EndpointPreflight, On: OwnerProven, To: Refused},
		{Name: "the deadline passes while proving", From: EndpointPreflight, On: DeadlineExpired, To: Refused},
		{Name: "a handshake without a prompt is re-proven", From: ConnectingPendingConsent, On: HandshakeComplete, To: SocketReady, Effect: EffectReprove},
		{Name: "exactly one proven prompt candidate", From: ConnectingPendingConsent, Facts: ok, On: PromptObserved, To: ConsentPromptObserved},
		{Name: "an ambiguous prompt is never pressed", From: ConnectingPendingConsent, On: PromptObserved, To: TimeoutOrAmbiguity},
		{Name: "dismissed before it was seen", From: ConnectingPendingConsent, On: Dismissed, To: ConsentDismissed},
		{Name: "the deadline passes on the pending socket", From: ConnectingPendingConsent, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{Name: "one press of the exact candidate", From: ConsentPromptObserved, On: Press, To: ConsentPressed, Effect: EffectPressConsent},
		{Name: "dismissed once seen", From: ConsentPromptObserved, On: Dismissed, To: ConsentDismissed},
		{Name: "the deadline passes before the press", From: ConsentPromptObserved, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{Name: "the pressed prompt lets the handshake through", From: ConsentPressed, On: HandshakeComplete, To: SocketReady, Effect: EffectReprove},
		{Name: "dismissed after the press", From: ConsentPressed, On: Dismissed, To: ConsentDismissed},
		{Name: "the deadline passes after the press", From: ConsentPressed, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{Name: "a dismissal revokes the grant", From: ConsentDismissed, On: Revoke, To: GrantRevoked, Effect: EffectRevokeGrant},
		{Name: "a timeout closes the pending socket", From: TimeoutOrAmbiguity, On: Refuse, To: Refused, Effect: EffectClosePending},
		{Name: "the live socket's owner re-proven", From: SocketReady, Facts: ok, On: Reprove, To: EndpointReproved},
		{Name: "the live socket's owner changed: closed", From: SocketReady, On: Reprove, To: Refused, Effect: EffectClosePending},
		{Name: "older capabilities invalidated", From: EndpointReproved, On: Invalidate, To: CapabilitiesInvalidated, Effect: EffectInvalidate},
		{Name: "handed over only after the invalidation", From: CapabilitiesInvalidated, On: Rebind, To: ReadyForRebind, Effect: EffectHandOver},

		{Name: "nothing connects before an approval", From: ApprovalRequired, Facts: ok, On: Connect, Refused: true},
		{Name: "no press before a prompt is seen", From: ConnectingPendingConsent, Facts: ok, On: Press, Refused: true},
		{Name: "no second press", From: ConsentPressed, Facts: ok, On: Press, Refused: true},
		{Name: "no hand-over before the invalidation", From: EndpointReproved, On: Rebind, Refused: true},
		{Name: "a revoked grant never connects again", From: GrantRevoked, Facts: ok, On: Connect, Refused: true},
		{Name: "a dismissal is not undone by a handshake", From: ConsentDismissed, On: HandshakeComplete, Refused: true},
		{Name: "refused is final", From: Refused, Facts: ok, On: Approve, Refused: true},
		{Name: "cancelled is final", From: Cancelled, Facts: ok, On: Approve, Refused: true},
		{Name: "a handed-over attempt does not end with the session", From: ReadyForRebind, On: SessionEnded, Refused: true},
	}
	for _, s := range []State{ApprovalRequired, GrantActive, EndpointPreflight, ConnectingPendingConsent, ConsentPromptObserved, ConsentPressed} {
		rows = append(rows, attemptRow{Name: "the session ends in " + string(s), From: s, On: SessionEnded, To: Cancelled})
	}
	fsmtest.Examples(t, AttemptSpec, rows)
}

func TestRequestTable(t *testing.T) {
	inTime := RequestFacts{Matches: true, Unexpired: true}
	fsmtest.Examples(t, RequestSpec, []requestRow{
		{Name: "confirmed in time", From: RequestPending, Facts: inTime, On: RequestApprove, To: RequestApproved},
		{Name: "confirmed too late", From: RequestPending, On: RequestApprove, To: RequestExpired},
		{Name: "declined", From: RequestPending, On: RequestDeny, To: RequestDenied},
		{Name: "a wrong code with codes left", From: RequestPending, Counters: fsm.Counters{counterWrongCodes: MaxCodeAttempts - 2}, On: RequestWrongCode, To: RequestPending},
		{Name: "the last wrong code denies", From: RequestPending, Counters: fsm.Counters{counterWrongCodes: MaxCodeAttempts - 1}, On: RequestWrongCode, To: RequestDenied},
		{Name: "its lifetime ends while shown", From: RequestPending, On: RequestExpire, To: RequestExpired},
		{Name: "a use before the approval waits", From: RequestPending, Facts: inTime, On: RequestUse, To: RequestPending},
		{Name: "the matching use in time mints one grant", From: RequestApproved, Facts: inTime, On: RequestUse, To: RequestConsumed, Effect: EffectMintGrant},
		{Name: "a use of another scope leaves it approved", From: RequestApproved, Facts: RequestFacts{Unexpired: true}, On: RequestUse, To: RequestApproved},
		{Name: "the matching use too late expires it", From: RequestApproved, Facts: RequestFacts{Matches: true}, On: RequestUse, To: RequestExpired},
		{Name: "its lifetime ends once approved", From: RequestApproved, On: RequestExpire, To: RequestExpired},
		{Name: "single use", From: RequestConsumed, Facts: inTime, On: RequestUse, Refused: true},
		{Name: "a denied request is never approved", From: RequestDenied, Facts: inTime, On: RequestApprove, Refused: true},
		{Name: "an expired request is never approved", From: RequestExpired, Facts: inTime, On: RequestApprove, Refused: true},
		{Name: "no code after the approval", From: RequestApproved, On: RequestWrongCode, Refused: true},
	})
}

func TestGrantTable(t *testing.T) {
	inTime := GrantFacts{IdleLeft: true, AbsoluteLeft: true}
	fsmtest.Examples(t, GrantSpec, []grantRow{
		{Name: "a use in time", From: GrantLive, Facts: inTime, On: GrantUse, To: GrantLive},
		{Name: "a use after the idle expiry", From: GrantLive, Facts: GrantFacts{AbsoluteLeft: true}, On: GrantUse, To: GrantIdleExpired},
		{Name: "a use after the absolute expiry", From: GrantLive, Facts: GrantFacts{IdleLeft: true}, On: GrantUse, To: GrantAbsoluteExpired},
		{Name: "both expiries passed: the absolute one is named", From: GrantLive, On: GrantUse, To: GrantAbsoluteExpired},
		{Name: "the idle timer fires", From: GrantLive, On: GrantIdleTick, To: GrantIdleExpired},
		{Name: "the absolute timer fires", From: GrantLive, On: GrantAbsTick, To: GrantAbsoluteExpired},
		{Name: "revoked", From: GrantLive, On: GrantRevoke, To: GrantRevokedState, Effect: EffectRevokeGrant},
		{Name: "the Runner stops", From: GrantLive, On: GrantDiscard, To: GrantDiscardedRestart},
		{Name: "revocation is final", From: GrantRevokedState, Facts: inTime, On: GrantUse, Refused: true},
		{Name: "an idle-expired grant is not used", From: GrantIdleExpired, Facts: inTime, On: GrantUse, Refused: true},
		{Name: "an absolute-expired grant is not used", From: GrantAbsoluteExpired, Facts: inTime, On: GrantUse, Refused: true},
		{Name: "a discarded grant is not used", From: GrantDiscardedRestart, Facts: inTime, On: GrantUse, Refused: true},
		{Name: "no second revocation", From: GrantRevokedState, On: GrantRevoke, Refused: true},
	})
}

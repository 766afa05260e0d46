package consent

import "github.com/webcodex/webcodex/fsm"

// Facts are what the attempt's guards read: observations by the Runner and
// the ConsentUI adapter, never a caller's claim.
type Facts struct {
	Unexpired      bool // the approval or grant is within its expiry
	OwnerMatches   bool // the endpoint's listening process is the approved fingerprint
	ExactCandidate bool // exactly one prompt candidate with full proof

	// Why an attempt ended where it did, set by the effect that saw it and
	// read by the owner from where the machine came to rest; no guard
	// reads them, and the property checks draw neither.
	Unpressed string // why webcodex pressed nothing, for a deadline refusal
	Failure   error  // the dial's own failure, when it had one
}

// DrawFacts draws random facts for property tests.
func DrawFacts(d fsm.Drawer) Facts {
	return Facts{Unexpired: d.Bool("unexpired"), OwnerMatches: d.Bool("owner_matches"), ExactCandidate: d.Bool("exact_candidate")}
}

var (
	unexpired      = &fsm.Guard[Facts]{Name: "unexpired", OK: func(e fsm.Env[Facts]) bool { return e.Facts.Unexpired }}
	ownerMatches   = &fsm.Guard[Facts]{Name: "owner_matches", OK: func(e fsm.Env[Facts]) bool { return e.Facts.OwnerMatches }}
	exactCandidate = &fsm.Guard[Facts]{Name: "exact_candidate", OK: func(e fsm.Env[Facts]) bool { return e.Facts.ExactCandidate }}
)

type edge = fsm.Edge[State, Trigger, Facts]

// AttemptSpec is the consent machine for one attachment attempt.
var AttemptSpec = (&fsm.Spec[State, Trigger, Facts]{
	Name:  "consent",
	Title: "Consent: one attachment attempt",
	Guards: "One attempt to attach to a person's running browser. Nothing connects before a person's approval mints a grant; " +
		"the endpoint's owner is proven before dialing and again on the live socket; Chrome's own prompt is pressed only under a grant " +
		"that says the person allowed it, at most once (a press the browser ignores still counts), no sooner than " + fsm.HumanDuration(MinPressDelay) + " after it " +
		"was first seen, and only when exactly one candidate has full proof; a dismissal revokes the grant for good; every older capability is " +
		"invalidated before the attachment is handed on. The attempt is cancelled when the session it is for ends.",
	Initial: ApprovalRequired,
	States: []fsm.StateDoc[State]{
		fsm.Doc(ApprovalRequired, "Waiting for a person."),
		fsm.Doc(GrantActive, "A grant covers this browser."),
		fsm.Doc(EndpointPreflight, "Proving who listens on the endpoint."),
		fsm.Doc(ConnectingPendingConsent, "One WebSocket dialed; Chrome may hold the handshake for its prompt."),
		fsm.Doc(ConsentPromptObserved, "The adapter saw prompt candidates."),
		fsm.Doc(ConsentPressed, "The one exact action was pressed."),
		fsm.Doc(SocketReady, "The handshake completed."),
		fsm.Doc(ConsentDismissed, "The person said no."),
		fsm.Doc(GrantRevoked, "The grant is revoked; only a new approval can attach again."),
		fsm.Doc(TimeoutOrAmbiguity, "The deadline passed or the prompt was ambiguous."),
		fsm.Doc(Refused, "The attempt ended with a structured refusal and a human next step."),
		fsm.Doc(EndpointReproved, "The live socket's owner is the approved process."),
		fsm.Doc(CapabilitiesInvalidated, "Every older page handle and ref is refused."),
		fsm.Doc(ReadyForRebind, "The attachment is live on a new generation; callers must list pages again."),
		fsm.Doc(Cancelled, "The session the attempt was for ended: nothing is dialed or pressed any more."),
	},
	Triggers: []Trigger{Approve, Deny, Connect, OwnerProven, HandshakeComplete, PromptObserved, Press, Dismissed, DeadlineExpired, Revoke, Refuse, Reprove, Invalidate, Rebind, SessionEnded},
	Edges: []edge{
		{From: ApprovalRequired, On: Approve, To: GrantActive, Guard: unexpired, Effect: EffectMintGrant},
		{From: ApprovalRequired, On: Approve, To: Refused, Guard: fsm.Not(unexpired)},
		{From: ApprovalRequired, On: Deny, To: Refused},
		{From: GrantActive, On: Connect, To: EndpointPreflight, Effect: EffectProveEndpoint},
		{From: GrantActive, On: Revoke, To: GrantRevoked, Effect: EffectRevokeGrant},
		{From: EndpointPreflight, On: OwnerProven, To: ConnectingPendingConsent, Guard: ownerMatches, Effect: EffectDial},
		{From: EndpointPreflight, On: OwnerProven, To: Refused, Guard: fsm.Not(ownerMatches)},
		{From: EndpointPreflight, On: DeadlineExpired, To: Refused},
		{From: ConnectingPendingConsent, On: HandshakeComplete, To: SocketReady, Effect: EffectReprove, Count: "connections"},
		{From: ConnectingPendingConsent, On: PromptObserved, To: ConsentPromptObserved, Guard: exactCandidate},
		{From: ConnectingPendingConsent, On: PromptObserved, To: TimeoutOrAmbiguity, Guard: fsm.Not(exactCandidate)},
		{From: ConnectingPendingConsent, On: Dismissed, To: ConsentDismissed},
		{From: ConnectingPendingConsent, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{From: ConsentPromptObserved, On: Press, To: ConsentPressed, Effect: EffectPressConsent},
		{From: ConsentPromptObserved, On: Dismissed, To: ConsentDismissed},
		{From: ConsentPromptObserved, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{From: ConsentPressed, On: HandshakeComplete, To: SocketReady, Effect: EffectReprove, Count: "connections"},
		{From: ConsentPressed, On: Dismissed, To: ConsentDismissed},
		{From: ConsentPressed, On: DeadlineExpired, To: TimeoutOrAmbiguity},
		{From: ConsentDismissed, On: Revoke, To: GrantRevoked, Effect: EffectRevokeGrant},
		{From: TimeoutOrAmbiguity, On: Refuse, To: Refused, Effect: EffectClosePending},
		{From: SocketReady, On: Reprove, To: EndpointReproved, Guard: ownerMatches},
		{From: SocketReady, On: Reprove, To: Refused, Guard: fsm.Not(ownerMatches), Effect: EffectClosePending},
		{From: EndpointReproved, On: Invalidate, To: CapabilitiesInvalidated, Effect: EffectInvalidate},
		{From: CapabilitiesInvalidated, On: Rebind, To: ReadyForRebind, Effect: EffectHandOver},
		{From: ApprovalRequired, On: SessionEnded, To: Cancelled},
		{From: GrantActive, On: SessionEnded, To: Cancelled},
		{From: EndpointPreflight, On: SessionEnded, To: Cancelled},
		{From: ConnectingPendingConsent, On: SessionEnded, To: Cancelled},
		{From: ConsentPromptObserved, On: SessionEnded, To: Cancelled},
		{From: ConsentPressed, On: SessionEnded, To: Cancelled},
	},
	Effects: []fsm.Effect{EffectMintGrant, EffectProveEndpoint, EffectDial, EffectPressConsent, EffectRevokeGrant,
		EffectClosePending, EffectReprove, EffectInvalidate, EffectHandOver},
	Stable:       []State{ApprovalRequired, GrantActive},
	Terminal:     []State{GrantRevoked, Refused, ReadyForRebind, Cancelled},
	MaxTransient: 8,
	Generation:   "connections",
	Invalidate:   EffectInvalidate,
	Live:         []State{ReadyForRebind},
	Revoked:      []State{ConsentDismissed, GrantRevoked},
	Armed:        []State{GrantActive, EndpointPreflight, ConnectingPendingConsent},
	DrawFacts:    DrawFacts,
}).MustValidate()

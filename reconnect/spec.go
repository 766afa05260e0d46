package reconnect

import (
	"strconv"

	"github.com/webcodex/webcodex/fsm"
)

// Facts are what the reconnect guards read: observations the leader's
// effects made, never a caller's claim.
type Facts struct {
	SameProcess    bool // process fingerprint, profile, endpoint owner and grant re-proven before dialing
	OwnerReproved  bool // the live socket's endpoint is still owned by the approved process (checked after the dial)
	ExactCandidate bool // exactly one prompt candidate with full proof

	// Cause is why the flight ended where it did, set by the effect that
	// saw it and read by the outcome; no guard reads it.
	Cause error
}

var (
	sameProcess    = &fsm.Guard[Facts]{Name: "same_process", OK: func(e fsm.Env[Facts]) bool { return e.Facts.SameProcess }}
	ownerReproved  = &fsm.Guard[Facts]{Name: "owner_reproved", OK: func(e fsm.Env[Facts]) bool { return e.Facts.OwnerReproved }}
	exactCandidate = &fsm.Guard[Facts]{Name: "exact_candidate", OK: func(e fsm.Env[Facts]) bool { return e.Facts.ExactCandidate }}
)

type edge = fsm.Edge[State, Trigger, Facts]

// attemptStates are the states of one pending connection attempt: the
// handshake may complete, fail or be dismissed from each.
var attemptStates = []State{ConnectingPending, PromptObservedState, Pressed}

// inFlight are the states a deadline or a session end can interrupt.
var inFlight = append([]State{Singleflight, GatesClosed, Revalidated}, attemptStates...)

func attemptOutcomes() []edge {
	var out []edge
	for _, s := range attemptStates {
		out = append(out,
			edge{From: s, On: Connected, To: GenerationIncremented, Guard: ownerReproved, Effect: EffectAdopt, Count: "generation"},
			edge{From: s, On: Connected, To: Lost, Guard: fsm.Not(ownerReproved), Effect: EffectClose},
			edge{From: s, On: DialFailed, To: Revalidated, Effect: EffectRetry, Count: "retries"},
			edge{From: s, On: PromptDismissed, To: Dismissed})
	}
	return out
}

func interruptions() []edge {
	var out []edge
	for _, s := range inFlight {
		out = append(out,
			edge{From: s, On: DeadlineExpired, To: Exhausted},
			edge{From: s, On: SessionEnded, To: Cancelled})
	}
	return out
}

func edges(groups ...[]edge) []edge {
	var out []edge
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Spec is the reconnect machine.
var Spec = (&fsm.Spec[State, Trigger, Facts]{
	Name:  "reconnect",
	Title: "Reconnect after socket loss",
	Guards: "What happens when the one browser-level socket is lost. One leader per browser; every mutation gate is closed " +
		"before anything else; process, profile, endpoint and grant are re-proven before dialing, and the endpoint's owner " +
		"again on the live socket (a PID or port reused meanwhile is refused); at most " + strconv.Itoa(MaxAttempts) + " connection attempts under one " +
		"deadline, each with at most one press of the browser's prompt and only on exactly one proven candidate; a dismissal " +
		"revokes the grant; the generation increments and every older page handle and ref is refused before the gates " +
		"reopen. A mutation in flight completes on the old generation or is refused. The owning session's end cancels it.",
	Initial: Ready,
	States: []fsm.StateDoc[State]{
		fsm.Doc(Ready, "Connected."),
		fsm.Doc(Singleflight, "One leader owns the transition; other requests join it."),
		fsm.Doc(GatesClosed, "No mutation may start; process, profile, endpoint and grant are being re-proven."),
		fsm.Doc(Revalidated, "Process, profile and endpoint re-proven."),
		fsm.Doc(ConnectingPending, "One socket dialed, maybe held by the browser's prompt."),
		fsm.Doc(PromptObservedState, "The adapter saw exactly one prompt candidate with full proof."),
		fsm.Doc(Pressed, "This attempt's one press was made (a press the browser ignores still counts)."),
		fsm.Doc(Ambiguous, "The prompt could not be identified exactly, or changed under the press: browser_wrong_target_refused."),
		fsm.Doc(Dismissed, "The person said no to the browser's prompt."),
		fsm.Doc(GenerationIncremented, "The live socket's owner is the approved process; a new generation is minted."),
		fsm.Doc(CapabilitiesInvalid, "Every capability of an older generation is refused."),
		fsm.Doc(GatesReopened, "Mutations may start on the new generation."),
		fsm.Doc(ReadyForRebind, "Connected on the new generation; callers must list pages again."),
		fsm.Doc(Exhausted, "The attempt budget or the one deadline is spent: browser_reconnect_exhausted."),
		fsm.Doc(Revoked, "The grant is revoked: browser_consent_revoked, never retried."),
		fsm.Doc(Lost, "The process or endpoint changed, before or after the dial: a new approval is needed."),
		fsm.Doc(Cancelled, "The owning session ended."),
	},
	Triggers: []Trigger{SocketLost, CloseGates, Revalidate, Dial, PromptObserved, Press, PromptUnclear, Connected, DialFailed,
		PromptDismissed, Revoke, Invalidate, ReopenGates, Rebind, DeadlineExpired, SessionEnded},
	Edges: edges([]edge{
		{From: Ready, On: SocketLost, To: Singleflight, Effect: EffectLead, Count: "losses", Reset: []string{"attempts"}},
		{From: ReadyForRebind, On: SocketLost, To: Singleflight, Effect: EffectLead, Count: "losses", Reset: []string{"attempts"}},
		{From: Singleflight, On: CloseGates, To: GatesClosed, Effect: EffectCloseGates},
		{From: GatesClosed, On: Revalidate, To: Revalidated, Guard: sameProcess},
		{From: GatesClosed, On: Revalidate, To: Lost, Guard: fsm.Not(sameProcess)},
		{From: Revalidated, On: Dial, To: ConnectingPending, Guard: fsm.Below[Facts]("attempts", MaxAttempts), Effect: EffectDial, Count: "attempts"},
		{From: Revalidated, On: Dial, To: Exhausted, Guard: fsm.AtLeast[Facts]("attempts", MaxAttempts)},
		{From: ConnectingPending, On: PromptObserved, To: PromptObservedState, Guard: exactCandidate},
		{From: ConnectingPending, On: PromptObserved, To: Ambiguous, Guard: fsm.Not(exactCandidate)},
		{From: PromptObservedState, On: Press, To: Pressed, Effect: EffectPress, Count: "presses"},
		{From: PromptObservedState, On: PromptUnclear, To: Ambiguous},
		{From: Pressed, On: PromptUnclear, To: Ambiguous},
	}, attemptOutcomes(), []edge{
		{From: Dismissed, On: Revoke, To: Revoked, Effect: EffectRevokeGrant},
		{From: GenerationIncremented, On: Invalidate, To: CapabilitiesInvalid, Effect: EffectInvalidate},
		{From: CapabilitiesInvalid, On: ReopenGates, To: GatesReopened, Effect: EffectReopenGates},
		{From: GatesReopened, On: Rebind, To: ReadyForRebind},
		// The owning session ends with no flight running.
		{From: Ready, On: SessionEnded, To: Cancelled},
		{From: ReadyForRebind, On: SessionEnded, To: Cancelled},
	}, interruptions()),
	Effects: []fsm.Effect{EffectLead, EffectCloseGates, EffectDial, EffectPress, EffectRetry, EffectAdopt, EffectClose,
		EffectInvalidate, EffectReopenGates, EffectRevokeGrant},
	Stable:   []State{Ready, ReadyForRebind},
	Terminal: []State{Ambiguous, Exhausted, Revoked, Lost, Cancelled},
	Budgets:  fsm.Counters{"attempts": MaxAttempts},
	// The longest run between rests: lead, close, revalidate; then per
	// failed attempt dial, observe, press, fail; then the last attempt's
	// dial, observe, press, connect, invalidate, reopen.
	MaxTransient: 3 + 4*(MaxAttempts-1) + 6,
	Generation:   "generation",
	Invalidate:   EffectInvalidate,
	Revoked:      []State{Dismissed, Revoked},
	Armed:        []State{Ready, ReadyForRebind, ConnectingPending, PromptObservedState, Pressed},
	Flight:       EffectLead,
	DrawFacts: func(d fsm.Drawer) Facts {
		return Facts{SameProcess: d.Bool("same_process"), OwnerReproved: d.Bool("owner_reproved"), ExactCandidate: d.Bool("exact_candidate")}
	},
}).MustValidate()

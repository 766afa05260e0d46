package reconnect

import "github.com/webcodex/webcodex/fsm"

// Facts are what the reconnect guards read.
type Facts struct {
	SameProcess bool // process fingerprint, profile and endpoint owner re-proven equal
}

var sameProcess = &fsm.Guard[Facts]{Name: "same_process", OK: func(e fsm.Env[Facts]) bool { return e.Facts.SameProcess }}

type edge = fsm.Edge[State, Trigger, Facts]

// inFlight are the states a deadline or a session end can interrupt.
var inFlight = []State{Singleflight, GatesClosed, Revalidated, ConnectingPending}

func interruptions() []edge {
	var out []edge
	for _, s := range inFlight {
		out = append(out,
			edge{From: s, On: DeadlineExpired, To: Exhausted},
			edge{From: s, On: SessionEnded, To: Cancelled})
	}
	return out
}

// Spec is the reconnect machine.
var Spec = (&fsm.Spec[State, Trigger, Facts]{
	Name:  "reconnect",
	Title: "Reconnect after socket loss",
	Guards: "What happens when the one browser-level socket is lost. One leader per browser; every mutation gate is closed " +
		"before anything else; process, profile and endpoint are re-proven; at most three connection attempts under one " +
		"deadline; a dismissal of the browser's prompt revokes the grant; the generation increments and every older page " +
		"handle and ref is refused before the gates reopen. A mutation in flight completes on the old generation or is refused.",
	Initial: Ready,
	States: []fsm.StateDoc[State]{
		fsm.Doc(Ready, "Connected."),
		fsm.Doc(Singleflight, "One leader owns the transition; other requests join it."),
		fsm.Doc(GatesClosed, "No mutation may start."),
		fsm.Doc(Revalidated, "Process, profile and endpoint re-proven."),
		fsm.Doc(ConnectingPending, "One socket dialed, maybe held by the browser's prompt."),
		fsm.Doc(GenerationIncremented, "A new generation is minted."),
		fsm.Doc(CapabilitiesInvalid, "Every capability of an older generation is refused."),
		fsm.Doc(GatesReopened, "Mutations may start on the new generation."),
		fsm.Doc(ReadyForRebind, "Connected on the new generation; callers must list pages again."),
		fsm.Doc(Exhausted, "The attempt budget or the one deadline is spent: browser_reconnect_exhausted."),
		fsm.Doc(Revoked, "The person dismissed the prompt: browser_consent_revoked, never retried."),
		fsm.Doc(Lost, "The process or endpoint changed: a new approval is needed."),
		fsm.Doc(Cancelled, "The owning session ended."),
	},
	Triggers: []Trigger{SocketLost, CloseGates, Revalidate, Dial, Connected, DialFailed, PromptDismissed, Invalidate, ReopenGates, Rebind, DeadlineExpired, SessionEnded},
	Edges: append([]edge{
		{From: Ready, On: SocketLost, To: Singleflight, Effect: EffectLead, Count: "losses", Reset: []string{"attempts"}},
		{From: ReadyForRebind, On: SocketLost, To: Singleflight, Effect: EffectLead, Count: "losses", Reset: []string{"attempts"}},
		{From: Singleflight, On: CloseGates, To: GatesClosed, Effect: EffectCloseGates},
		{From: GatesClosed, On: Revalidate, To: Revalidated, Guard: sameProcess},
		{From: GatesClosed, On: Revalidate, To: Lost, Guard: fsm.Not(sameProcess)},
		{From: Revalidated, On: Dial, To: ConnectingPending, Guard: fsm.Below[Facts]("attempts", MaxAttempts), Effect: EffectDial, Count: "attempts"},
		{From: Revalidated, On: Dial, To: Exhausted, Guard: fsm.AtLeast[Facts]("attempts", MaxAttempts)},
		{From: ConnectingPending, On: Connected, To: GenerationIncremented, Count: "generation"},
		{From: ConnectingPending, On: DialFailed, To: Revalidated},
		{From: ConnectingPending, On: PromptDismissed, To: Revoked, Effect: EffectRevokeGrant},
		{From: GenerationIncremented, On: Invalidate, To: CapabilitiesInvalid, Effect: EffectInvalidate},
		{From: CapabilitiesInvalid, On: ReopenGates, To: GatesReopened, Effect: EffectReopenGates},
		{From: GatesReopened, On: Rebind, To: ReadyForRebind},
	}, interruptions()...),
	Effects:      []fsm.Effect{EffectLead, EffectCloseGates, EffectDial, EffectRevokeGrant, EffectInvalidate, EffectReopenGates},
	Stable:       []State{Ready, ReadyForRebind},
	Terminal:     []State{Exhausted, Revoked, Lost, Cancelled},
	Budgets:      fsm.Counters{"attempts": MaxAttempts},
	MaxTransient: 3 + 2*MaxAttempts + 3,
	Generation:   "generation",
	Invalidate:   EffectInvalidate,
	Revoked:      []State{Revoked},
	Armed:        []State{Ready, ReadyForRebind, ConnectingPending},
	Flight:       EffectLead,
	DrawFacts:    func(d fsm.Drawer) Facts { return Facts{SameProcess: d.Bool("same_process")} },
}).MustValidate()

// Package reconnect owns what happens when a browser connection is lost:
// the reconnect machine, connection generations, the single-flight leader,
// the attempt budget and the one deadline. It asks consent/ nothing itself:
// the owner feeds it the grant's verdicts as facts.
package reconnect

// State is a state of the reconnect machine. The names are seed 003's, with
// the prompt sub-states and consent_dismissed of its consent machine.
type State string

// Reconnect states. Their exits are rendered from the declared edges (spec/).
const (
	Ready                 State = "ready"                                // connected.
	Singleflight          State = "reconnect_singleflight"               // one leader owns the transition; others join it.
	GatesClosed           State = "mutation_gates_closed"                // no mutation may start.
	Revalidated           State = "process_profile_endpoint_revalidated" // process, profile and endpoint re-proven.
	ConnectingPending     State = "connecting_pending_consent"           // one socket dialed, maybe held by the prompt.
	PromptObservedState   State = "consent_prompt_observed"              // exactly one proven prompt candidate seen.
	Pressed               State = "consent_pressed"                      // this attempt's one press was made.
	Ambiguous             State = "consent_ambiguous"                    // the prompt could not be identified or pressed exactly.
	Dismissed             State = "consent_dismissed"                    // the person said no.
	GenerationIncremented State = "endpoint_generation_incremented"      // a new generation is minted.
	CapabilitiesInvalid   State = "old_capabilities_invalidated"         // every capability of an older generation is refused.
	GatesReopened         State = "mutation_gates_reopened"              // mutations may start on the new generation.
	ReadyForRebind        State = "ready_for_rebind"                     // connected on the new generation.
	Exhausted             State = "exhausted"                            // budget or deadline spent.
	Revoked               State = "grant_revoked"                        // the person dismissed the prompt.
	Lost                  State = "lost"                                 // the process or endpoint changed.
	Cancelled             State = "cancelled"                            // the owning session ended.
)

// Trigger is an event fed into the reconnect machine.
type Trigger string

// Reconnect triggers.
const (
	SocketLost      Trigger = "socket_lost"     // the transport closed, or a person asked to reconnect
	CloseGates      Trigger = "close_gates"     // close every mutation gate of the browser
	Revalidate      Trigger = "revalidate"      // the re-proof of process, profile and endpoint is in
	Dial            Trigger = "dial"            // open one browser-level socket
	PromptObserved  Trigger = "prompt_observed" // the ConsentUI adapter saw prompt candidates
	Press           Trigger = "press"           // press the one exact candidate
	PromptUnclear   Trigger = "prompt_unclear"  // the prompt changed under the press, or the press failed
	Connected       Trigger = "connected"       // the socket's handshake completed; its owner was re-proven
	DialFailed      Trigger = "dial_failed"     // the attempt failed
	PromptDismissed Trigger = "dismissed"       // the person cancelled the browser's prompt
	Revoke          Trigger = "revoke"          // revoke the grant
	Invalidate      Trigger = "invalidate"      // refuse every older capability
	ReopenGates     Trigger = "reopen_gates"    // reopen the mutation gates
	Rebind          Trigger = "rebind"          // tell callers to list pages again
	DeadlineExpired Trigger = "deadline"        // the transition's one deadline passed
	SessionEnded    Trigger = "session_ended"   // the owning session ended
)

// Effects the owner runs after reconnect transitions.
const (
	EffectLead        = "lead_reconnect"
	EffectCloseGates  = "close_mutation_gates"
	EffectDial        = "dial_websocket"
	EffectPress       = "press_consent"
	EffectRetry       = "await_retry"
	EffectAdopt       = "adopt_socket"
	EffectClose       = "close_pending_socket"
	EffectInvalidate  = "invalidate_capabilities"
	EffectReopenGates = "reopen_mutation_gates"
	EffectRevokeGrant = "revoke_grant"
)

// MaxAttempts is the most connection attempts per loss.
const MaxAttempts = 3

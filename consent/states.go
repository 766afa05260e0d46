// Package consent owns the person's approval of an attachment to their own
// browser: approval requests, grants and their scope and expiry, the machine
// for one attachment attempt, and the ConsentUI adapter interface.
//
// It opens no sockets: the Runner fires triggers into these machines and
// runs the effects they return.
package consent

// State is a state of the consent machine (one attachment attempt). The
// names are seed 003's.
type State string

// Attempt states. Their exits are rendered from the declared edges (spec/).
const (
	ApprovalRequired         State = "approval_required"          // waiting for a person's approval.
	GrantActive              State = "grant_active"               // a grant covers this browser.
	EndpointPreflight        State = "endpoint_preflight"         // proving who listens on the endpoint.
	ConnectingPendingConsent State = "connecting_pending_consent" // one WebSocket dialed; the prompt may hold it.
	ConsentPromptObserved    State = "consent_prompt_observed"    // the adapter saw prompt candidates.
	ConsentPressed           State = "consent_pressed"            // the one exact candidate was pressed.
	SocketReady              State = "socket_ready"               // the handshake completed.
	ConsentDismissed         State = "consent_dismissed"          // the person said no.
	GrantRevoked             State = "grant_revoked"              // the grant is gone; a new approval is needed.
	TimeoutOrAmbiguity       State = "timeout_or_ambiguity"       // the deadline passed or the prompt was ambiguous.
	Refused                  State = "refused"                    // the attempt failed with a structured refusal.
	EndpointReproved         State = "endpoint_reproved"          // the live socket's owner is the approved process.
	CapabilitiesInvalidated  State = "capabilities_invalidated"   // every older page handle and ref is refused.
	ReadyForRebind           State = "ready_for_rebind"           // the attachment is live on a new generation.
	Cancelled                State = "cancelled"                  // the session the attempt was for ended.
)

// Trigger is an event fed into the consent machine by the Runner, a
// transport or a ConsentUI adapter.
type Trigger string

// Attempt triggers.
const (
	Approve           Trigger = "approve"            // a person approved the matching request
	Deny              Trigger = "deny"               // a person denied it, or it expired
	Connect           Trigger = "connect"            // start the attempt under the grant
	OwnerProven       Trigger = "owner_proven"       // the endpoint's owner process was checked
	HandshakeComplete Trigger = "handshake_complete" // the WebSocket upgrade completed
	PromptObserved    Trigger = "prompt_observed"    // the ConsentUI adapter saw candidates
	Press             Trigger = "press"              // press the one exact candidate
	Dismissed         Trigger = "dismissed"          // the person cancelled the prompt (HTTP 403)
	DeadlineExpired   Trigger = "deadline"           // the attempt's deadline passed
	Revoke            Trigger = "revoke"             // revoke the grant
	Refuse            Trigger = "refuse"             // give up with a refusal
	Reprove           Trigger = "reprove"            // re-prove the endpoint owner on the live socket
	Invalidate        Trigger = "invalidate"         // invalidate every older capability
	Rebind            Trigger = "rebind"             // hand the socket to the attachment
	SessionEnded      Trigger = "session_ended"      // the session the attempt is for ended (its caller went away)
)

// Effects the owner runs after consent transitions.
const (
	EffectMintGrant     = "mint_grant"
	EffectProveEndpoint = "prove_endpoint"
	EffectDial          = "dial_websocket"
	EffectPressConsent  = "press_consent"
	EffectRevokeGrant   = "revoke_grant"
	EffectClosePending  = "close_pending_socket"
	EffectInvalidate    = "invalidate_capabilities"
	EffectReprove       = "reprove_endpoint"
	EffectHandOver      = "hand_over_socket"
)

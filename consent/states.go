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

// Attempt states. Each doc lists the state's exits.
const (
	ApprovalRequired         State = "approval_required"          // moves to grant_active (approved) or refused (denied, expired).
	GrantActive              State = "grant_active"               // moves to endpoint_preflight (connect) or grant_revoked (revoke).
	EndpointPreflight        State = "endpoint_preflight"         // moves to connecting_pending_consent (owner proven), refused (mismatch, deadline).
	ConnectingPendingConsent State = "connecting_pending_consent" // moves to socket_ready, consent_prompt_observed, consent_dismissed or timeout_or_ambiguity.
	ConsentPromptObserved    State = "consent_prompt_observed"    // moves to consent_pressed (one exact candidate), consent_dismissed or timeout_or_ambiguity.
	ConsentPressed           State = "consent_pressed"            // moves to socket_ready, consent_dismissed or timeout_or_ambiguity.
	SocketReady              State = "socket_ready"               // moves to endpoint_reproved (same owner) or refused (owner changed).
	ConsentDismissed         State = "consent_dismissed"          // moves to grant_revoked.
	GrantRevoked             State = "grant_revoked"              // terminal: the grant is gone; a new approval is needed.
	TimeoutOrAmbiguity       State = "timeout_or_ambiguity"       // moves to refused.
	Refused                  State = "refused"                    // terminal: the attempt failed with a structured refusal.
	EndpointReproved         State = "endpoint_reproved"          // moves to capabilities_invalidated.
	CapabilitiesInvalidated  State = "capabilities_invalidated"   // moves to ready_for_rebind.
	ReadyForRebind           State = "ready_for_rebind"           // terminal: the attachment is live on a new generation.
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
)

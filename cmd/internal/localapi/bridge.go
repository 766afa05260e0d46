package localapi

import "github.com/webcodex/webcodex/cmd/internal/op"

// AttachOfferRequest attaches the tab a person shared from the webcodex
// extension, by its exact offer id. Allow is the origin allowlist (empty =
// nothing), as for attach.
type AttachOfferRequest struct {
	Offer         string   `json:"offer"`
	Allow         []string `json:"allow,omitempty"`
	AllowEvaluate bool     `json:"allowEvaluate,omitempty"`
}

// BridgeOffer is op.BridgeOffer.
type BridgeOffer = op.BridgeOffer

// BridgeStatus is op.BridgeState.
type BridgeStatus = op.BridgeState

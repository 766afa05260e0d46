package localapi

import "time"

// AttachOfferRequest attaches the tab a person shared from the webcodex
// extension, by its exact offer id. Allow is the origin allowlist (empty =
// nothing), as for attach.
type AttachOfferRequest struct {
	Offer         string   `json:"offer"`
	Allow         []string `json:"allow,omitempty"`
	AllowEvaluate bool     `json:"allowEvaluate,omitempty"`
}

// BridgeOffer is a shared tab waiting to be attached. Origin and Title are
// set only when the caller's allowlist allows the tab's URL; the id alone
// is always listed.
type BridgeOffer struct {
	ID      string    `json:"offer"`
	Origin  string    `json:"origin,omitempty"`
	Title   string    `json:"title,omitempty"`
	Expires time.Time `json:"expires"`
}

// BridgeStatus reports the extension bridge: counts only, never a token,
// port or URL.
type BridgeStatus struct {
	Installed bool `json:"installed"`
	Listening bool `json:"listening"`
	Peers     int  `json:"peers"`     // native-host connections, unverified included
	Connected int  `json:"connected"` // authenticated native hosts
	Offers    int  `json:"offers"`    // shared tabs waiting
	Attached  int  `json:"attached"`  // shared tabs attached
	// Why says why no native host is connected, when none is: from the
	// host's own record of its last start, and the installed manifest.
	Why  string `json:"why,omitempty"`
	Next string `json:"next,omitempty"`
}

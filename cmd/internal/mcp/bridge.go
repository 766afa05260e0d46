package mcp

import (
	"context"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// attachOffer is browser_attach {offer}: the tab the person shared from
// the webcodex extension, under this server's allowlist and evaluate
// switch. The person's Share was the consent: there is no approval step,
// and nothing else of their browser is reached.
func (s *Server) attachOffer(ctx context.Context, in attachIn) (any, error) {
	if in.Candidate != "" || in.ProfileDir != "" || in.Endpoint != "" || in.PressPrompt {
		return nil, fsm.Refuse(fsm.InvalidArgument, "offer attaches a tab shared from the extension: give it alone")
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	res, err := call(ctx, s.runner, localapi.AttachOffer, localapi.AttachOfferRequest{Offer: in.Offer, Allow: s.opts.Allow, AllowEvaluate: s.opts.AllowEvaluate})
	if err != nil {
		return nil, err
	}
	return s.attached(res), nil
}

// visibleOffers strips the origin and title of each offer whose origin
// this server's allowlist does not allow: the agent sees that a tab is
// shared, and what it is only where it may act.
func (s *Server) visibleOffers(offers []localapi.BridgeOffer) []localapi.BridgeOffer {
	gate, _ := origin.New(origin.Attached, s.opts.Allow)
	out := make([]localapi.BridgeOffer, 0, len(offers))
	for _, o := range offers {
		if o.Origin == "" || !gate.Allowed(o.Origin+"/") {
			o.Origin, o.Title = "", ""
		}
		out = append(out, o)
	}
	return out
}

package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// OfferState is a state of an extension tab offer.
type OfferState string

// Offer states. Their exits are rendered from the declared edges (spec/).
const (
	OfferOffered  OfferState = "offered"  // shared and waiting.
	OfferConsumed OfferState = "consumed" // the Runner attached to that exact tab.
	OfferExpired  OfferState = "expired"  // its lifetime ended.
	OfferRevoked  OfferState = "revoked"  // the person withdrew it.
)

// OfferTrigger is an event on an offer.
type OfferTrigger string

// Offer triggers.
const (
	OfferConsume OfferTrigger = "consume"
	OfferExpire  OfferTrigger = "expire"
	OfferRevoke  OfferTrigger = "revoke"
)

// EffectAttachDebugger hands the offered tab to the consumer, which attaches
// the debugger to exactly that tab.
const EffectAttachDebugger fsm.Effect = "attach_debugger"

// OfferFacts are read by the offer's guards.
type OfferFacts struct{ Unexpired bool }

var offerUnexpired = &fsm.Guard[OfferFacts]{Name: "unexpired", OK: func(e fsm.Env[OfferFacts]) bool { return e.Facts.Unexpired }}

// OfferSpec is the lifetime of one tab the person shared from the extension.
var OfferSpec = (&fsm.Spec[OfferState, OfferTrigger, OfferFacts]{
	Name:  "extension_offer",
	Title: "Extension offer",
	Guards: "A tab the person shared from the extension's popup. Nothing is attached until the Runner consumes that exact " +
		"offer, once, within " + fsm.HumanDuration(OfferTTL) + "; at most " + strconv.Itoa(MaxLiveOffers) + " offers are live at once.",
	Initial: OfferOffered,
	States: []fsm.StateDoc[OfferState]{
		fsm.Doc(OfferOffered, "Shared and waiting."),
		fsm.Doc(OfferConsumed, "Attached to exactly that tab."),
		fsm.Doc(OfferExpired, "Its lifetime ended before it was used."),
		fsm.Doc(OfferRevoked, "The person withdrew it."),
	},
	Triggers: []OfferTrigger{OfferConsume, OfferExpire, OfferRevoke},
	Edges: []fsm.Edge[OfferState, OfferTrigger, OfferFacts]{
		{From: OfferOffered, On: OfferConsume, To: OfferConsumed, Guard: offerUnexpired, Effect: EffectAttachDebugger},
		{From: OfferOffered, On: OfferConsume, To: OfferExpired, Guard: fsm.Not(offerUnexpired)},
		{From: OfferOffered, On: OfferExpire, To: OfferExpired},
		{From: OfferOffered, On: OfferRevoke, To: OfferRevoked},
	},
	Effects:      []fsm.Effect{EffectAttachDebugger},
	Stable:       []OfferState{OfferOffered},
	Terminal:     []OfferState{OfferConsumed, OfferExpired, OfferRevoked},
	MaxTransient: 1,
	Revoked:      []OfferState{OfferExpired, OfferRevoked},
	Armed:        []OfferState{OfferConsumed},
	DrawFacts:    func(d fsm.Drawer) OfferFacts { return OfferFacts{Unexpired: d.Bool("unexpired")} },
}).MustValidate()

// Offer limits.
const (
	MaxLiveOffers = 16
	OfferTTL      = 10 * time.Minute
)

// Offers holds live extension offers. Safe for concurrent use.
type Offers struct {
	Now func() time.Time // nil means time.Now

	mu     sync.Mutex
	offers map[string]*offer
}

type offer struct {
	tab     int
	expires time.Time
	owner   *fsm.Owner[OfferState, OfferTrigger, OfferFacts]
}

// NewOffers returns an empty book.
func NewOffers() *Offers { return &Offers{offers: map[string]*offer{}} }

func (o *Offers) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func newOffer(tab int, expires time.Time) *offer {
	of := &offer{tab: tab, expires: expires}
	of.owner = fsm.NewOwner(OfferSpec, fsm.Effects[OfferState, OfferTrigger]{
		EffectAttachDebugger: of.handOver,
	})
	return of
}

// handOver is attach_debugger: from here the tab is the consumer's, which
// Consume reads from the machine's state (consumed).
func (of *offer) handOver(context.Context, fsm.Step[OfferState, OfferTrigger]) (OfferTrigger, error) {
	return "", nil
}

// end fires an ending trigger at an offer in the book. Every offer in the
// book is offered (each ending removes it under o.mu), so a refusal means
// the book is broken.
func (of *offer) end(t OfferTrigger) {
	if _, err := of.owner.Fire(context.Background(), t); err != nil {
		panic(fmt.Sprintf("lease: offer in %s: %v", of.owner.State(), err))
	}
}

// Offer records a shared tab and returns the offer's id. A 17th live offer
// is refused with limit_exceeded.
func (o *Offers) Offer(tab int) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expireLocked()
	if len(o.offers) >= MaxLiveOffers {
		return "", fsm.Refusef(fsm.LimitExceeded, "at most %d shared tabs may wait at once", MaxLiveOffers)
	}
	var b [12]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	o.offers[id] = newOffer(tab, o.now().Add(OfferTTL))
	return id, nil
}

// Consume takes the offer id once and returns its tab. An offer is
// consumable until just before its expiry, never at it.
func (o *Offers) Consume(id string) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	of := o.offers[id]
	delete(o.offers, id)
	if of == nil {
		return 0, fsm.Refuse(fsm.NotFound, "no such live offer")
	}
	of.owner.SetFacts(func(f *OfferFacts) { f.Unexpired = o.now().Before(of.expires) })
	if _, err := of.owner.Fire(context.Background(), OfferConsume); err != nil {
		return 0, err
	}
	if of.owner.State() != OfferConsumed {
		return 0, fsm.Refuse(fsm.NotFound, "no such live offer") // expired as it was consumed
	}
	return of.tab, nil
}

// Revoke withdraws an offer.
func (o *Offers) Revoke(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if of := o.offers[id]; of != nil {
		delete(o.offers, id)
		of.end(OfferRevoke)
	}
}

// Sweep expires every offer whose ten minutes have passed and returns
// their ids, so their owner can tell the person's extension.
func (o *Offers) Sweep() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.expireLocked()
}

// Live reports whether id is a live (unexpired, unconsumed) offer.
func (o *Offers) Live(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	of := o.offers[id]
	return of != nil && o.now().Before(of.expires)
}

func (o *Offers) expireLocked() []string {
	now := o.now()
	var gone []string
	for id, of := range o.offers {
		if !now.Before(of.expires) {
			delete(o.offers, id)
			of.end(OfferExpire)
			gone = append(gone, id)
		}
	}
	return gone
}

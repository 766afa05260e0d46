package lease

import (
	"context"
	"fmt"
	"sync"

	"github.com/webcodex/webcodex/fsm"
)

// GateState is a state of one mutation gate.
type GateState string

// Mutation gate states. Their exits are rendered from the declared edges (spec/).
const (
	GateOpen     GateState = "open"                 // no mutation running.
	GateHeld     GateState = "held"                 // one mutation runs.
	GateDraining GateState = "draining"             // a reconnect began while a mutation ran.
	GateClosed   GateState = "closed_for_reconnect" // reconnecting: acquires wait or are refused.
)

// GateTrigger is an event on a mutation gate.
type GateTrigger string

// Mutation gate triggers.
const (
	GateAcquire GateTrigger = "acquire"
	GateRelease GateTrigger = "release"
	GateClose   GateTrigger = "close_for_reconnect"
	GateReopen  GateTrigger = "reopen"
)

// GateSpec is the mutation gate keyed by (browser identity, target).
var GateSpec = (&fsm.Spec[GateState, GateTrigger, struct{}]{
	Name:  "mutation_gate",
	Title: "Mutation gate",
	Guards: "Serializes side-effecting actions on one target (browser identity, target) across sessions, held across " +
		"revalidation, dispatch and verification; different targets proceed in parallel. A reconnect closes every gate of " +
		"the browser: new mutations wait or are refused, and a holder that has not dispatched yet is refused with " +
		"browser_binding_stale, so no mutation continues on a new generation.",
	Initial: GateOpen,
	States: []fsm.StateDoc[GateState]{
		fsm.Doc(GateOpen, "No mutation running."),
		fsm.Doc(GateHeld, "One mutation runs."),
		fsm.Doc(GateDraining, "A reconnect began while a mutation ran: its ticket is refused before dispatch."),
		fsm.Doc(GateClosed, "Reconnecting: acquires wait or are refused."),
	},
	Triggers: []GateTrigger{GateAcquire, GateRelease, GateClose, GateReopen},
	Edges: []fsm.Edge[GateState, GateTrigger, struct{}]{
		{From: GateOpen, On: GateAcquire, To: GateHeld},
		{From: GateHeld, On: GateRelease, To: GateOpen},
		{From: GateOpen, On: GateClose, To: GateClosed},
		{From: GateHeld, On: GateClose, To: GateDraining},
		{From: GateDraining, On: GateRelease, To: GateClosed},
		{From: GateClosed, On: GateReopen, To: GateOpen, Count: "generation"},
	},
	Stable:       []GateState{GateOpen, GateHeld, GateDraining, GateClosed},
	MaxTransient: 1,
}).MustValidate()

// GateKey names one target of one browser.
type GateKey struct {
	Browser string // opaque browser identity
	Target  string // target within it
}

// Gates holds the mutation gates of every browser. Each gate is an owner of
// its machine (no effects: the machine only decides who may hold it), and
// every trigger fired here is one the gate's state takes. Safe for
// concurrent use.
type Gates struct {
	mu      sync.Mutex // mu guards the fields that follow
	gates   map[GateKey]*gate
	closed  map[string]bool   // browsers closed for reconnect
	gen     map[string]uint64 // per-browser reopen count
	changed chan struct{}     // closed and replaced on every release or reopen
}

type gate struct {
	owner *fsm.Owner[GateState, GateTrigger, struct{}]
}

// NewGates returns an empty set of gates.
func NewGates() *Gates {
	return &Gates{gates: map[GateKey]*gate{}, closed: map[string]bool{}, gen: map[string]uint64{}, changed: make(chan struct{})}
}

// fire fires t at gt. The callers fire only what the gate's state takes
// (they hold g.mu and checked it), so a refusal means the gate's
// bookkeeping is broken: it panics rather than let two holders in.
func (gt *gate) fire(t GateTrigger) {
	if _, err := gt.owner.Fire(context.Background(), t); err != nil {
		panic(fmt.Sprintf("lease: mutation gate in %s: %v", gt.owner.State(), err))
	}
}

func (g *Gates) gateLocked(k GateKey) *gate {
	gt := g.gates[k]
	if gt == nil {
		gt = &gate{owner: fsm.NewOwner(GateSpec, fsm.Effects[GateState, GateTrigger]{})}
		if g.closed[k.Browser] {
			gt.fire(GateClose)
		}
		g.gates[k] = gt
	}
	return gt
}

func (g *Gates) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Ticket is a held gate. Check before dispatching; Release exactly once
// (a second Release is a no-op).
type Ticket struct {
	g    *Gates
	key  GateKey
	gt   *gate // the gate it holds; gone when its browser was forgotten
	gen  uint64
	once sync.Once
}

// Acquire waits until the gate for k is open and takes it. It waits through
// a reconnect; ctx bounds the wait (its deadline is the bound).
func (g *Gates) Acquire(ctx context.Context, k GateKey) (*Ticket, error) {
	for {
		g.mu.Lock()
		gt := g.gateLocked(k)
		if gt.owner.Permitted(GateAcquire) {
			gt.fire(GateAcquire)
			t := &Ticket{g: g, key: k, gt: gt, gen: g.gen[k.Browser]}
			g.mu.Unlock()
			return t, nil
		}
		wait := g.changed
		state := gt.owner.State()
		g.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			if state == GateClosed || state == GateDraining {
				return nil, fsm.Refuse(fsm.BindingStale, "the browser is reconnecting; try again on the new generation").WithCause(ctx.Err())
			}
			return nil, fmt.Errorf("lease: waiting for the mutation gate: %w", ctx.Err())
		}
	}
}

// Check reports whether the ticket's mutation may still dispatch: a reconnect
// that began since Acquire refuses it with browser_binding_stale.
func (t *Ticket) Check() error {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	if t.g.closed[t.key.Browser] || t.g.gen[t.key.Browser] != t.gen || t.g.gates[t.key] != t.gt {
		return fsm.Refuse(fsm.BindingStale, "the browser began reconnecting; the action was not dispatched")
	}
	return nil
}

// Release gives the gate back.
func (t *Ticket) Release() {
	t.once.Do(func() {
		t.g.mu.Lock()
		defer t.g.mu.Unlock()
		gt := t.gt
		if t.g.gates[t.key] != gt {
			return // the browser was forgotten: its gates are gone
		}
		gt.fire(GateRelease) // held or draining: the ticket holds it
		if gt.owner.State() == GateClosed && !t.g.closed[t.key.Browser] {
			// The reconnect finished while this holder drained.
			gt.fire(GateReopen)
		}
		t.g.broadcastLocked()
	})
}

// CloseBrowser closes every gate of browser for a reconnect. A gate closed
// or draining already stays so.
func (g *Gates) CloseBrowser(browser string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed[browser] = true
	for k, gt := range g.gates {
		if k.Browser == browser && gt.owner.Permitted(GateClose) {
			gt.fire(GateClose)
		}
	}
}

// ReopenBrowser reopens every gate of browser on its new generation. Gates
// still draining reopen when their holder releases.
func (g *Gates) ReopenBrowser(browser string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.closed, browser)
	g.gen[browser]++
	for k, gt := range g.gates {
		if k.Browser == browser && gt.owner.State() == GateClosed {
			gt.fire(GateReopen)
		}
	}
	g.broadcastLocked()
}

// State returns the state of the gate for k.
func (g *Gates) State(k GateKey) GateState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gateLocked(k).owner.State()
}

// Forget drops the gates of a browser that is gone.
func (g *Gates) Forget(browser string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.gates {
		if k.Browser == browser {
			delete(g.gates, k)
		}
	}
	delete(g.closed, browser)
	delete(g.gen, browser)
	g.broadcastLocked()
}

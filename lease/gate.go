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
		{From: GateClosed, On: GateReopen, To: GateOpen, Count: gateGeneration},
	},
	Stable:       []GateState{GateOpen, GateHeld, GateDraining, GateClosed},
	MaxTransient: 1,
}).MustValidate()

// BrowserGatesState is whether a browser's mutation gates are open or
// closed together for a reconnect.
type BrowserGatesState string

// Browser gate states. Their exits are rendered from the declared edges (spec/).
const (
	BrowserGatesOpen   BrowserGatesState = "open"                 // mutations may start.
	BrowserGatesClosed BrowserGatesState = "closed_for_reconnect" // a reconnect runs.
)

// BrowserGatesSpec is the reconnect phase of one browser's gates: what a
// gate created while the browser reconnects starts in, and whether a gate a
// holder drained reopens on its release. Each reopening counts a generation.
var BrowserGatesSpec = (&fsm.Spec[BrowserGatesState, GateTrigger, struct{}]{
	Name:  "browser_gates",
	Title: "Mutation gates of one browser",
	Guards: "Closes every mutation gate of a browser together for a reconnect and reopens them on the new generation: a gate " +
		"first used while the browser reconnects starts closed, and a gate its holder drained reopens on release only once " +
		"the reconnect is over.",
	Initial: BrowserGatesOpen,
	States: []fsm.StateDoc[BrowserGatesState]{
		fsm.Doc(BrowserGatesOpen, "Mutations may start on the browser's current generation."),
		fsm.Doc(BrowserGatesClosed, "A reconnect runs: every gate of the browser is closed or draining."),
	},
	Triggers: []GateTrigger{GateClose, GateReopen},
	Edges: []fsm.Edge[BrowserGatesState, GateTrigger, struct{}]{
		{From: BrowserGatesOpen, On: GateClose, To: BrowserGatesClosed},
		{From: BrowserGatesClosed, On: GateReopen, To: BrowserGatesOpen, Count: "generation"},
	},
	Stable:       []BrowserGatesState{BrowserGatesOpen, BrowserGatesClosed},
	MaxTransient: 1,
}).MustValidate()

// gateGeneration counts a gate's reopenings: a ticket from an older one is
// stale.
const gateGeneration = "generation"

// GateKey names one target of one browser.
type GateKey struct {
	Browser string // opaque browser identity
	Target  string // target within it
}

// Gates holds the mutation gates of every browser. Each gate is an owner of
// its machine, and so is each browser's set of gates (BrowserGatesSpec); no
// effects: the machines only decide who may hold a gate, and every question
// here is answered by their states. Every trigger fired here is one the
// machine's state takes. Safe for concurrent use.
type Gates struct {
	mu       sync.Mutex // mu guards the fields that follow
	gates    map[GateKey]*gate
	browsers map[string]*fsm.Owner[BrowserGatesState, GateTrigger, struct{}]
	changed  chan struct{} // closed and replaced on every release or reopen
}

type gate struct {
	owner *fsm.Owner[GateState, GateTrigger, struct{}]
}

// NewGates returns an empty set of gates.
func NewGates() *Gates {
	return &Gates{gates: map[GateKey]*gate{}, browsers: map[string]*fsm.Owner[BrowserGatesState, GateTrigger, struct{}]{}, changed: make(chan struct{})}
}

// browserLocked returns the owner of browser's gate set, open when new.
func (g *Gates) browserLocked(browser string) *fsm.Owner[BrowserGatesState, GateTrigger, struct{}] {
	b := g.browsers[browser]
	if b == nil {
		b = fsm.NewOwner(BrowserGatesSpec, fsm.Effects[BrowserGatesState, GateTrigger]{})
		g.browsers[browser] = b
	}
	return b
}

// reconnectingLocked reports whether browser's gates are closed for a
// reconnect.
func (g *Gates) reconnectingLocked(browser string) bool {
	b := g.browsers[browser]
	return b != nil && b.State() == BrowserGatesClosed
}

// fire fires t at gt. The callers fire only what the gate's state takes
// (they hold g.mu and checked it), so a refusal means the gate's
// bookkeeping is broken: it panics rather than let two holders in.
func (gt *gate) fire(t GateTrigger) { fireGates(gt.owner, t) }

func fireGates[S ~string](o *fsm.Owner[S, GateTrigger, struct{}], t GateTrigger) {
	if _, err := o.Fire(context.Background(), t); err != nil {
		panic(fmt.Sprintf("lease: mutation gate in %s: %v", o.State(), err))
	}
}

func (g *Gates) gateLocked(k GateKey) *gate {
	gt := g.gates[k]
	if gt == nil {
		gt = &gate{owner: fsm.NewOwner(GateSpec, fsm.Effects[GateState, GateTrigger]{})}
		if g.reconnectingLocked(k.Browser) {
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
	gen  int   // the gate machine's generation counter when it was taken
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
			t := &Ticket{g: g, key: k, gt: gt, gen: gt.owner.Counter(gateGeneration)}
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
// that began since Acquire moved its gate from held to draining, and one
// that ended since reopened it on a new generation; either refuses it with
// browser_binding_stale.
func (t *Ticket) Check() error {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	if t.g.gates[t.key] != t.gt || t.gt.owner.State() != GateHeld || t.gt.owner.Counter(gateGeneration) != t.gen {
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
		if gt.owner.State() == GateClosed && !t.g.reconnectingLocked(t.key.Browser) {
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
	if b := g.browserLocked(browser); b.Permitted(GateClose) {
		fireGates(b, GateClose)
	}
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
	if b := g.browserLocked(browser); b.Permitted(GateReopen) {
		fireGates(b, GateReopen)
	}
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
	delete(g.browsers, browser)
	g.broadcastLocked()
}

// Package fsm declares webcodex's finite-state machines as data, builds
// qmuntal/stateless machines from those declarations, renders them for
// spec/, and explores them exhaustively to check their properties
// ([Spec.Explore]; the rapid walk beside it is in fsm/fsmtest, so rapid
// stays out of the shipped binary).
//
// A declaration ([Spec]) is the one source of truth: the runtime, the
// diagrams and the property-test model are all read from it.
package fsm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Effect names a side effect an owner runs after a transition, never inside
// it: stateless has no rollback once the state has changed.
type Effect string

// Effects shared by several machines.
const (
	NoEffect Effect = ""
)

// Counters holds a machine's named counters (attempts, generation, …). The
// declaration says which edges increment or reset them; guards may read them.
type Counters map[string]int

func (c Counters) clone() Counters {
	out := make(Counters, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Env is what a guard sees: the owner's facts and the machine's counters.
type Env[F any] struct {
	Facts    F
	Counters Counters
}

// Guard is a named, pure predicate. Names appear in diagrams; guards on one
// (state, trigger) must be mutually exclusive, which [Spec.Validate] checks.
type Guard[F any] struct {
	Name string
	OK   func(Env[F]) bool
}

// Not returns the complement of g, named "!name".
func Not[F any](g *Guard[F]) *Guard[F] {
	return &Guard[F]{Name: "!" + g.Name, OK: func(e Env[F]) bool { return !g.OK(e) }}
}

// Below returns a guard that holds while counter is below limit.
func Below[F any](counter string, limit int) *Guard[F] {
	return &Guard[F]{Name: fmt.Sprintf("%s_below_%d", counter, limit), OK: func(e Env[F]) bool { return e.Counters[counter] < limit }}
}

// AtLeast returns the complement of [Below].
func AtLeast[F any](counter string, limit int) *Guard[F] {
	return &Guard[F]{Name: fmt.Sprintf("%s_at_least_%d", counter, limit), OK: func(e Env[F]) bool { return e.Counters[counter] >= limit }}
}

// Edge is one declared transition. Effect runs after the transition, keyed
// by the value of Count (if set): an effect on an edge without a counter is
// one-shot for the machine's life, so an edge that can repeat must count.
type Edge[S, T ~string, F any] struct {
	From   S
	On     T
	To     S
	Guard  *Guard[F]
	Effect Effect
	Count  string   // counter incremented when this edge is taken
	Reset  []string // counters set to zero when this edge is taken
}

// StateDoc documents what a state means, in a line or two. Its exits are
// rendered from the edges; Validate rejects a doc that writes them by hand.
type StateDoc[S ~string] struct {
	State S
	Doc   string
}

// Spec is a machine declared as data.
type Spec[S, T ~string, F any] struct {
	Name    string // file name in spec/, e.g. "consent"
	Title   string
	Guards  string // one paragraph: what this machine guards, for reviewers
	Initial S
	States  []StateDoc[S]
	// Triggers lists every trigger; the property checks fire each of them.
	Triggers []T
	Edges    []Edge[S, T, F]
	Stable   []S // states where the machine may rest
	Terminal []S // states with no exits
	// Budgets bounds counters: a counter above its budget is a failed
	// property ("no retry budget exceeded").
	Budgets Counters
	// MaxTransient bounds how many transitions in a row may pass through
	// states that are neither stable nor terminal.
	MaxTransient int

	// Generation, when set, names the counter that is the connection
	// generation, and Invalidate the effect that invalidates capabilities of
	// older generations; the harness checks that no stable state is reached
	// with capabilities of an older generation still valid.
	Generation string
	Invalidate Effect
	// Live states use the newest generation; resting in one with older
	// capabilities still valid fails the generations property. Empty means
	// the stable states.
	Live []S
	// Revoked states make a grant final; Armed states are the ones a
	// revocation must never lead back to.
	Revoked []S
	Armed   []S
	// Flight, when set, is the effect that leads a single-flight transition:
	// it fires at most once between two rests in a stable state.
	Flight Effect
	// Effects is the allowlist: every effect an owner of this machine may
	// run. Validate rejects an edge carrying any other effect, and an
	// allowed effect no edge carries, so a new effect is always a
	// deliberate change to this list, which spec/ shows.
	Effects []Effect
	// Forbidden effects must be unreachable (e.g. close_browser for an
	// external browser); Validate checks no edge carries one. The allowlist
	// already excludes them; naming them says which ones reviewers care
	// about.
	Forbidden []Effect

	// DrawFacts draws facts for the property checks and for Validate: the
	// exploration walks every value it can draw.
	DrawFacts func(draw Drawer) F
}

// Drawer draws fact values: the exploration's drawer walks every value,
// fsm/fsmtest's draws them with rapid.
type Drawer interface {
	Bool(label string) bool
	IntRange(label string, lo, hi int) int
}

// Next is the plain table model: the edge taken from `from` on `on`, if any.
func (s *Spec[S, T, F]) Next(from S, on T, env Env[F]) (Edge[S, T, F], bool) {
	for _, e := range s.Edges {
		if e.From == from && e.On == on && (e.Guard == nil || e.Guard.OK(env)) {
			return e, true
		}
	}
	return Edge[S, T, F]{}, false
}

// IsStable reports whether st is a declared resting state.
func (s *Spec[S, T, F]) IsStable(st S) bool { return slices.Contains(s.Stable, st) }

// IsTerminal reports whether st is a declared terminal state.
func (s *Spec[S, T, F]) IsTerminal(st S) bool { return slices.Contains(s.Terminal, st) }

// StateNames returns the declared states in declaration order.
func (s *Spec[S, T, F]) StateNames() []S {
	out := make([]S, 0, len(s.States))
	for _, d := range s.States {
		out = append(out, d.State)
	}
	return out
}

// apply returns counters after taking e.
func apply[S, T ~string, F any](c Counters, e Edge[S, T, F]) Counters {
	out := c.clone()
	for _, r := range e.Reset {
		out[r] = 0
	}
	if e.Count != "" {
		out[e.Count]++
	}
	return out
}

// advance returns the counters and the flight counter after taking e. A
// flight opens when the machine leaves a stable state; its counter is the
// one the opening edge counts ("" when it counts none).
func (s *Spec[S, T, F]) advance(c Counters, flight string, e Edge[S, T, F]) (Counters, string) {
	if s.IsStable(e.From) {
		flight = e.Count
	}
	return apply(c, e), flight
}

// EffectID is the ledger identity of an effect, keyed by the effect's own
// counter, not by everything else the machine counts: "dial#attempts=2,
// losses=1". An effect's own counter is the one its edges count (Validate
// allows one per effect); an effect on uncounted edges is keyed by the
// counter of the flight that runs it, and with no flight counter it is
// one-shot for the machine's life. The counters that reset the own counter
// (the epoch it counts within) are part of the key too. So the same effect
// fired again on another edge, without its own counter moving, repeats an
// ID, which the harness reports as a replay.
func (s *Spec[S, T, F]) EffectID(e Edge[S, T, F], after Counters, flight string) string {
	if e.Effect == NoEffect {
		return ""
	}
	own := s.effectCounter(e.Effect)
	if own == "" {
		own = flight
	}
	var b strings.Builder
	b.WriteString(string(e.Effect))
	if own == "" {
		return b.String()
	}
	for i, k := range s.epoch(own) {
		if i == 0 {
			b.WriteByte('#')
		} else {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", k, after[k])
	}
	return b.String()
}

// effectCounter is the counter the edges carrying ef count ("" when none).
func (s *Spec[S, T, F]) effectCounter(ef Effect) string {
	for _, e := range s.Edges {
		if e.Effect == ef && e.Count != "" {
			return e.Count
		}
	}
	return ""
}

// epoch is counter c with every counter counted by an edge that resets one
// of them, sorted: a reset starts a new epoch only if the resetting edge
// counts it.
func (s *Spec[S, T, F]) epoch(c string) []string {
	set := map[string]bool{c: true}
	for grew := true; grew; {
		grew = false
		for _, e := range s.Edges {
			if e.Count == "" || set[e.Count] {
				continue
			}
			for _, r := range e.Reset {
				if set[r] {
					set[e.Count], grew = true, true
					break
				}
			}
		}
	}
	return sortedKeys(set)
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Doc pairs a state with its one-line doc.
func Doc[S ~string](state S, doc string) StateDoc[S] { return StateDoc[S]{State: state, Doc: doc} }

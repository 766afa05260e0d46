package fsm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Violation is a property the harness found broken, named as spec/ names
// it ("bounded", "no replay", …).
type Violation struct {
	Property string
	Detail   string
}

func (v *Violation) Error() string { return v.Property + ": " + v.Detail }

func violation(property, format string, args ...any) *Violation {
	return &Violation{Property: property, Detail: fmt.Sprintf(format, args...)}
}

// Tracker fires one trigger sequence at the real stateless machine and at
// the table model ([Spec.Next]) side by side and checks every property
// after every trigger: model agreement, bounded, no replay, generations,
// revocation final and single flight. Connections are counted from the
// path (arrivals in a live state), flights from the effects taken: neither
// is read back from the counter the declaration keeps. The rapid walk (fsm/fsmtest) and the
// exhaustive exploration ([Spec.Explore]) both drive one.
type Tracker[S, T ~string, F any] struct {
	s     *Spec[S, T, F]
	m     *Machine[S, T, F]
	facts F
	at    tracked[S]
	// dispatches[st] reports whether an edge with an effect is reachable
	// from st: what a revoked machine must never enter again.
	dispatches map[S]bool
	// monotonic counters are reset by no edge: an effect ID holding an
	// older value of one can never be minted again.
	monotonic map[string]bool
}

// tracked is everything the properties remember about the path so far. It
// is never mutated in place, so the exploration can keep it per state.
type tracked[S ~string] struct {
	model      S
	counters   Counters
	flight     string
	dispatched map[string]bool // effect IDs dispatched so far
	transient  int             // transitions since the last rest
	validGen   int             // the generation whose capabilities are valid
	// liveGen is the generation counter's value at the last arrival in a
	// live state (0 before any): counted from the path, not from the
	// counter, so a connection the declaration forgets to count is seen.
	liveGen int
	revoked bool
	flights int // Flight effects since the last stable state
}

// NewTracker builds a quiet machine (its transitions reach no [Recorder])
// at the initial state.
func (s *Spec[S, T, F]) NewTracker() *Tracker[S, T, F] {
	t := &Tracker[S, T, F]{s: s, dispatches: s.dispatchingStates(), monotonic: map[string]bool{}}
	for _, name := range s.counterNames() {
		t.monotonic[name] = true
	}
	for _, e := range s.Edges {
		for _, r := range e.Reset {
			delete(t.monotonic, r)
		}
	}
	t.m = s.build(func() F { return t.facts }, true)
	t.at = tracked[S]{model: s.Initial, counters: Counters{}, dispatched: map[string]bool{}}
	return t
}

// State is the model's state.
func (t *Tracker[S, T, F]) State() S { return t.at.model }

// Counters is a copy of the model's counters.
func (t *Tracker[S, T, F]) Counters() Counters { return t.at.counters.clone() }

// Fire sends tr with facts to both machines. accepted reports whether the
// model took an edge; a broken property is returned as a [*Violation].
func (t *Tracker[S, T, F]) Fire(ctx context.Context, tr T, facts F) (step Step[S, T], accepted bool, err error) {
	s, at := t.s, t.at
	t.facts = facts
	want, ok := s.Next(at.model, tr, Env[F]{Facts: facts, Counters: at.counters})
	step, ferr := t.m.Fire(ctx, tr)
	if ok != (ferr == nil) {
		return step, false, violation("model agreement", "%s on %s: table accepts=%v, stateless err=%v", at.model, tr, ok, ferr)
	}
	if ferr != nil {
		if !IsCode(ferr, TransitionRefused) {
			return step, false, violation("model agreement", "%s on %s: refusal is not typed: %v", at.model, tr, ferr)
		}
		if got := t.m.State(); got != at.model {
			return step, false, violation("model agreement", "refused %s moved %s to %s", tr, at.model, got)
		}
		return step, false, nil
	}
	if step.To != want.To || t.m.State() != want.To {
		return step, true, violation("model agreement", "%s on %s: stateless went to %s, table to %s", at.model, tr, step.To, want.To)
	}
	next := at
	next.counters, next.flight = s.advance(at.counters, at.flight, want)
	if id := s.EffectID(want, next.counters, next.flight); id != step.EffectID {
		return step, true, violation("model agreement", "effect id %q, table %q", step.EffectID, id)
	}
	edge := fmt.Sprintf("%s --%s--> %s", at.model, tr, want.To)

	// bounded
	if s.IsStable(want.To) || s.IsTerminal(want.To) {
		next.transient = 0
	} else if next.transient++; next.transient > s.MaxTransient {
		return step, true, violation("bounded", "%d transitions in a row without resting (limit %d), last %s", next.transient, s.MaxTransient, edge)
	}
	for _, name := range sortedKeys(s.Budgets) {
		if budget := s.Budgets[name]; next.counters[name] > budget {
			return step, true, violation("bounded", "counter %s = %d exceeds its budget %d (%s)", name, next.counters[name], budget, edge)
		}
	}
	// no replay
	if step.EffectID != "" {
		if at.dispatched[step.EffectID] {
			return step, true, violation("no replay", "effect %s dispatched twice (%s)", step.EffectID, edge)
		}
		next.dispatched = make(map[string]bool, len(at.dispatched)+1)
		for id := range at.dispatched {
			next.dispatched[id] = true
		}
		next.dispatched[step.EffectID] = true
	}
	// revocation final: once revoked, never armed again, and never in a
	// state outside the revocation from which an effect can still run.
	if slices.Contains(s.Revoked, want.To) {
		next.revoked = true
	} else if at.revoked {
		if slices.Contains(s.Armed, want.To) {
			return step, true, violation("revocation final", "%s re-armed a revoked grant", edge)
		}
		if !s.IsTerminal(want.To) && t.dispatches[want.To] {
			return step, true, violation("revocation final", "%s leaves the revocation for a state that can run effects again", edge)
		}
	}
	// generations: every arrival in a live state from outside one is a new
	// connection (evidence from the path itself), so the generation counter
	// must have moved since the last arrival, and the capabilities of every
	// older generation must have been invalidated on the way.
	if s.Generation != "" {
		gen := next.counters[s.Generation]
		if step.Effect == s.Invalidate {
			next.validGen = gen
		}
		if s.isLive(want.To) && !s.isLive(at.model) {
			if gen <= at.liveGen {
				return step, true, violation("generations", "%s arrives in %s on a new connection but generation %s is still %d, as at the last arrival", edge, want.To, s.Generation, gen)
			}
			next.liveGen = gen
		}
		if s.isLive(want.To) && next.validGen != gen {
			return step, true, violation("generations", "resting in %s at generation %d while capabilities of generation %d are still valid", want.To, gen, next.validGen)
		}
	}
	// single flight
	if s.Flight != NoEffect && step.Effect == s.Flight {
		if next.flights++; next.flights > 1 {
			return step, true, violation("single flight", "%s led twice in one flight (%s)", s.Flight, edge)
		}
	}
	if s.IsStable(want.To) {
		next.flights = 0
	}
	next.model = want.To
	t.at = next
	return step, true, nil
}

// key identifies everything the properties can still depend on: two paths
// with one key have the same future.
func (t *Tracker[S, T, F]) key() string {
	at := t.at
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%d|%d|%d|%t|%d|", at.model, at.flight, at.transient, at.validGen, at.liveGen, at.revoked, at.flights)
	for _, k := range sortedKeys(at.counters) {
		if at.counters[k] != 0 {
			fmt.Fprintf(&b, "%s=%d,", k, at.counters[k])
		}
	}
	b.WriteByte('|')
	for _, id := range sortedKeys(at.dispatched) {
		if t.canRecur(id) {
			b.WriteString(id)
			b.WriteByte(',')
		}
	}
	return b.String()
}

// canRecur reports whether an effect ID could be minted again from here: it
// cannot once a monotonic counter in it has moved past the value it holds.
// Forgetting such IDs keeps the exploration's memory to what can matter.
func (t *Tracker[S, T, F]) canRecur(id string) bool {
	_, keyed, ok := strings.Cut(id, "#")
	if !ok {
		return true
	}
	for _, kv := range strings.Split(keyed, ",") {
		name, v, _ := strings.Cut(kv, "=")
		if t.monotonic[name] && strconv.Itoa(t.at.counters[name]) != v {
			return false
		}
	}
	return true
}

// restore puts the tracker and its machine back at a remembered point.
func (t *Tracker[S, T, F]) restore(at tracked[S]) {
	t.at = at
	t.m.restore(at.model, at.counters, at.flight)
}

func (s *Spec[S, T, F]) isLive(st S) bool {
	if len(s.Live) == 0 {
		return s.IsStable(st)
	}
	return slices.Contains(s.Live, st)
}

// dispatchingStates reports, per state, whether an edge carrying an
// effect is reachable from it.
func (s *Spec[S, T, F]) dispatchingStates() map[S]bool {
	out := map[S][]S{}
	for _, e := range s.Edges {
		out[e.From] = append(out[e.From], e.To)
	}
	res := map[S]bool{}
	for _, d := range s.States {
		for st := range closure(d.State, out) {
			for _, e := range s.Edges {
				if e.From == st && e.Effect != NoEffect {
					res[d.State] = true
				}
			}
		}
	}
	return res
}

// MinRapidChecks is the fewest random sequences the rapid walk
// (fsm/fsmtest.Check) runs per machine, whatever -rapid.checks says; spec/
// renders it.
const MinRapidChecks = 1000

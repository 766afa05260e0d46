package fsm

import (
	"context"
	"flag"
	"slices"
	"strconv"

	"pgregory.net/rapid"
)

// MinChecks is the fewest rapid checks [Check] runs per machine, whatever
// -rapid.checks says (rapid's default is 100).
const MinChecks = 1000

// maxSteps bounds one random trigger sequence.
const maxSteps = 80

// RapidDrawer adapts a *rapid.T to [Drawer].
type RapidDrawer struct{ T *rapid.T }

// Bool draws a boolean.
func (d RapidDrawer) Bool(label string) bool { return rapid.Bool().Draw(d.T, label) }

// IntRange draws an int in [lo, hi].
func (d RapidDrawer) IntRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(d.T, label)
}

// Check runs the property harness on s with at least [MinChecks] checks:
// random trigger sequences with random facts, fired at the real stateless
// machine and at the table model ([Spec.Next]), checking model agreement,
// bounded, no replay, generations, revocation final and single flight (the
// last three vacuously when the declaration names no generation, revocation
// or flight). Every machine's test calls it.
func Check[S, T ~string, F any](tb rapid.TB, s *Spec[S, T, F]) {
	tb.Helper()
	if f := flag.Lookup("rapid.checks"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n < MinChecks {
			_ = f.Value.Set(strconv.Itoa(MinChecks))
			defer f.Value.Set(strconv.Itoa(n))
		}
	}
	rapid.Check(tb, func(rt *rapid.T) { Walk(rt, s, nil) })
}

// Invariant is an extra check a machine's test runs after every step.
type Invariant[S, T ~string] func(rt *rapid.T, step Step[S, T], counters Counters)

// Walk is the body of one check: it draws a trigger sequence and fails rt on
// the first violated property. inv, when not nil, runs after every step.
func Walk[S, T ~string, F any](rt *rapid.T, s *Spec[S, T, F], inv Invariant[S, T]) {
	var facts F
	m := s.Build(func() F { return facts })
	model := s.Initial
	counters := Counters{}
	dispatched := map[string]bool{}
	transient := 0
	validGen := 0
	revoked := false
	flights := 0
	ctx := context.Background()

	steps := rapid.IntRange(1, maxSteps).Draw(rt, "steps")
	for i := 0; i < steps; i++ {
		if s.DrawFacts != nil {
			facts = s.DrawFacts(RapidDrawer{rt})
		}
		tr := rapid.SampledFrom(s.Triggers).Draw(rt, "trigger")
		want, ok := s.Next(model, tr, Env[F]{Facts: facts, Counters: counters})
		step, err := m.Fire(ctx, tr)
		if ok != (err == nil) {
			rt.Fatalf("model agreement: %s on %s: table accepts=%v, stateless err=%v", model, tr, ok, err)
		}
		if err != nil {
			if !IsCode(err, TransitionRefused) {
				rt.Fatalf("model agreement: %s on %s: refusal is not typed: %v", model, tr, err)
			}
			if got := m.State(); got != model {
				rt.Fatalf("model agreement: refused %s moved %s to %s", tr, model, got)
			}
			continue
		}
		if step.To != want.To || m.State() != want.To {
			rt.Fatalf("model agreement: %s on %s: stateless went to %s, table to %s", model, tr, step.To, want.To)
		}
		counters = apply(counters, want)
		if id := EffectID(want, counters); id != step.EffectID {
			rt.Fatalf("model agreement: effect id %q, table %q", step.EffectID, id)
		}
		rest := s.IsStable(want.To) || s.IsTerminal(want.To)

		// bounded
		if rest {
			transient = 0
		} else if transient++; transient > s.MaxTransient {
			rt.Fatalf("bounded: %d transitions in a row without resting (limit %d), last %s --%s--> %s", transient, s.MaxTransient, model, tr, want.To)
		}
		for name, budget := range s.Budgets {
			if counters[name] > budget {
				rt.Fatalf("bounded: counter %s = %d exceeds its budget %d", name, counters[name], budget)
			}
		}
		// no replay
		if step.EffectID != "" {
			if dispatched[step.EffectID] {
				rt.Fatalf("no replay: effect %s dispatched twice (%s --%s--> %s)", step.EffectID, model, tr, want.To)
			}
			dispatched[step.EffectID] = true
		}
		// generations
		if s.Generation != "" {
			if step.Effect == s.Invalidate {
				validGen = counters[s.Generation]
			}
			if s.isLive(want.To) && validGen != counters[s.Generation] {
				rt.Fatalf("generations: resting in %s at generation %d while capabilities of generation %d are still valid", want.To, counters[s.Generation], validGen)
			}
		}
		// revocation final
		if slices.Contains(s.Revoked, want.To) {
			revoked = true
		} else if revoked && slices.Contains(s.Armed, want.To) {
			rt.Fatalf("revocation final: %s --%s--> %s re-armed a revoked grant", model, tr, want.To)
		}
		// single flight
		if s.Flight != NoEffect && step.Effect == s.Flight {
			if flights++; flights > 1 {
				rt.Fatalf("single flight: %s led twice in one flight (%s --%s--> %s)", s.Flight, model, tr, want.To)
			}
		}
		if s.IsStable(want.To) {
			flights = 0
		}
		if inv != nil {
			inv(rt, step, counters.clone())
		}
		model = want.To
	}
}

func (s *Spec[S, T, F]) isLive(st S) bool {
	if len(s.Live) == 0 {
		return s.IsStable(st)
	}
	return slices.Contains(s.Live, st)
}

// Package fsmtest checks machine declarations in tests: the exhaustive
// bounded exploration ([fsm.Spec.Explore]) and, beside it, a rapid walk of
// long random trigger sequences. It lives apart from fsm so that
// pgregory.net/rapid never reaches the shipped binary.
package fsmtest

import (
	"context"
	"flag"
	"strconv"

	"github.com/webcodex/webcodex/fsm"
	"pgregory.net/rapid"
)

// MinChecks is the fewest rapid checks [Check] runs per machine.
const MinChecks = fsm.MinRapidChecks

// maxSteps bounds one random trigger sequence.
const maxSteps = 80

// RapidDrawer adapts a *rapid.T to [fsm.Drawer].
type RapidDrawer struct{ T *rapid.T }

// Bool draws a boolean.
func (d RapidDrawer) Bool(label string) bool { return rapid.Bool().Draw(d.T, label) }

// IntRange draws an int in [lo, hi].
func (d RapidDrawer) IntRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(d.T, label)
}

// TB is what [Check] needs: a *testing.T, or a recorder in the harness's
// own tests.
type TB interface {
	rapid.TB
	Logf(format string, args ...any)
}

// Check runs the exhaustive exploration of s, then at least [MinChecks]
// rapid checks: random trigger sequences with random facts fired at the
// real stateless machine and at the table model, checking model agreement,
// bounded, no replay, generations, revocation final and single flight (the
// last three vacuously when the declaration names no generation,
// revocation or flight). Every machine's test calls it.
func Check[S, T ~string, F any](tb TB, s *fsm.Spec[S, T, F]) {
	tb.Helper()
	ex, err := s.Explore()
	if err != nil {
		tb.Fatalf("%s: exhaustive exploration: %v", s.Name, err)
	}
	tb.Logf("%s: explored %d states, %d steps, depth %d, %d fact combinations", s.Name, ex.States, ex.Steps, ex.Depth, ex.FactCombos)
	defer AtLeastMinChecks()()
	rapid.Check(tb, func(rt *rapid.T) { Walk(rt, s, nil) })
}

// AtLeastMinChecks raises -rapid.checks to [MinChecks] and returns what
// puts it back.
func AtLeastMinChecks() (restore func()) {
	if f := flag.Lookup("rapid.checks"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n < MinChecks {
			_ = f.Value.Set(strconv.Itoa(MinChecks))
			return func() { _ = f.Value.Set(strconv.Itoa(n)) }
		}
	}
	return func() {}
}

// Invariant is an extra check a machine's test runs after every step.
type Invariant[S, T ~string] func(rt *rapid.T, step fsm.Step[S, T], counters fsm.Counters)

// Walk is the body of one rapid check: it draws a trigger sequence and
// fails rt on the first violated property. inv, when not nil, runs after
// every accepted step.
func Walk[S, T ~string, F any](rt *rapid.T, s *fsm.Spec[S, T, F], inv Invariant[S, T]) {
	t := s.NewTracker()
	ctx := context.Background()
	steps := rapid.IntRange(1, maxSteps).Draw(rt, "steps")
	for range steps {
		var facts F
		if s.DrawFacts != nil {
			facts = s.DrawFacts(RapidDrawer{rt})
		}
		tr := rapid.SampledFrom(s.Triggers).Draw(rt, "trigger")
		step, ok, err := t.Fire(ctx, tr, facts)
		if err != nil {
			rt.Fatalf("%v", err)
		}
		if ok && inv != nil {
			inv(rt, step, t.Counters())
		}
	}
}

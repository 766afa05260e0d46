package fsm

import (
	"context"
	"fmt"
	"slices"
)

// EffectFunc runs one effect the machine returned. It answers with the
// trigger the owner fires next ("" when the machine now waits for an
// outside event) or with an error that stops the owner's chain.
type EffectFunc[S, T ~string] func(ctx context.Context, step Step[S, T]) (next T, err error)

// Effects is an owner's effect table: every effect its declaration names,
// each mapped to the one function that performs it. The functions are the
// owner's unexported methods, so nothing but the owner's loop can run them.
type Effects[S, T ~string] map[Effect]EffectFunc[S, T]

// Owner drives one machine: it fires, stops when the machine refuses, runs
// exactly the effect the machine returned (through its table) and fires the
// trigger that effect answers with, until the machine waits for the outside
// world. It is the only way an owner's effects run.
type Owner[S, T ~string, F any] struct {
	m       *Machine[S, T, F]
	effects Effects[S, T]
}

// NewOwner builds the machine from s and binds it to its effect table. It
// panics when the table misses an effect the declaration names or names one
// the declaration does not: a mismatch is a programming error caught at
// construction, in every test that builds the owner.
func NewOwner[S, T ~string, F any](s *Spec[S, T, F], facts func() F, effects Effects[S, T]) *Owner[S, T, F] {
	if missing, extra := effectTableMismatch(s, effects); len(missing)+len(extra) > 0 {
		panic(fmt.Sprintf("fsm: %s: effect table mismatch: missing %v, not declared %v", s.Name, missing, extra))
	}
	return &Owner[S, T, F]{m: s.Build(facts), effects: effects}
}

func effectTableMismatch[S, T ~string, F any](s *Spec[S, T, F], effects Effects[S, T]) (missing, extra []Effect) {
	declared := s.EffectNames()
	for _, e := range declared {
		if effects[e] == nil {
			missing = append(missing, e)
		}
	}
	for e := range effects {
		if !slices.Contains(declared, e) {
			extra = append(extra, e)
		}
	}
	slices.Sort(extra)
	return missing, extra
}

// EffectNames lists the distinct effects the declaration's edges carry, in
// edge order.
func (s *Spec[S, T, F]) EffectNames() []Effect {
	var out []Effect
	for _, e := range s.Edges {
		if e.Effect != NoEffect && !slices.Contains(out, e.Effect) {
			out = append(out, e.Effect)
		}
	}
	return out
}

// Fire fires t and then every trigger the effects answer with. It returns
// the last step taken. A refusal of t itself is returned as is (nothing ran);
// a refusal of a chained trigger, or an effect's error, is returned with the
// step that preceded it. The chain is bounded by the declaration's edges: a
// chain longer than every edge taken once is a declaration bug.
func (o *Owner[S, T, F]) Fire(ctx context.Context, t T) (Step[S, T], error) {
	var last Step[S, T]
	for range len(o.m.spec.Edges) + 1 {
		step, err := o.m.Fire(ctx, t)
		if err != nil {
			return last, err
		}
		last = step
		if step.Effect == NoEffect {
			return step, nil
		}
		next, err := o.effects[step.Effect](ctx, step)
		if err != nil {
			return step, err
		}
		if next == "" {
			return step, nil
		}
		t = next
	}
	return last, fmt.Errorf("fsm: %s: effect chain from %v did not come to rest", o.m.spec.Name, t)
}

// State returns the machine's state.
func (o *Owner[S, T, F]) State() S { return o.m.State() }

// Counter returns a named counter of the machine.
func (o *Owner[S, T, F]) Counter(name string) int { return o.m.Counter(name) }

// Permitted reports whether t would be accepted now.
func (o *Owner[S, T, F]) Permitted(t T) bool { return o.m.Permitted(t) }

// Trace returns the machine's latest transitions, oldest first.
func (o *Owner[S, T, F]) Trace() []Record { return o.m.Trace() }

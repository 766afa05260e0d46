package fsm

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// EffectFunc runs one effect the machine returned. It answers with the
// trigger the owner fires next ("" when the machine now waits for an
// outside event) or with an error that stops the owner's chain. An effect
// that needs a per-call input (what to send, what to press) is written with
// [Takes] and fired with [FireWith].
type EffectFunc[S, T ~string] func(ctx context.Context, step Step[S, T]) (next T, err error)

// Effects is an owner's effect table: every effect its declaration names,
// each mapped to the one function that performs it. The functions are the
// owner's unexported methods, so nothing but the owner's loop can run them.
type Effects[S, T ~string] map[Effect]EffectFunc[S, T]

// Owner drives one machine: it fires, stops when the machine refuses, runs
// exactly the effect the machine returned (through its table) and fires the
// trigger that effect answers with, until the machine waits for the outside
// world. It is the only way an owner's effects run, and it holds the facts
// its guards read (see STYLE.md beside this file for the template).
type Owner[S, T ~string, F any] struct {
	m       *Machine[S, T, F]
	effects Effects[S, T]

	fmu   sync.Mutex // fmu guards facts; guards read them inside Fire
	facts F
}

// NewOwner builds the machine from s and binds it to its effect table. The
// facts its guards read start as F's zero value; [Owner.SetFacts] changes
// them. It panics when the table misses an effect the declaration names or
// names one the declaration does not: a mismatch is a programming error
// caught at construction, in every test that builds the owner.
func NewOwner[S, T ~string, F any](s *Spec[S, T, F], effects Effects[S, T]) *Owner[S, T, F] {
	if missing, extra := effectTableMismatch(s, effects); len(missing)+len(extra) > 0 {
		panic(fmt.Sprintf("fsm: %s: effect table mismatch: missing %v, not declared %v", s.Name, missing, extra))
	}
	o := &Owner[S, T, F]{effects: effects}
	o.m = s.Build(o.Facts)
	return o
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

// SetFacts changes the facts the guards read: the one way an owner states
// what it observed. Set them before firing the trigger whose guard reads
// them (an effect sets them before answering with that trigger).
func (o *Owner[S, T, F]) SetFacts(set func(*F)) {
	o.fmu.Lock()
	defer o.fmu.Unlock()
	set(&o.facts)
}

// Facts returns the facts the guards read now.
func (o *Owner[S, T, F]) Facts() F {
	o.fmu.Lock()
	defer o.fmu.Unlock()
	return o.facts
}

// Fire fires t and then every trigger the effects answer with. It returns
// the last step taken. A refusal of t itself is returned as is (nothing ran);
// a refusal of a chained trigger, or an effect's error, is returned with the
// step that preceded it. The chain is bounded by the declaration's edges: a
// chain longer than every edge taken once is a declaration bug.
func (o *Owner[S, T, F]) Fire(ctx context.Context, t T) (Step[S, T], error) {
	return o.chain(context.WithValue(ctx, inputKey{}, nil), t)
}

// FireWith is Fire with a per-call input: every effect of the chain written
// with [Takes] for an In receives in. It replaces a closure stashed in the
// owner's fields for the effect to find: the input lives as long as the call.
func FireWith[In any, S, T ~string, F any](ctx context.Context, o *Owner[S, T, F], t T, in In) (Step[S, T], error) {
	return o.chain(context.WithValue(ctx, inputKey{}, in), t)
}

// Takes writes an effect that takes a typed per-call input. Fired by plain
// Fire, or by FireWith with another type, the effect runs not and the chain
// stops with an error: the declaration returned it where the owner had no
// input to give.
func Takes[In any, S, T ~string](fn func(ctx context.Context, step Step[S, T], in In) (T, error)) EffectFunc[S, T] {
	return func(ctx context.Context, step Step[S, T]) (T, error) {
		in, ok := ctx.Value(inputKey{}).(In)
		if !ok {
			return "", fmt.Errorf("fsm: effect %s takes a %T input; its trigger was fired without one", step.Effect, in)
		}
		return fn(ctx, step, in)
	}
}

// inputKey carries FireWith's input to the chain's effects; Fire shadows it,
// so a Fire inside an effect never hands on its caller's input.
type inputKey struct{}

func (o *Owner[S, T, F]) chain(ctx context.Context, t T) (Step[S, T], error) {
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

// Run drives the machine through the states where it rests with no effect
// to answer for it but the owner, not the outside world, moves it on: in
// each state next names, it fires next[state] (and its chain), until the
// machine rests in a state next does not name. Once ctx has ended, it fires
// interrupt(context.Cause(ctx)) instead wherever the state takes it, so an
// ended caller is told apart from a refusal. It returns the last step taken
// (From says where the machine came from into its final state) or the first
// refusal or effect error. Like Fire's chain it is bounded: more rests than
// the declaration has edges is a declaration bug.
func (o *Owner[S, T, F]) Run(ctx context.Context, next map[S]T, interrupt func(cause error) T) (Step[S, T], error) {
	var last Step[S, T]
	for rests := 0; rests <= len(o.m.spec.Edges); rests++ {
		t, ok := next[o.m.State()]
		if !ok {
			return last, nil
		}
		if ctx.Err() != nil {
			if it := interrupt(context.Cause(ctx)); o.m.Permitted(it) {
				t = it
			}
		}
		step, ferr := o.Fire(ctx, t)
		if step.On != "" {
			last = step // a chained refusal still names the step that ran
		}
		if ferr != nil {
			return last, ferr
		}
	}
	return last, fmt.Errorf("fsm: %s: run from %v did not come to rest", o.m.spec.Name, o.m.State())
}

// State returns the machine's state.
func (o *Owner[S, T, F]) State() S { return o.m.State() }

// Counter returns a named counter of the machine.
func (o *Owner[S, T, F]) Counter(name string) int { return o.m.Counter(name) }

// Permitted reports whether t would be accepted now.
func (o *Owner[S, T, F]) Permitted(t T) bool { return o.m.Permitted(t) }

// Trace returns the machine's latest transitions, oldest first.
func (o *Owner[S, T, F]) Trace() []Record { return o.m.Trace() }

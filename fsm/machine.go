package fsm

import (
	"context"
	"fmt"
	"sync"

	"github.com/qmuntal/stateless"
)

// Step is what one successful Fire did: the edge taken and the ledger ID of
// its effect, which the owner runs after Fire returns.
type Step[S, T ~string] struct {
	From     S
	On       T
	To       S
	Effect   Effect
	EffectID string // "" when the edge has no effect
}

// Machine is a stateless machine configured from a [Spec]. It is safe for
// concurrent use; firing is queued (run to completion). Effects are never run
// by the machine: Fire returns them and the owner runs them.
type Machine[S, T ~string, F any] struct {
	spec  *Spec[S, T, F]
	facts func() F
	sm    *stateless.StateMachine

	instance uint64 // unique in the process; names this machine in traces
	quiet    bool   // a harness machine: its transitions reach no Recorder

	mu       sync.Mutex // mu guards the fields that follow and serializes Fire
	state    S          // stateless keeps its state here (external storage)
	counters Counters
	flight   string         // the counter that opened the current flight (see EffectID)
	taken    *Edge[S, T, F] // set by the transition callback during Fire
	trace    trace
}

// Build configures a qmuntal/stateless machine from the declaration. facts
// is read whenever a guard is evaluated; it may be nil when no guard reads
// facts. An unhandled trigger becomes a [*Refusal] with [TransitionRefused].
func (s *Spec[S, T, F]) Build(facts func() F) *Machine[S, T, F] {
	return s.build(facts, false)
}

// build is Build; a quiet machine (the property harness's) records its
// transitions in its own trace only, never to the process Recorder: the
// harness jumps between states, which no real run does.
func (s *Spec[S, T, F]) build(facts func() F, quiet bool) *Machine[S, T, F] {
	if facts == nil {
		facts = func() F { var zero F; return zero }
	}
	register(s)
	m := &Machine[S, T, F]{spec: s, facts: facts, state: s.Initial, counters: Counters{}, instance: instances.Add(1), quiet: quiet}
	// External storage lets the exhaustive exploration restore a machine to
	// a state it reached before; stateless calls these under m.mu (Fire).
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.state, nil },
		func(_ context.Context, st stateless.State) error { m.state = st.(S); return nil },
		stateless.FiringQueued)
	for i := range s.Edges {
		e := s.Edges[i]
		cfg := m.sm.Configure(e.From)
		var guards []stateless.GuardFunc
		if e.Guard != nil {
			g := e.Guard
			guards = append(guards, func(context.Context, ...any) bool { return g.OK(m.envLocked()) })
		}
		if e.From == e.To {
			cfg.PermitReentry(e.On, guards...)
		} else {
			cfg.Permit(e.On, e.To, guards...)
		}
	}
	m.sm.OnUnhandledTrigger(func(_ context.Context, state stateless.State, trigger stateless.Trigger, unmet []string) error {
		if len(unmet) > 0 {
			return Refusef(TransitionRefused, "%s: %v not accepted in %v (guard not met)", s.Name, trigger, state)
		}
		return Refusef(TransitionRefused, "%s: %v not accepted in %v", s.Name, trigger, state)
	})
	m.sm.OnTransitioned(func(_ context.Context, tr stateless.Transition) {
		from, _ := tr.Source.(S)
		to, _ := tr.Destination.(S)
		on, _ := tr.Trigger.(T)
		for i := range s.Edges {
			e := &s.Edges[i]
			if e.From == from && e.On == on && e.To == to {
				m.taken = e
				return
			}
		}
	})
	return m
}

// envLocked is called from guards, which stateless runs inside Fire while
// m.mu is held.
func (m *Machine[S, T, F]) envLocked() Env[F] {
	return Env[F]{Facts: m.facts(), Counters: m.counters}
}

// Fire sends trigger t. On success it returns the step taken; the caller
// then runs Step.Effect. An unaccepted trigger returns a *Refusal and leaves
// the machine unchanged.
func (m *Machine[S, T, F]) Fire(ctx context.Context, t T) (Step[S, T], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.taken = nil
	from := m.stateLocked()
	if err := m.sm.FireCtx(ctx, t); err != nil {
		return Step[S, T]{}, err
	}
	if m.taken == nil {
		// stateless accepted a trigger the declaration has no edge for.
		return Step[S, T]{}, fmt.Errorf("fsm: %s: %v in %v: transition not in declaration", m.spec.Name, t, from)
	}
	e := *m.taken
	m.counters, m.flight = m.spec.advance(m.counters, m.flight, e)
	step := Step[S, T]{From: e.From, On: e.On, To: e.To, Effect: e.Effect, EffectID: m.spec.EffectID(e, m.counters, m.flight)}
	m.trace.add(Record{Machine: m.spec.Name, Instance: m.instance, From: string(e.From), On: string(e.On),
		To: string(e.To), Effect: string(e.Effect), EffectID: step.EffectID}, !m.quiet)
	return step, nil
}

// restore puts the machine back in a state it reached before, for the
// exhaustive exploration.
func (m *Machine[S, T, F]) restore(st S, c Counters, flight string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state, m.counters, m.flight = st, c.clone(), flight
}

// Trace returns the machine's latest transitions (at most [MaxTrace]),
// oldest first.
func (m *Machine[S, T, F]) Trace() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.trace.buf...)
}

// State returns the current state.
func (m *Machine[S, T, F]) State() S {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateLocked()
}

func (m *Machine[S, T, F]) stateLocked() S { return m.state }

// Counter returns the value of a named counter.
func (m *Machine[S, T, F]) Counter(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counters[name]
}

// Permitted reports whether t would be accepted now.
func (m *Machine[S, T, F]) Permitted(t T) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.spec.Next(m.stateLocked(), t, m.envLocked())
	return ok
}

// Spec returns the declaration the machine was built from.
func (m *Machine[S, T, F]) Spec() *Spec[S, T, F] { return m.spec }

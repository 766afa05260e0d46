package mcpsession

import (
	"context"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestSessionProperties(t *testing.T) { fsmtest.Check(t, Spec) }

// TestSessionTable: each (state, trigger) of a session and what it leads to.
func TestSessionTable(t *testing.T) {
	path := map[State][]Trigger{
		Open:    nil,
		Serving: {Serve},
		Closing: {Serve, End},
		Closed:  {Serve, End, Ended},
	}
	for _, c := range []struct {
		name   string
		from   State
		on     Trigger
		to     State
		effect fsm.Effect
		refuse bool
	}{
		{"serve", Open, Serve, Serving, fsm.NoEffect, false},
		{"ended unserved", Open, End, Closing, EffectEndSession, false},
		{"client gone", Serving, End, Closing, EffectEndSession, false},
		{"end ran", Closing, Ended, Closed, fsm.NoEffect, false},
		{"served twice", Serving, Serve, Serving, fsm.NoEffect, true},
		{"ended twice", Closing, End, Closing, fsm.NoEffect, true},
		{"serve while closing", Closing, Serve, Closing, fsm.NoEffect, true},
		{"never serves again", Closed, Serve, Closed, fsm.NoEffect, true},
		{"end is once", Closed, End, Closed, fsm.NoEffect, true},
		{"ended before the end", Serving, Ended, Serving, fsm.NoEffect, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := Spec.Build(nil)
			for _, tr := range path[c.from] {
				if _, err := m.Fire(context.Background(), tr); err != nil {
					t.Fatalf("reaching %s: %v", c.from, err)
				}
			}
			step, err := m.Fire(context.Background(), c.on)
			if c.refuse {
				if !fsm.IsCode(err, fsm.TransitionRefused) || m.State() != c.from {
					t.Fatalf("%s in %s = %v (now %s), want transition_refused", c.on, c.from, err, m.State())
				}
				return
			}
			if err != nil || step.To != c.to || step.Effect != c.effect {
				t.Fatalf("%s in %s = %+v, %v; want %s with %q", c.on, c.from, step, err, c.to, c.effect)
			}
		})
	}
}

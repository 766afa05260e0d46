package lease

import (
	"context"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestSharedTabProperties(t *testing.T) { fsmtest.Check(t, SharedTabSpec) }

// TestSharedTabTable: each (state, trigger) of a shared tab's attachment and
// what it leads to. A share that ends is lost at once: there is no
// reconnecting state to pass through, and no trigger leads back to ready.
func TestSharedTabTable(t *testing.T) {
	path := map[AttachState][]AttachTrigger{
		AttachAttaching: nil,
		AttachReady:     {AttachUp},
		AttachLost:      {AttachUp, AttachSocketLost},
		AttachDetached:  {AttachUp, AttachClose},
	}
	for _, c := range []struct {
		name   string
		from   AttachState
		on     AttachTrigger
		to     AttachState
		effect fsm.Effect
		refuse bool
	}{
		{"attached", AttachAttaching, AttachUp, AttachReady, fsm.NoEffect, false},
		{"registration failed", AttachAttaching, AttachFailed, AttachDetached, fsm.NoEffect, false},
		{"share ended", AttachReady, AttachSocketLost, AttachLost, EffectRetirePages, false},
		{"closed while attached detaches", AttachReady, AttachClose, AttachDetached, EffectDetachDebugger, false},
		{"closed once lost", AttachLost, AttachClose, AttachDetached, fsm.NoEffect, false},
		{"no reconnect after the share ended", AttachLost, AttachReconnected, AttachLost, fsm.NoEffect, true},
		{"no second loss", AttachLost, AttachSocketLost, AttachLost, fsm.NoEffect, true},
		{"never reconnecting", AttachReady, AttachReconnected, AttachReady, fsm.NoEffect, true},
		{"never closes the browser", AttachReady, AttachClosedDone, AttachReady, fsm.NoEffect, true},
		{"detached is final", AttachDetached, AttachUp, AttachDetached, fsm.NoEffect, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := SharedTabSpec.Build(nil)
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

package bridge

import (
	"context"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestListenerProperties(t *testing.T) { fsmtest.Check(t, ListenerSpec) }
func TestSocketProperties(t *testing.T)   { fsmtest.Check(t, SocketSpec) }

// TestSocketTable: each (state, trigger) of a share's socket and what it
// leads to. Close only detaches, and only once; an ended socket never opens
// again.
func TestSocketTable(t *testing.T) {
	path := map[SocketState][]SocketTrigger{
		SocketOpen:    nil,
		SocketEnded:   {SocketRoutesEnded},
		SocketClosing: {SocketClose},
		SocketClosed:  {SocketClose, SocketDetached},
	}
	for _, c := range []struct {
		name   string
		from   SocketState
		on     SocketTrigger
		to     SocketState
		effect fsm.Effect
		refuse bool
	}{
		{"last route ended", SocketOpen, SocketRoutesEnded, SocketEnded, fsm.NoEffect, false},
		{"closed while open detaches", SocketOpen, SocketClose, SocketClosing, EffectDetachRoutes, false},
		{"closed once ended", SocketEnded, SocketClose, SocketClosing, EffectDetachRoutes, false},
		{"detached: queue released", SocketClosing, SocketDetached, SocketClosed, EffectReleaseQueue, false},
		{"closed twice", SocketClosing, SocketClose, SocketClosing, fsm.NoEffect, true},
		{"routes ending while closing", SocketClosing, SocketRoutesEnded, SocketClosing, fsm.NoEffect, true},
		{"closed is final", SocketClosed, SocketClose, SocketClosed, fsm.NoEffect, true},
		{"ended twice", SocketEnded, SocketRoutesEnded, SocketEnded, fsm.NoEffect, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := SocketSpec.Build(nil)
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

// TestListenerCloseOnce: a closed listener accepts and attaches nothing,
// says so in its status, and a second Close runs nothing again.
func TestListenerCloseOnce(t *testing.T) {
	s, err := Listen(Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Status().Listening || s.life.State() != ListenerListening {
		t.Fatalf("a new listener: %+v in %s", s.Status(), s.life.State())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close = %v", err)
	}
	if s.Status().Listening || s.life.State() != ListenerClosed {
		t.Fatalf("a closed listener: %+v in %s", s.Status(), s.life.State())
	}
	if _, err := s.Attach(context.Background(), "o-1"); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("an attach on a closed listener = %v, want not_found", err)
	}
	var closing int
	for _, r := range s.life.Trace() {
		if r.On == string(ListenerClose) {
			closing++
		}
	}
	if closing != 1 {
		t.Fatalf("close taken %d times", closing)
	}
}

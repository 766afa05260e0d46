package fsmtest

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"pgregory.net/rapid"
)

type toyState string
type toyTrigger string
type toyFacts struct{ OK bool }

func drawToyFacts(d fsm.Drawer) toyFacts { return toyFacts{OK: d.Bool("ok")} }

var toyOK = &fsm.Guard[toyFacts]{Name: "ok", OK: func(e fsm.Env[toyFacts]) bool { return e.Facts.OK }}

// goodToy is a small reconnecting machine that passes every property.
func goodToy() *fsm.Spec[toyState, toyTrigger, toyFacts] {
	return &fsm.Spec[toyState, toyTrigger, toyFacts]{
		Name: "toy", Title: "Toy", Guards: "nothing", Initial: "ready",
		States: []fsm.StateDoc[toyState]{
			fsm.Doc[toyState]("ready", "Connected."),
			fsm.Doc[toyState]("dialing", "Dialing, within a budget of attempts."),
			fsm.Doc[toyState]("invalidating", "Connected again; older capabilities still to refuse."),
			fsm.Doc[toyState]("failed", "Gave up."),
			fsm.Doc[toyState]("revoked", "Revoked for good."),
		},
		Triggers: []toyTrigger{"lost", "dialed", "retry", "done", "request", "revoke"},
		Edges: []fsm.Edge[toyState, toyTrigger, toyFacts]{
			{From: "ready", On: "lost", To: "dialing", Effect: "lead", Count: "losses", Reset: []string{"attempts"}},
			{From: "dialing", On: "retry", To: "dialing", Guard: fsm.Below[toyFacts]("attempts", 3), Effect: "dial", Count: "attempts"},
			{From: "dialing", On: "retry", To: "failed", Guard: fsm.AtLeast[toyFacts]("attempts", 3)},
			{From: "dialing", On: "dialed", To: "invalidating", Guard: toyOK, Count: "generation"},
			{From: "dialing", On: "dialed", To: "failed", Guard: fsm.Not(toyOK)},
			{From: "dialing", On: "revoke", To: "revoked"},
			{From: "invalidating", On: "done", To: "ready", Effect: "invalidate", Count: "invalidations"},
		},
		Effects: []fsm.Effect{"lead", "dial", "invalidate"},
		Stable:  []toyState{"ready"}, Terminal: []toyState{"failed", "revoked"},
		Budgets: fsm.Counters{"attempts": 3}, MaxTransient: 6,
		Generation: "generation", Invalidate: "invalidate",
		Revoked: []toyState{"revoked"}, Armed: []toyState{"ready"},
		Flight:    "lead",
		DrawFacts: drawToyFacts,
	}
}

// recordingTB lets the meta-test run the harness and read its verdict
// instead of failing.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Logf(string, ...any)       {}
func (r *recordingTB) Log(...any)                {}
func (r *recordingTB) Errorf(f string, a ...any) { r.record(fmt.Sprintf(f, a...)) }
func (r *recordingTB) Error(a ...any)            { r.record(fmt.Sprint(a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) {
	r.record(fmt.Sprintf(f, a...))
	runtime.Goexit()
}
func (r *recordingTB) Fatal(a ...any) { r.record(fmt.Sprint(a...)); runtime.Goexit() }
func (r *recordingTB) FailNow()       { r.record("FailNow"); runtime.Goexit() }
func (r *recordingTB) Fail()          { r.record("Fail") }
func (r *recordingTB) Failed() bool   { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recordingTB) record(m string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, m)
}

// runWalk runs the rapid walk alone (no exploration) on s against a
// recorder and returns what it said.
func runWalk(t *testing.T, s *fsm.Spec[toyState, toyTrigger, toyFacts]) (bool, string) {
	t.Helper()
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		f.Value.Set("true")
		defer f.Value.Set(old)
	}
	rec := &recordingTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer AtLeastMinChecks()()
		rapid.Check(rec, func(rt *rapid.T) { Walk(rt, s, nil) })
	}()
	<-done
	return rec.Failed(), strings.Join(rec.msgs, "\n")
}

func TestCheckPassesGoodToy(t *testing.T) {
	s := goodToy()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	Check(t, s)
}

// TestWalkCatchesSeededBugs feeds the rapid walk deliberately broken
// declarations and asserts it reports each one with the right property
// (the exhaustive exploration's own cases are in fsm's tests).
func TestWalkCatchesSeededBugs(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(s *fsm.Spec[toyState, toyTrigger, toyFacts])
		want   string
	}{
		{"unbounded retry loop", func(s *fsm.Spec[toyState, toyTrigger, toyFacts]) {
			// Retry without a budget guard: dialing can loop forever.
			s.Edges[1] = fsm.Edge[toyState, toyTrigger, toyFacts]{From: "dialing", On: "retry", To: "dialing", Effect: "dial", Count: "attempts"}
			s.Edges = append(s.Edges[:2], s.Edges[3:]...)
		}, "bounded"},
		{"effect on a re-entrant edge", func(s *fsm.Spec[toyState, toyTrigger, toyFacts]) {
			// The dial effect is not keyed by the attempt counter.
			s.Edges[1].Count = ""
			s.Budgets = nil
		}, "no replay"},
		{"missing invalidation", func(s *fsm.Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges[6].Effect = ""
		}, "generations"},
		{"revocation re-armed", func(s *fsm.Spec[toyState, toyTrigger, toyFacts]) {
			s.Terminal = []toyState{"failed"}
			s.Edges = append(s.Edges, fsm.Edge[toyState, toyTrigger, toyFacts]{From: "revoked", On: "request", To: "ready"})
		}, "revocation final"},
		{"second leader in one flight", func(s *fsm.Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges = append(s.Edges, fsm.Edge[toyState, toyTrigger, toyFacts]{From: "dialing", On: "request", To: "dialing", Effect: "lead", Count: "losses"})
		}, "single flight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := goodToy()
			c.break_(s)
			failed, msg := runWalk(t, s)
			if !failed {
				t.Fatalf("harness passed a declaration with %s", c.name)
			}
			if !strings.Contains(msg, c.want+":") {
				t.Fatalf("harness reported %q, want the %q property", msg, c.want)
			}
		})
	}
}

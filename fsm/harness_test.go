package fsm

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

type toyState string
type toyTrigger string
type toyFacts struct{ OK bool }

func drawToyFacts(d Drawer) toyFacts { return toyFacts{OK: d.Bool("ok")} }

var toyOK = &Guard[toyFacts]{Name: "ok", OK: func(e Env[toyFacts]) bool { return e.Facts.OK }}

// goodToy is a small reconnecting machine that passes every property.
func goodToy() *Spec[toyState, toyTrigger, toyFacts] {
	return &Spec[toyState, toyTrigger, toyFacts]{
		Name: "toy", Title: "Toy", Guards: "nothing", Initial: "ready",
		States: []StateDoc[toyState]{
			{"ready", "moves to dialing on lost"},
			{"dialing", "moves to invalidating, dialing (retry) or failed"},
			{"invalidating", "moves to ready"},
			{"failed", "terminal"},
			{"revoked", "terminal"},
		},
		Triggers: []toyTrigger{"lost", "dialed", "retry", "done", "request", "revoke"},
		Edges: []Edge[toyState, toyTrigger, toyFacts]{
			{From: "ready", On: "lost", To: "dialing", Effect: "lead", Count: "losses", Reset: []string{"attempts"}},
			{From: "dialing", On: "retry", To: "dialing", Guard: Below[toyFacts]("attempts", 3), Effect: "dial", Count: "attempts"},
			{From: "dialing", On: "retry", To: "failed", Guard: AtLeast[toyFacts]("attempts", 3)},
			{From: "dialing", On: "dialed", To: "invalidating", Guard: toyOK, Count: "generation"},
			{From: "dialing", On: "dialed", To: "failed", Guard: Not(toyOK)},
			{From: "dialing", On: "revoke", To: "revoked"},
			{From: "invalidating", On: "done", To: "ready", Effect: "invalidate", Count: "invalidations"},
		},
		Stable: []toyState{"ready"}, Terminal: []toyState{"failed", "revoked"},
		Budgets: Counters{"attempts": 3}, MaxTransient: 6,
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

// runHarness runs Check on s against a recorder and returns what it said.
func runHarness(t *testing.T, s *Spec[toyState, toyTrigger, toyFacts]) (bool, string) {
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
		Check(rec, s)
	}()
	<-done
	return rec.Failed(), strings.Join(rec.msgs, "\n")
}

func TestHarnessPassesGoodToy(t *testing.T) {
	s := goodToy()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	Check(t, s)
}

// TestHarnessCatchesSeededBugs feeds the harness deliberately broken
// declarations and asserts it reports each one with the right property.
func TestHarnessCatchesSeededBugs(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(s *Spec[toyState, toyTrigger, toyFacts])
		want   string
	}{
		{"unbounded retry loop", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			// Retry without a budget guard: dialing can loop forever.
			s.Edges[1] = Edge[toyState, toyTrigger, toyFacts]{From: "dialing", On: "retry", To: "dialing", Effect: "dial", Count: "attempts"}
			s.Edges = append(s.Edges[:2], s.Edges[3:]...)
		}, "bounded"},
		{"effect on a re-entrant edge", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			// The dial effect is not keyed by the attempt counter.
			s.Edges[1].Count = ""
			s.Budgets = nil
		}, "no replay"},
		{"missing invalidation", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges[6].Effect = ""
		}, "generations"},
		{"revocation re-armed", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Terminal = []toyState{"failed"}
			s.Edges = append(s.Edges, Edge[toyState, toyTrigger, toyFacts]{From: "revoked", On: "request", To: "ready"})
		}, "revocation final"},
		{"second leader in one flight", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges = append(s.Edges, Edge[toyState, toyTrigger, toyFacts]{From: "dialing", On: "request", To: "dialing", Effect: "lead", Count: "losses"})
		}, "single flight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := goodToy()
			c.break_(s)
			failed, msg := runHarness(t, s)
			if !failed {
				t.Fatalf("harness passed a declaration with %s", c.name)
			}
			if !strings.Contains(msg, c.want+":") {
				t.Fatalf("harness reported %q, want the %q property", msg, c.want)
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(s *Spec[toyState, toyTrigger, toyFacts])
		want   string
	}{
		{"unreachable state", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States = append(s.States, StateDoc[toyState]{"island", "moves nowhere"})
			s.Stable = append(s.Stable, "island")
		}, "unreachable"},
		{"terminal with exits", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges = append(s.Edges, Edge[toyState, toyTrigger, toyFacts]{From: "failed", On: "retry", To: "dialing"})
		}, "terminal state failed has an exit"},
		{"overlapping guards", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges[4].Guard = &Guard[toyFacts]{Name: "always", OK: func(Env[toyFacts]) bool { return true }}
		}, "can both hold"},
		{"unguarded plus guarded", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges[4].Guard = nil
		}, "unguarded edge"},
		{"no rest reachable", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States = append(s.States, StateDoc[toyState]{"limbo", "moves to limbo2"}, StateDoc[toyState]{"limbo2", "moves to limbo"})
			s.Edges = append(s.Edges,
				Edge[toyState, toyTrigger, toyFacts]{From: "invalidating", On: "retry", To: "limbo"},
				Edge[toyState, toyTrigger, toyFacts]{From: "limbo", On: "retry", To: "limbo2"},
				Edge[toyState, toyTrigger, toyFacts]{From: "limbo2", On: "retry", To: "limbo"})
		}, "no stable or terminal state is reachable from limbo"},
		{"forbidden effect", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Forbidden = []Effect{"dial"}
		}, "forbidden effect dial"},
		{"undocumented state", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States[0].Doc = ""
		}, "has no doc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := goodToy()
			c.break_(s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

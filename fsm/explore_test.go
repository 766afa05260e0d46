package fsm

import (
	"strings"
	"testing"
)

func TestExploreGoodToy(t *testing.T) {
	s := goodToy()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	ex, err := s.Explore()
	if err != nil {
		t.Fatal(err)
	}
	// Pinned: a key that forgets a field merges states and shrinks these; a
	// depth one short or a fact combination skipped shrinks the steps.
	want := Exploration{Machine: "toy", Depth: len(s.States) + 2*(6+1) + 3, States: 137, Steps: 840, FactCombos: 2, Edges: len(s.Edges)}
	if ex != want {
		t.Fatalf("exploration = %+v, want %+v", ex, want)
	}
	again, _ := goodToy().Explore()
	if again != ex {
		t.Fatalf("exploration is not deterministic: %+v then %+v", ex, again)
	}
}

// TestExploreCatchesSeededBugs breaks the toy one way at a time and asserts
// the exhaustive exploration reports the right property, every time (no
// sampling). The last cases are the strengthened properties: a plain
// replay of one effect on two edges, and a revocation left for a state
// that is not listed as armed but can still run effects.
func TestExploreCatchesSeededBugs(t *testing.T) {
	type toySpec = Spec[toyState, toyTrigger, toyFacts]
	type toyEdge = Edge[toyState, toyTrigger, toyFacts]
	cases := []struct {
		name   string
		break_ func(s *toySpec)
		want   string
	}{
		{"unbounded retry loop", func(s *toySpec) {
			s.Edges[1] = toyEdge{From: "dialing", On: "retry", To: "dialing", Effect: "dial", Count: "attempts"}
			s.Edges = append(s.Edges[:2], s.Edges[3:]...)
		}, "bounded"},
		{"retry budget one too many", func(s *toySpec) {
			s.Edges[1].Guard = Below[toyFacts]("attempts", 4)
			s.Edges[2].Guard = AtLeast[toyFacts]("attempts", 4)
		}, "bounded"},
		{"effect on a re-entrant edge", func(s *toySpec) {
			s.Edges[1].Count = ""
			s.Budgets = nil
		}, "no replay"},
		{"effect fired twice on two edges", func(s *toySpec) {
			// dialed dials again: with every counter in the ID (generation
			// moved) this looked new; keyed by dial's own counter it repeats.
			s.Edges[3].Effect = "dial"
		}, "no replay"},
		{"missing invalidation", func(s *toySpec) {
			s.Edges[6].Effect = ""
		}, "generations"},
		{"revocation re-armed", func(s *toySpec) {
			s.Terminal = []toyState{"failed"}
			s.Edges = append(s.Edges, toyEdge{From: "revoked", On: "request", To: "ready"})
		}, "revocation final"},
		{"revocation left for a state that runs effects", func(s *toySpec) {
			// dialing is not listed as armed, but from it dial runs again.
			s.Terminal = []toyState{"failed"}
			s.Edges = append(s.Edges, toyEdge{From: "revoked", On: "request", To: "dialing"})
		}, "revocation final"},
		{"second leader in one flight", func(s *toySpec) {
			s.Edges = append(s.Edges, toyEdge{From: "dialing", On: "request", To: "dialing", Effect: "lead", Count: "losses"})
		}, "single flight"},
		{"edge that no path takes", func(s *toySpec) {
			s.Edges[2].Guard = AtLeast[toyFacts]("attempts", 30)
		}, "exploration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := goodToy()
			c.break_(s)
			_, err := s.Explore()
			if err == nil {
				t.Fatalf("exploration passed a declaration with %s", c.name)
			}
			if !strings.HasPrefix(err.Error(), c.want+":") {
				t.Fatalf("exploration reported %q, want the %q property", err, c.want)
			}
		})
	}
}

// TestAllFactsWalksEveryValue checks the odometer: booleans both ways,
// ranges every value, draws that depend on earlier draws re-learned.
func TestAllFactsWalksEveryValue(t *testing.T) {
	type facts struct {
		A bool
		N int
	}
	s := &Spec[toyState, toyTrigger, facts]{DrawFacts: func(d Drawer) facts {
		f := facts{A: d.Bool("a")}
		if f.A {
			f.N = d.IntRange("n", 1, 3)
		}
		return f
	}}
	got := s.AllFacts()
	want := []facts{{false, 0}, {true, 1}, {true, 2}, {true, 3}}
	if len(got) != len(want) {
		t.Fatalf("AllFacts = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("AllFacts = %v, want %v", got, want)
		}
	}
}

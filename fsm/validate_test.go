package fsm

import (
	"strings"
	"testing"
)

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(s *Spec[toyState, toyTrigger, toyFacts])
		want   string
	}{
		{"unreachable state", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States = append(s.States, StateDoc[toyState]{"island", "Nowhere."})
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
			s.States = append(s.States, StateDoc[toyState]{"limbo", "Limbo."}, StateDoc[toyState]{"limbo2", "Limbo again."})
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
		{"hand-written exits", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States[0].Doc = "Connected. Moves to dialing on lost."
		}, "writes exits by hand"},
		{"hand-written terminal", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.States[3].Doc = "Terminal. Gave up."
		}, "writes exits by hand"},
		{"effect outside the allowlist", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			// A forbidden effect under a new name is still not allowed.
			s.Edges[2].Effect = "kill_process_group"
		}, "not in the allowlist"},
		{"allowed effect on no edge", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Effects = append(s.Effects, "ghost")
		}, "allowed effect ghost is on no edge"},
		{"counted edge enabled at its budget", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges[1].Guard = Below[toyFacts]("attempts", 4)
			s.Edges[2].Guard = AtLeast[toyFacts]("attempts", 4)
		}, "holds at the budget 3"},
		{"counted edge without a guard", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges = append(s.Edges, Edge[toyState, toyTrigger, toyFacts]{From: "dialing", On: "request", To: "dialing", Effect: "dial", Count: "attempts"})
		}, "has no guard: it is not disabled at the budget 3"},
		{"effect counted by two counters", func(s *Spec[toyState, toyTrigger, toyFacts]) {
			s.Edges = append(s.Edges, Edge[toyState, toyTrigger, toyFacts]{From: "invalidating", On: "request", To: "ready", Effect: "dial", Count: "requests"})
		}, "effect dial is counted by attempts and by requests"},
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

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

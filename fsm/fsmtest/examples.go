package fsmtest

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// Example is one named row of a machine's table: in state From, with
// counters Counters and facts Facts, trigger On leads to To and returns
// Effect — or, with Refused, is refused (transition_refused) and leaves the
// machine where it was.
type Example[S, T ~string, F any] struct {
	Name     string
	From     S
	Counters fsm.Counters
	Facts    F
	On       T
	To       S
	Effect   fsm.Effect
	Refused  bool
}

// Examples runs each row as a subtest named by it: the real machine, placed
// in From ([fsm.Spec.Place]), fires On, and both it and the table model
// ([fsm.Spec.Next]) must answer as the row says. It then fails for every
// declared edge no row takes, so a new edge comes with its row.
func Examples[S, T ~string, F any](t *testing.T, s *fsm.Spec[S, T, F], rows []Example[S, T, F]) {
	t.Helper()
	taken := map[string]bool{}
	names := map[string]bool{}
	for _, row := range rows {
		if names[row.Name] {
			t.Errorf("%s: two rows named %q", s.Name, row.Name)
		}
		names[row.Name] = true
		t.Run(row.Name, func(t *testing.T) {
			key, problem := checkRow(s, row)
			if problem != "" {
				t.Fatal(problem)
			}
			if key != "" {
				taken[key] = true
			}
		})
	}
	for _, key := range untaken(s, taken) {
		t.Errorf("%s: no row takes %s", s.Name, key)
	}
}

// checkRow fires one row and returns the key of the edge it took ("" for a
// refusal) or what is wrong.
func checkRow[S, T ~string, F any](s *fsm.Spec[S, T, F], row Example[S, T, F]) (key, problem string) {
	env := fsm.Env[F]{Facts: row.Facts, Counters: maps.Clone(row.Counters)}
	want, modelOK := s.Next(row.From, row.On, env)
	m := s.Place(row.From, maps.Clone(row.Counters), func() F { return row.Facts })
	step, err := m.Fire(context.Background(), row.On)
	switch {
	case modelOK != (err == nil):
		return "", fmt.Sprintf("%s in %s: the table model accepts=%v, the machine answered %v", row.On, row.From, modelOK, err)
	case row.Refused && !fsm.IsCode(err, fsm.TransitionRefused):
		return "", fmt.Sprintf("%s in %s = %s with effect %q, %v; want transition_refused", row.On, row.From, step.To, step.Effect, err)
	case row.Refused && m.State() != row.From:
		return "", fmt.Sprintf("refused %s moved the machine from %s to %s", row.On, row.From, m.State())
	case row.Refused:
		return "", ""
	case err != nil:
		return "", fmt.Sprintf("%s in %s refused: %v; want %s with effect %q", row.On, row.From, err, row.To, row.Effect)
	case step.To != row.To || m.State() != row.To || step.Effect != row.Effect:
		return "", fmt.Sprintf("%s in %s = %s with effect %q; want %s with effect %q", row.On, row.From, step.To, step.Effect, row.To, row.Effect)
	}
	return edgeKey(want), ""
}

// untaken lists the declared edges not in taken, in declaration order.
func untaken[S, T ~string, F any](s *fsm.Spec[S, T, F], taken map[string]bool) []string {
	var out []string
	for _, e := range s.Edges {
		if key := edgeKey(e); !taken[key] {
			out = append(out, key)
		}
	}
	return out
}

// edgeKey names an edge with its guard: two edges from one state on one
// trigger differ by guard.
func edgeKey[S, T ~string, F any](e fsm.Edge[S, T, F]) string {
	k := fsm.EdgeKey(string(e.From), string(e.On), string(e.To))
	if e.Guard != nil {
		k += " [" + e.Guard.Name + "]"
	}
	return k
}

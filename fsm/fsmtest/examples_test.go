package fsmtest

import (
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

type toyRow = Example[toyState, toyTrigger, toyFacts]

// toyRows is goodToy's table: every edge taken once, and refusals.
var toyRows = []toyRow{
	{Name: "a loss leads the reconnect", From: "ready", On: "lost", To: "dialing", Effect: "lead"},
	{Name: "a retry within the budget dials", From: "dialing", Counters: fsm.Counters{"attempts": 2}, On: "retry", To: "dialing", Effect: "dial"},
	{Name: "a retry past the budget fails", From: "dialing", Counters: fsm.Counters{"attempts": 3}, On: "retry", To: "failed"},
	{Name: "a good dial invalidates", From: "dialing", Facts: toyFacts{OK: true}, On: "dialed", To: "invalidating"},
	{Name: "a bad dial fails", From: "dialing", On: "dialed", To: "failed"},
	{Name: "revoked while dialing", From: "dialing", On: "revoke", To: "revoked"},
	{Name: "invalidated, ready again", From: "invalidating", On: "done", To: "ready", Effect: "invalidate"},
	{Name: "no dial while ready", From: "ready", On: "dialed", Refused: true},
	{Name: "revoked is final", From: "revoked", On: "request", Refused: true},
}

func TestExamplesToy(t *testing.T) { Examples(t, goodToy(), toyRows) }

// TestExamplesCatchWrongRows: a row that misstates the target, the effect,
// a guard's outcome or a refusal is reported, and so is an edge no row takes.
func TestExamplesCatchWrongRows(t *testing.T) {
	s := goodToy()
	for _, c := range []struct {
		row  toyRow
		want string
	}{
		{toyRow{From: "ready", On: "lost", To: "failed", Effect: "lead"}, "want failed"},
		{toyRow{From: "ready", On: "lost", To: "dialing"}, `effect "lead"; want dialing with effect ""`},
		{toyRow{From: "dialing", Counters: fsm.Counters{"attempts": 3}, On: "retry", To: "dialing", Effect: "dial"}, "want dialing"},
		{toyRow{From: "ready", On: "lost", Refused: true}, "want transition_refused"},
		{toyRow{From: "ready", On: "dialed", To: "ready"}, "refused"},
	} {
		if _, problem := checkRow(s, c.row); !strings.Contains(problem, c.want) {
			t.Errorf("row %+v: problem %q, want one saying %q", c.row, problem, c.want)
		}
	}
	taken := map[string]bool{}
	for _, row := range toyRows[1:] {
		key, _ := checkRow(s, row)
		taken[key] = true
	}
	if got := untaken(s, taken); len(got) != 1 || got[0] != "ready --lost--> dialing" {
		t.Errorf("untaken edges = %v, want the loss edge alone", got)
	}
}

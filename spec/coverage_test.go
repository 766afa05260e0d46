package spec

import (
	"strings"
	"testing"
)

// TestEveryTargetEdgeIsCoveredOrExplained fails when an edge of a coverage
// target is taken by no real-browser test in the recording and has no
// reason in Unreached, or when a reason has gone stale.
func TestEveryTargetEdgeIsCoveredOrExplained(t *testing.T) {
	for _, p := range CoverageProblems() {
		t.Error(p)
	}
}

// TestCoverageProblemsAreFound checks the check: a reason for an edge that
// is not declared is reported, and so is a target edge left unexplained.
func TestCoverageProblemsAreFound(t *testing.T) {
	saved := Unreached
	defer func() { Unreached = saved }()
	Unreached = map[string]map[string]string{"consent": {"nowhere --x--> nowhere": "a reason"}}
	joined := strings.Join(CoverageProblems(), "\n")
	if !strings.Contains(joined, "explains nowhere --x--> nowhere, which is not declared") {
		t.Fatalf("a stale reason was not reported:\n%s", joined)
	}
	cov, err := Coverage()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Machines() {
		tab := d.Table()
		if tab.Name != "consent" {
			continue
		}
		for _, e := range tab.Edges {
			k := e.From + " --" + e.On + "--> " + e.To
			if len(cov["consent"][k]) == 0 && !strings.Contains(joined, "consent: "+k+" is taken by no real test") {
				t.Errorf("unexplained, untaken edge %s was not reported", k)
			}
		}
	}
}

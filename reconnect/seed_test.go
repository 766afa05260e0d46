package reconnect

import "testing"

// seedPath is the reconnect machine as the design's seed draws it ("On
// socket loss"), transition by transition.
var seedPath = []State{
	"ready",
	"reconnect_singleflight",
	"mutation_gates_closed",
	"process_profile_endpoint_revalidated",
	"connecting_pending_consent",
	"endpoint_generation_incremented",
	"old_capabilities_invalidated",
	"mutation_gates_reopened",
	"ready_for_rebind",
}

// seedPromptEdges are the prompt sub-states the seed gives the consent
// machine's connecting_pending_consent; the reconnect machine dials under
// the same prompt, so it has them too.
var seedPromptEdges = [][2]State{
	{"connecting_pending_consent", "consent_prompt_observed"},
	{"consent_prompt_observed", "consent_pressed"},
	{"connecting_pending_consent", "consent_dismissed"},
	{"consent_dismissed", "grant_revoked"},
}

// TestSeedTransitionsDeclared: every state the seed names is declared under
// its exact name, and every transition it draws is a declared edge (none is
// renamed or merged).
func TestSeedTransitionsDeclared(t *testing.T) {
	declared := map[State]bool{}
	for _, s := range Spec.StateNames() {
		declared[s] = true
	}
	edges := map[[2]State]bool{}
	for _, e := range Spec.Edges {
		edges[[2]State{e.From, e.To}] = true
	}
	pairs := append([][2]State(nil), seedPromptEdges...)
	for i := 1; i < len(seedPath); i++ {
		pairs = append(pairs, [2]State{seedPath[i-1], seedPath[i]})
	}
	for _, p := range pairs {
		for _, s := range p {
			if !declared[s] {
				t.Errorf("seed state %s is not declared", s)
			}
		}
		if !edges[p] {
			t.Errorf("seed transition %s -> %s is not declared", p[0], p[1])
		}
	}
	if Spec.Initial != seedPath[0] {
		t.Errorf("initial state %s, the seed starts in %s", Spec.Initial, seedPath[0])
	}
}

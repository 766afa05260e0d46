package consent

import "testing"

// seedEdges is the consent machine as the design's seed draws it, one
// transition per pair: the main line, the four outcomes of
// connecting_pending_consent, and the line after socket_ready.
var seedEdges = [][2]State{
	{"approval_required", "grant_active"},
	{"grant_active", "endpoint_preflight"},
	{"endpoint_preflight", "connecting_pending_consent"},
	{"connecting_pending_consent", "socket_ready"},
	{"connecting_pending_consent", "consent_prompt_observed"},
	{"consent_prompt_observed", "consent_pressed"},
	{"consent_pressed", "socket_ready"},
	{"connecting_pending_consent", "consent_dismissed"},
	{"consent_dismissed", "grant_revoked"},
	{"connecting_pending_consent", "timeout_or_ambiguity"},
	{"timeout_or_ambiguity", "refused"},
	{"socket_ready", "endpoint_reproved"},
	{"endpoint_reproved", "capabilities_invalidated"},
	{"capabilities_invalidated", "ready_for_rebind"},
}

// TestSeedTransitionsDeclared: every state the seed names is declared under
// its exact name, and every transition it draws is a declared edge (none is
// renamed or merged).
func TestSeedTransitionsDeclared(t *testing.T) {
	declared := map[State]bool{}
	for _, s := range AttemptSpec.StateNames() {
		declared[s] = true
	}
	edges := map[[2]State]bool{}
	for _, e := range AttemptSpec.Edges {
		edges[[2]State{e.From, e.To}] = true
	}
	for _, p := range seedEdges {
		for _, s := range p {
			if !declared[s] {
				t.Errorf("seed state %s is not declared", s)
			}
		}
		if !edges[p] {
			t.Errorf("seed transition %s -> %s is not declared", p[0], p[1])
		}
	}
	if AttemptSpec.Initial != seedEdges[0][0] {
		t.Errorf("initial state %s, the seed starts in %s", AttemptSpec.Initial, seedEdges[0][0])
	}
}

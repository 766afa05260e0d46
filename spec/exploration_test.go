package spec

import "testing"

// pinnedExplorations is how many distinct states and checked steps each
// machine's exhaustive exploration visits. A deduplication key that forgets
// a field merges states that differ and shrinks the search silently; a
// depth one short, a skipped fact combination or a trigger left out
// shrinks the steps: each changes a number here. A change to a declaration
// changes them too: re-pin from the rendered README (spec/README.md) after
// reviewing why.
var pinnedExplorations = map[string]struct{ States, Steps int }{
	"consent":               {34, 545},
	"approval_request":      {17, 124},
	"grant":                 {46, 232},
	"reconnect":             {17518, 310936}, // +401 states: cancelled reached from ready and ready_for_rebind (issue 20: a session end at rest)
	"attachment_owned":      {8, 56},
	"attachment_external":   {35, 224},
	"attachment_shared_tab": {7, 35},
	"process_lease":         {7, 28},
	"extension_offer":       {4, 13},
	"mutation_gate":         {20, 68},
	"browser_gates":         {7, 12}, // issue 20: the browser-wide phase that replaced the gates' closed and gen maps
	"effect_ledger":         {8, 49},
	"bridge_peer":           {4, 12},
	"bridge_route":          {14, 65},
	"bridge_listener":       {3, 6},
	"bridge_socket":         {4, 12},
	"mcp_session":           {4, 12},
	"download":              {7, 36},
	"runner":                {3, 9},
	"raw_cdp_session":       {74, 434},
}

func TestExplorationCountsPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Machines() {
		tab := explored(d)
		seen[tab.Name] = true
		pin, ok := pinnedExplorations[tab.Name]
		if !ok {
			t.Errorf("%s: exploration not pinned (%d states, %d steps): add it to pinnedExplorations", tab.Name, tab.Exploration.States, tab.Exploration.Steps)
			continue
		}
		if ex := tab.Exploration; ex.States != pin.States || ex.Steps != pin.Steps {
			t.Errorf("%s: exploration visited %d states in %d steps, pinned %d in %d", tab.Name, ex.States, ex.Steps, pin.States, pin.Steps)
		}
	}
	for name := range pinnedExplorations {
		if !seen[name] {
			t.Errorf("%s is pinned but is no machine", name)
		}
	}
}

package spec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

var update = flag.Bool("update", false, "rewrite spec/ from the code")

// TestSpecMatchesCode fails when spec/ drifts from the declarations.
func TestSpecMatchesCode(t *testing.T) {
	if *update {
		if err := Write("."); err != nil {
			t.Fatal(err)
		}
	}
	if diff := Diff("."); len(diff) > 0 {
		t.Fatalf("spec/ differs from the code in %v: run `webcodex spec` (or go test ./spec -update)", diff)
	}
}

// TestDriftIsDetected changes a declaration in memory and checks Diff sees it.
// The declaration changed is a small machine's (the process lease): a
// changed one is explored again, and the reconnect machine's exploration
// is most of this package's time.
func TestDriftIsDetected(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	if d := Diff(dir); len(d) != 0 {
		t.Fatalf("fresh write differs: %v", d)
	}
	old := lease.ProcessSpec.Edges[0].Effect
	lease.ProcessSpec.Edges[0].Effect = "something_else"
	defer func() { lease.ProcessSpec.Edges[0].Effect = old }()
	d := Diff(dir)
	if len(d) == 0 || !strings.Contains(strings.Join(d, ","), "process_lease.md") {
		t.Fatalf("changed declaration not detected: %v", d)
	}
	os.WriteFile(filepath.Join(dir, "leftover.md"), []byte("x"), 0o644)
	lease.ProcessSpec.Edges[0].Effect = old
	if d := Diff(dir); len(d) != 1 || d[0] != "leftover.md" {
		t.Fatalf("stale file not reported: %v", d)
	}
}

func TestSpecHoldsSeedStateNames(t *testing.T) {
	files := Files()
	for file, states := range map[string][]string{
		"consent.md":          {"approval_required", "grant_active", "endpoint_preflight", "connecting_pending_consent", "socket_ready", "consent_prompt_observed", "consent_pressed", "consent_dismissed", "grant_revoked", "timeout_or_ambiguity", "refused", "endpoint_reproved", "capabilities_invalidated", "ready_for_rebind"},
		"reconnect.md":        {"ready", "reconnect_singleflight", "mutation_gates_closed", "process_profile_endpoint_revalidated", "connecting_pending_consent", "endpoint_generation_incremented", "old_capabilities_invalidated", "mutation_gates_reopened", "ready_for_rebind"},
		"approval_request.md": {"pending", "approved", "consumed", "expired"},
		"grant.md":            {"active", "idle_expired", "absolute_expired", "revoked", "discarded"},
		"process_lease.md":    {"free", "held", "released"},
		"extension_offer.md":  {"offered", "consumed", "expired", "revoked"},
		"mutation_gate.md":    {"open", "held", "closed_for_reconnect"},
		"effect_ledger.md":    {"dispatched", "acked", "failed", "outcome_unknown"},
		"attachment_owned.md": {"launching", "ready", "lost", "closing", "closed"},
	} {
		body := string(files[file])
		if body == "" {
			t.Errorf("%s not generated", file)
		}
		for _, s := range states {
			if !strings.Contains(body, "`"+s+"`") {
				t.Errorf("%s lacks state %s", file, s)
			}
		}
		if !strings.Contains(body, "```mermaid\nstateDiagram-v2") {
			t.Errorf("%s lacks its diagram", file)
		}
	}
	refusals := string(files["refusals.md"])
	for _, c := range fsm.Codes {
		if !strings.Contains(refusals, "`"+string(c)+"`") {
			t.Errorf("refusals.md lacks %s", c)
		}
	}
}

package fsm

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestCodesAreClosedUniqueAndDocumented(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		if seen[c] {
			t.Errorf("code %s listed twice", c)
		}
		seen[c] = true
		if !codePattern.MatchString(string(c)) {
			t.Errorf("code %q does not match %s", c, codePattern)
		}
		if c.Doc() == "" || c.NextStep() == "" {
			t.Errorf("code %s has no doc or next step", c)
		}
	}
	if len(seen) != len(codeDocs) {
		t.Errorf("Codes has %d entries, codeDocs %d", len(seen), len(codeDocs))
	}
	for _, required := range []Code{"browser_consent_required", "browser_consent_revoked", "browser_endpoint_owner_mismatch", "browser_binding_stale", "browser_wrong_target_refused", "browser_route_unavailable", "browser_reconnect_exhausted", "browser_input_incomplete", "browser_requires_setup", "lease_held", "origin_denied", "outcome_unknown", "attachment_lost", "diagnostic_events_discarded"} {
		if !required.Valid() {
			t.Errorf("required code %s missing", required)
		}
	}
}

func TestUnknownCodeFailsToDecode(t *testing.T) {
	var r Refusal
	if err := json.Unmarshal([]byte(`{"code":"lease_held","detail":"x"}`), &r); err != nil || r.Code != LeaseHeld {
		t.Fatalf("decode known code: %v %+v", err, r)
	}
	if err := json.Unmarshal([]byte(`{"code":"made_up","detail":"x"}`), &r); err == nil {
		t.Fatal("an unknown code decoded")
	}
	if _, err := json.Marshal(Refusal{Code: "made_up"}); err == nil {
		t.Fatal("an unknown code encoded")
	}
}

func TestRefusalMatchesThroughWrapping(t *testing.T) {
	cause := errors.New("internal: /home/user/profile")
	err := fmt.Errorf("attach: %w", Refuse(LeaseHeld, "profile in use").WithCause(cause))
	if !IsCode(err, LeaseHeld) {
		t.Fatal("IsCode did not see the wrapped refusal")
	}
	r, _ := AsRefusal(err)
	b, _ := json.Marshal(r)
	if string(b) != `{"code":"lease_held","detail":"profile in use","next":"Close the other holder, or wait."}` {
		t.Fatalf("wire form %s", b)
	}
	if !errors.Is(err, cause) {
		t.Fatal("cause not reachable in-process")
	}
}

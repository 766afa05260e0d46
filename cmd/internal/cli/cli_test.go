package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/fsm"
)

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	if code, out, _ := run("version"); code != ExitOK || !strings.Contains(out, "webcodex") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, _ := run("version", "--no-such-flag"); code != ExitUsage {
		t.Fatalf("bad flag exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ := run("version", "extra"); code != ExitUsage {
		t.Fatalf("extra arg exit %d, want %d", code, ExitUsage)
	}
}

func TestNotBuiltVerbsRefuseHonestly(t *testing.T) {
	for _, c := range notBuilt {
		code, out, errs := run(c[0], "--json")
		if code != ExitRefused {
			t.Fatalf("%s exit %d, want %d (stderr %q)", c[0], code, ExitRefused, errs)
		}
		if !strings.Contains(errs, string(fsm.RouteUnavailable)) {
			t.Fatalf("%s stderr %q lacks the code", c[0], errs)
		}
		_ = out
	}
}

func TestRefusalJSONCarriesCode(t *testing.T) {
	var out, errb bytes.Buffer
	f := &Factory{IO: cmdutil.IO{Out: &out, Err: &errb}, JSON: true}
	if code := exitCode(f, fsm.Refuse(fsm.LeaseHeld, "in use")); code != ExitRefused {
		t.Fatalf("exit %d", code)
	}
	var got struct{ Refusal fsm.Refusal }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Refusal.Code != fsm.LeaseHeld {
		t.Fatalf("json %q: %v", out.String(), err)
	}
	// A consent refusal carries its approval request as its own field.
	out.Reset()
	ref := fsm.Refuse(fsm.ConsentRequired, "approval request ar-1: …")
	ref.ApprovalID = "ar-1"
	exitCode(f, ref)
	var consent struct {
		Refusal struct {
			Code       string `json:"code"`
			ApprovalID string `json:"approvalId"`
		} `json:"refusal"`
	}
	if err := json.Unmarshal(out.Bytes(), &consent); err != nil || consent.Refusal.ApprovalID != "ar-1" || consent.Refusal.Code != string(fsm.ConsentRequired) {
		t.Fatalf("consent refusal json %q: %v", out.String(), err)
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/spec"
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
	f := &Factory{IO: IO{Out: &out, Err: &errb}, JSON: true}
	if code := exitCode(f, fsm.Refuse(fsm.LeaseHeld, "in use")); code != ExitRefused {
		t.Fatalf("exit %d", code)
	}
	var got struct{ Refusal fsm.Refusal }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Refusal.Code != fsm.LeaseHeld {
		t.Fatalf("json %q: %v", out.String(), err)
	}
}

func TestSpecCheck(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run("spec", "--dir", dir); code != ExitOK {
		t.Fatalf("spec: %d %s", code, errs)
	}
	if code, _, _ := run("spec", "--check", "--dir", dir); code != ExitOK {
		t.Fatalf("spec --check after write: %d", code)
	}
	os.WriteFile(filepath.Join(dir, "consent.md"), []byte("hand edit"), 0o644)
	if code, _, errs := run("spec", "--check", "--dir", dir); code != ExitFailure || !strings.Contains(errs, "consent.md") {
		t.Fatalf("spec --check after a hand edit: %d %q", code, errs)
	}
	// The checkout's own spec/ is current.
	if d := spec.Diff("../../../spec"); len(d) > 0 {
		t.Fatalf("checkout spec/ differs: %v", d)
	}
}

package speccmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/cli"
	"github.com/webcodex/webcodex/cmd/internal/speccmd"
	"github.com/webcodex/webcodex/spec"
)

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb strings.Builder
	code = cli.Main(args, strings.NewReader(""), &out, &errb, speccmd.NewCmdSpec)
	return code, out.String(), errb.String()
}

func TestSpecCheck(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run("spec", "--dir", dir); code != cli.ExitOK {
		t.Fatalf("spec: %d %s", code, errs)
	}
	if code, _, _ := run("spec", "--check", "--dir", dir); code != cli.ExitOK {
		t.Fatalf("spec --check after write: %d", code)
	}
	os.WriteFile(filepath.Join(dir, "consent.md"), []byte("hand edit"), 0o644)
	if code, _, errs := run("spec", "--check", "--dir", dir); code != cli.ExitFailure || !strings.Contains(errs, "consent.md") {
		t.Fatalf("spec --check after a hand edit: %d %q", code, errs)
	}
	// The checkout's own spec/ is current.
	if d := spec.Diff("../../../spec"); len(d) > 0 {
		t.Fatalf("checkout spec/ differs: %v", d)
	}
}

package admincmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/cmd/internal/cli"
)

func runAudit(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := cli.Main(args, nil, &out, &errw, NewCmdAudit)
	return code, out.String(), errw.String()
}

// TestAuditVerifyVerb: `webcodex audit verify` exits 0 on an intact chain
// and prints its head; after an edit it exits 1 naming the record; with
// --head of a record cut from the end it exits 1 too.
func TestAuditVerifyVerb(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WEBCODEX_STATE_DIR", dir)
	l := auditchain.Open(dir)
	var head string
	for _, tool := range []string{"launch", "click", "close"} {
		h, err := l.Append(map[string]string{"tool": tool})
		if err != nil {
			t.Fatal(err)
		}
		head = h
	}
	if code, out, errs := runAudit("audit", "verify", "--head", head); code != 0 || !strings.Contains(out, "3 record(s), seq 1 to 3, head "+head) {
		t.Fatalf("intact chain: exit %d, %q %q", code, out, errs)
	}
	path := filepath.Join(dir, auditchain.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"tool":"click"`), []byte(`"tool":"hover"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runAudit("audit", "verify"); code != cli.ExitFailure || !strings.Contains(errs, "audit.jsonl line 2 (seq 2)") {
		t.Fatalf("edited record: exit %d, %q", code, errs)
	}
	if err := os.WriteFile(path, bytes.SplitAfter(b, []byte("\n"))[0], 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runAudit("audit", "verify", "--head", head); code != cli.ExitFailure || !strings.Contains(errs, "records after it are missing") {
		t.Fatalf("cut at the end: exit %d, %q", code, errs)
	}
}

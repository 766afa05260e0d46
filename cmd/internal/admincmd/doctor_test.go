package admincmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/internal/chromiumtest"
)

// TestDoctorKnowsAChromiumByItsVersion: doctor's chromium check passes the
// real Chromium, and fails an executable that is not one (/bin/true, a
// script naming something else, one that fails at once).
func TestDoctorKnowsAChromiumByItsVersion(t *testing.T) {
	real, err := chromiumtest.ChromePath()
	if err != nil {
		t.Fatal(err)
	}
	impostor := filepath.Join(t.TempDir(), "chrome")
	if err := os.WriteFile(impostor, []byte("#!/bin/sh\necho 'Frobnicator 1.2.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(filepath.Dir(impostor), "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		exe, status, says string
	}{
		{real, CheckOK, ""},
		{"/bin/true", CheckFail, "is not a Chromium-family browser"},
		{broken, CheckFail, "does not start"},
		{impostor, CheckFail, `its --version says "Frobnicator 1.2.3"`},
	} {
		t.Setenv("WEBCODEX_CHROME", tc.exe)
		c := checkChromium(context.Background())
		if c.Status != tc.status || !strings.Contains(c.Detail, tc.says) {
			t.Errorf("WEBCODEX_CHROME=%s: %+v, want %s saying %q", tc.exe, c, tc.status, tc.says)
		}
		if tc.status == CheckFail && c.Fix == "" {
			t.Errorf("WEBCODEX_CHROME=%s: a failed check with no fix", tc.exe)
		}
	}
}

package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoverCandidates: installed profiles are listed by name with an
// honest state (a DevToolsActivePort left behind by a browser that exited
// is not "ready"), absent ones are not, and nothing is a path or port.
func TestDiscoverCandidates(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	os.MkdirAll(filepath.Join(cfg, "chromium"), 0o700)
	os.MkdirAll(filepath.Join(cfg, "google-chrome"), 0o700)
	os.WriteFile(filepath.Join(cfg, "google-chrome", "DevToolsActivePort"), []byte("9\n/devtools/browser/left-behind\n"), 0o600)
	state := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(filepath.Join(state, "browser", "profiles", "work"), 0o700)
	os.MkdirAll(filepath.Join(state, "browser", "profiles", "Not_A_Name"), 0o700)
	r := newTestRunner(t, Options{StateDir: state, Chrome: "/usr/bin/chromium"})
	d, err := r.Discover(context.Background(), struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range d.Attach {
		got[c.Name] = c.State
		if c.Next == "" {
			t.Errorf("%s: no next step", c.Name)
		}
	}
	if len(got) != 2 || got["chromium"] != CandidateNotRunning || got["google-chrome"] != CandidateNotRunning {
		t.Fatalf("candidates %v", got)
	}
	if len(d.ManagedProfiles) != 1 || d.ManagedProfiles[0] != "work" || d.ExtensionBridge || !d.Launch.Available || d.Launch.Product != "chromium" {
		t.Fatalf("discover = %+v", d)
	}
	b, _ := json.Marshal(d)
	for _, leak := range []string{cfg, state, "left-behind", ":9"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("discover shows %q: %s", leak, b)
		}
	}
	if dir, ok := AttachCandidateDir("chromium"); !ok || dir != filepath.Join(cfg, "chromium") {
		t.Fatalf("AttachCandidateDir = %q, %v", dir, ok)
	}
	if _, ok := AttachCandidateDir("../chromium"); ok {
		t.Fatal("a made-up candidate resolved")
	}
}

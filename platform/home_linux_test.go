package platform

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLaunchPrivateHome: the browser's HOME and XDG base directories are a
// private directory inside its TMPDIR, never the home of the user running
// webcodex (whose ~/Downloads a download would otherwise reach).
func TestLaunchPrivateHome(t *testing.T) {
	exe := needChromium(t)
	udd := filepath.Join(t.TempDir(), "home")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true,
		Env: []string{"XDG_CONFIG_HOME=/nonexistent/leak"}})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	defer p.Close(context.Background(), nil)
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID()), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for e := range bytes.SplitSeq(env, []byte{0}) {
		if k, v, ok := strings.Cut(string(e), "="); ok {
			got[k] = v // the last entry is the one the process sees
		}
	}
	home := filepath.Join(p.TmpDir(), "home")
	if got["HOME"] != home || got["XDG_CACHE_HOME"] != filepath.Join(home, ".cache") {
		t.Errorf("HOME %q, XDG_CACHE_HOME %q; want the private home %q", got["HOME"], got["XDG_CACHE_HOME"], home)
	}
	if got["XDG_CONFIG_HOME"] != "/nonexistent/leak" {
		t.Errorf("XDG_CONFIG_HOME %q: LaunchOptions.Env must still win", got["XDG_CONFIG_HOME"])
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private home: %v; want a 0700 directory", err)
	}
}

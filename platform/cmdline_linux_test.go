package platform

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSessionBus starts a private D-Bus session bus, as every desktop
// session has, with its own XDG_RUNTIME_DIR; the test's cleanup stops it
// by its PID. It returns the bus address.
func startSessionBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Fatalf("dbus-daemon is required: apt-get install -y dbus (%v)", err)
	}
	runtime := t.TempDir()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// TestProfileProofSurvivesRewrittenTitle: with a session bus in its
// environment Chromium rewrites its process title, so /proc/PID/cmdline is
// one space-joined string; the profile is still proven (by its
// SingletonLock), also when its path holds spaces, and another profile is
// not.
func TestProfileProofSurvivesRewrittenTitle(t *testing.T) {
	exe := needChromium(t)
	bus := startSessionBus(t)
	udd := filepath.Join(t.TempDir(), "a profile --with spaces")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, Env: []string{"DBUS_SESSION_BUS_ADDRESS=" + bus}})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })

	raw, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if args := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0}); len(args) != 1 || !bytes.Contains(raw, []byte(" --user-data-dir=")) {
		t.Fatalf("Chromium kept %d separate arguments with a session bus: it no longer rewrites its title; the lock proof is still right, but update this test", len(args))
	}
	if err := ProveProfile(udd, p.PID()); err != nil {
		t.Errorf("ProveProfile(its profile) = %v, want nil", err)
	}
	if got, err := UserDataDirOf(p.PID()); err != nil || !sameDir(got, udd) {
		t.Errorf("UserDataDirOf = %v, want its profile", err)
	}
	other := t.TempDir()
	if err := ProveProfile(other, p.PID()); !errors.Is(err, ErrProfileUnproven) {
		t.Errorf("ProveProfile(another directory) = %v, want %v", err, ErrProfileUnproven)
	}
	// A lock copied into another directory is contradicted by the title.
	target, err := os.Readlink(filepath.Join(udd, singletonLock))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(other, singletonLock)); err != nil {
		t.Fatal(err)
	}
	if err := ProveProfile(other, p.PID()); !errors.Is(err, ErrProfileContradicted) {
		t.Errorf("ProveProfile(a directory with a copied lock) = %v, want %v", err, ErrProfileContradicted)
	}
}

// TestProfileHintsFake reads --user-data-dir from a helper whose argv is
// intact, and from one whose whole command line is one rewritten title:
// every reading is a hint, and only a lock proves one.
func TestProfileHintsFake(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "my profile")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"intact", []string{"/usr/lib/chromium/chromium", "--no-first-run", "--user-data-dir=" + dir, "about:blank"}},
		{"rewritten", []string{"/usr/lib/chromium/chromium --no-first-run --user-data-dir=" + dir + " --flag about:blank"}},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Args = append(tt.args, "-test.run=^$") // argv[0] and the flags are what /proc shows
		startHelperCmd(t, cmd, "hang")
		pid := cmd.Process.Pid
		hints, stated, err := profileHints(pid)
		if err != nil || !stated {
			t.Errorf("%s: profileHints = %v, %v, %v", tt.name, hints, stated, err)
		}
		found := false
		for _, h := range hints {
			found = found || h == dir
		}
		if !found {
			t.Errorf("%s: the profile is not among the hints %q", tt.name, hints)
		}
		if _, err := UserDataDirOf(pid); !errors.Is(err, ErrProfileUnproven) {
			t.Errorf("%s: UserDataDirOf without a lock = %v, want %v", tt.name, err, ErrProfileUnproven)
		}
		lock := filepath.Join(dir, singletonLock)
		if err := os.Symlink(host+"-"+strconv.Itoa(pid), lock); err != nil {
			t.Fatal(err)
		}
		if got, err := UserDataDirOf(pid); err != nil || got != dir {
			t.Errorf("%s: UserDataDirOf = %q, %v; want the locked profile", tt.name, got, err)
		}
		if err := ProveProfile(dir, pid); err != nil {
			t.Errorf("%s: ProveProfile = %v", tt.name, err)
		}
		os.Remove(lock)
		cmd.Process.Kill()
		cmd.Wait()
	}
}

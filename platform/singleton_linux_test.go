package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// lockDir returns a profile whose SingletonLock points at target, with the
// socket and cookie links Chromium writes beside it.
func lockDir(t *testing.T, target string) string {
	t.Helper()
	dir := t.TempDir()
	for name, to := range map[string]string{singletonLock: target, singletonSocket: "/tmp/org.chromium.Chromium.x/SingletonSocket", singletonCookie: "12345"} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// deadPID returns the PID of a helper that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := startHelper(t, "exit", "WEBCODEX_PLATFORM_TEST_CODE=0")
	cmd.Wait()
	pid := cmd.Process.Pid
	if _, err := FingerprintOf(pid); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("PID %d was reused at once: %v", pid, err)
	}
	return pid
}

func TestInspectSingletonLock(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		target string
		want   LockState
	}{
		{"other host", "elsewhere.invalid-" + strconv.Itoa(os.Getpid()), LockForeign},
		{"this host, dead pid", host + "-" + strconv.Itoa(deadPID(t)), LockStale},
		{"this host, live pid that is not a browser", host + "-" + strconv.Itoa(os.Getpid()), LockStale},
	}
	for _, tt := range tests {
		got, err := InspectSingletonLock(lockDir(t, tt.target))
		if err != nil || got != tt.want {
			t.Errorf("%s: InspectSingletonLock = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if got, err := InspectSingletonLock(t.TempDir()); err != nil || got != LockNone {
		t.Errorf("no lock: %q, %v; want %q", got, err, LockNone)
	}
	if _, err := InspectSingletonLock(lockDir(t, "garbage")); !errors.Is(err, ErrBadLock) {
		t.Errorf("malformed target: %v, want ErrBadLock", err)
	}
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, singletonLock), []byte(host+"-1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InspectSingletonLock(plain); !errors.Is(err, ErrBadLock) {
		t.Errorf("regular file: %v, want ErrBadLock", err)
	}
}

func TestRemoveStaleLock(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	stale := lockDir(t, host+"-"+strconv.Itoa(deadPID(t)))
	if err := RemoveStaleLock(stale); err != nil {
		t.Fatalf("RemoveStaleLock(stale) = %v", err)
	}
	for _, name := range []string{singletonLock, singletonSocket, singletonCookie} {
		if _, err := os.Lstat(filepath.Join(stale, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived a stale-lock removal", name)
		}
	}
	foreign := lockDir(t, "elsewhere.invalid-1")
	if err := RemoveStaleLock(foreign); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Errorf("RemoveStaleLock(foreign) = %v, want %s", err, fsm.LeaseHeld)
	}
	if _, err := os.Lstat(filepath.Join(foreign, singletonLock)); err != nil {
		t.Errorf("a foreign lock was removed: %v", err)
	}
	if err := RemoveStaleLock(t.TempDir()); err != nil {
		t.Errorf("RemoveStaleLock(no lock) = %v", err)
	}
}

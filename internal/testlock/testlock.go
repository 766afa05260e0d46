// Package testlock serializes tests of different packages (separate test
// binaries, run in parallel by go test) that need one machine-wide
// resource.
package testlock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// UserEnabledPortWait bounds the wait for another test binary to release
// port 9222.
const UserEnabledPortWait = 5 * time.Minute

// UserEnabledPort holds the machine-wide lock on 127.0.0.1:9222, the port
// Chromium's chrome://inspect remote debugging always listens on, until the
// test ends. Every test that starts such a browser takes it first: two
// browsers on that port at once would each see the other's endpoint. It
// fails the test when the lock is not free within UserEnabledPortWait.
func UserEnabledPort(tb testing.TB) {
	tb.Helper()
	path := filepath.Join(os.TempDir(), "webcodex-test-port-9222.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		tb.Fatalf("port 9222 lock: %v", err)
	}
	deadline := time.Now().Add(UserEnabledPortWait)
	for {
		err := tryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errLocked) || time.Now().After(deadline) {
			f.Close()
			tb.Fatalf("port 9222 lock not free within %s: %v", UserEnabledPortWait, err)
		}
		time.Sleep(100 * time.Millisecond) // the lock has no timed wait
	}
	// Closing the file releases the lock, also when the binary dies.
	tb.Cleanup(func() { f.Close() })
}

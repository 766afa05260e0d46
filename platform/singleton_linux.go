package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/webcodex/webcodex/fsm"
)

// InspectSingletonLock classifies userDataDir's SingletonLock: [LockNone]
// when absent; [LockForeign] when it names another host; on this host
// [LockLive] when its PID is a running browser and [LockStale] when the PID
// is dead or is some other program. A lock that is not a "HOSTNAME-PID"
// symlink returns an error wrapping [ErrBadLock].
func InspectSingletonLock(userDataDir string) (LockState, error) {
	target, err := os.Readlink(filepath.Join(userDataDir, singletonLock))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return LockNone, nil
	case errors.Is(err, syscall.EINVAL):
		return "", fmt.Errorf("%w: not a symlink", ErrBadLock)
	case err != nil:
		return "", fmt.Errorf("platform: read SingletonLock: %w", err)
	}
	host, pid, ok := parseLockTarget(target)
	if !ok {
		return "", fmt.Errorf("%w: bad target", ErrBadLock)
	}
	me, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("platform: hostname: %w", err)
	}
	if host != me {
		return LockForeign, nil
	}
	if isBrowserProcess(pid) {
		return LockLive, nil
	}
	return LockStale, nil
}

// isBrowserProcess reports whether pid is a live browser. When another
// user's executable link is unreadable it falls back to the command name,
// which the kernel derives from the executable too.
func isBrowserProcess(pid int) bool {
	fp, err := FingerprintOf(pid)
	if err == nil {
		return Product(fp.Exe) != ""
	}
	if errors.Is(err, ErrNoProcess) {
		return false
	}
	st, err := readStat(pid)
	return err == nil && !st.dead() && Product(st.comm) != ""
}

// RemoveStaleLock removes userDataDir's SingletonLock, SingletonSocket and
// SingletonCookie when, and only when, the lock is [LockStale]. No lock is
// not an error. A live or foreign lock is a [fsm.LeaseHeld] refusal.
func RemoveStaleLock(userDataDir string) error {
	state, err := InspectSingletonLock(userDataDir)
	if err != nil {
		return err
	}
	switch state {
	case LockNone:
		return nil
	case LockLive:
		return fsm.Refuse(fsm.LeaseHeld, "the profile is in use by a running browser")
	case LockForeign:
		return fsm.Refuse(fsm.LeaseHeld, "the profile is locked by a browser on another host")
	}
	var errs []error
	for _, name := range []string{singletonLock, singletonSocket, singletonCookie} {
		if err := os.Remove(filepath.Join(userDataDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("platform: remove stale lock: %w", err))
		}
	}
	return errors.Join(errs...)
}

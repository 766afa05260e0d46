package testlock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// errLocked reports a lock another test binary holds.
var errLocked = errors.New("testlock: held by another test binary")

// tryLock is platform.TryLock, restated because platform's own tests take
// this package's locks.
func tryLock(f *os.File) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return fmt.Errorf("%w: %w", errLocked, err)
	}
	return err
}

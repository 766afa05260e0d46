//go:build !windows

package testlock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errLocked reports a lock another test binary holds.
var errLocked = errors.New("testlock: held by another test binary")

// tryLock is platform.TryLock, restated because platform's own tests take
// this package's locks.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%w: %w", errLocked, err)
	}
	return err
}

//go:build unix

package lease

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryFlock takes an exclusive, non-blocking flock on f and reports whether
// it was free.
func tryFlock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return false, fmt.Errorf("lease: flock: %w", err)
}

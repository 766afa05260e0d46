//go:build !windows

package platform

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// OpenNoFollow opens path for reading without following a link in its
// last element (O_NOFOLLOW; a link is [ErrLink]) and without blocking on a
// FIFO.
func OpenNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%w: %w", ErrLink, err)
	}
	return f, err
}

// OwnedByMe reports whether the open file f belongs to this process's
// user.
func OwnedByMe(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// TryLock takes an exclusive lock on f (flock) without waiting: a lock
// held through another open file is [ErrLocked]. Closing f releases it,
// as does the holder's death.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%w: %w", ErrLocked, err)
	}
	return err
}

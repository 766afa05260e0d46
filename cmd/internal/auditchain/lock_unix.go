//go:build !windows

package auditchain

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f (flock), waiting for another holder
// to let go. Closing f releases it, as does the holder's death.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("auditchain: lock: %w", err)
		}
		return nil
	}
}

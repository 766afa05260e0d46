package auditchain

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on f's first byte (LockFileEx), waiting for
// another holder to let go. Closing f releases it, as does the holder's
// death.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		return fmt.Errorf("auditchain: lock: %w", err)
	}
	return nil
}

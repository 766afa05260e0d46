//go:build linux || darwin

package chromiumtest

import (
	"fmt"
	"syscall"
)

// leadsOwnTree checks that b leads a process group of its own.
func leadsOwnTree(b *Browser) error {
	if pgid, err := syscall.Getpgid(b.PID); err != nil || pgid != b.PID {
		return fmt.Errorf("browser process group = %d, %v; want its own group %d", pgid, err, b.PID)
	}
	return nil
}

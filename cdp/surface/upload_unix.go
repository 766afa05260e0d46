//go:build unix

package surface

import (
	"os"
	"syscall"
)

// linksAndDevice returns a file's hard link count and device.
func linksAndDevice(fi os.FileInfo) (nlink, dev uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Nlink), uint64(st.Dev), true // field types differ between systems
}

// openNoFollow opens path for reading without following a final symbolic
// link and without blocking on a FIFO or a device.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

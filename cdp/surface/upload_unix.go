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

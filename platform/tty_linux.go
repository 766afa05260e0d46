package platform

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HasTerminal reports whether process pid has both its standard input and
// standard output on a terminal (/dev/pts/N or /dev/ttyN), read from /proc,
// not from anything the process says. `webcodex approve` must run there.
func HasTerminal(pid int) bool {
	for _, fd := range []string{"0", "1"} {
		target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd))
		if err != nil || !(strings.HasPrefix(target, "/dev/pts/") || strings.HasPrefix(target, "/dev/tty")) {
			return false
		}
	}
	return true
}

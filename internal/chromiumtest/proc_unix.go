//go:build linux || darwin

package chromiumtest

import (
	"os"
	"strconv"
	"syscall"
)

// closeInheritedFDs marks every descriptor above stderr close-on-exec.
// os/exec passes on descriptors this process inherited without
// close-on-exec (go test under some harnesses inherits a pipe and
// /dev/null), and a browser holding a harness's pipe open keeps that harness
// waiting for EOF. Go's own descriptors are close-on-exec already.
func closeInheritedFDs() {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

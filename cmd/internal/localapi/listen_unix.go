//go:build !windows

package localapi

import (
	"net"
	"syscall"
)

// listenUnixPrivate binds the socket with no access for others from the
// start (umask 0177), before the chmod that follows.
func listenUnixPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}

package localapi

import "net"

// listenUnixPrivate binds the socket. Windows has no umask: the socket
// file takes the state directory's owner-only access rules (issue 25
// item 4: the peer check at accept is not done on Windows yet).
func listenUnixPrivate(path string) (net.Listener, error) { return net.Listen("unix", path) }

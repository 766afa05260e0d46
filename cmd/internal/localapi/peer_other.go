//go:build !linux

package localapi

import (
	"errors"
	"net"
)

// peerCred is unsupported here: without peer credentials every connection
// is refused.
func peerCred(net.Conn) (Peer, error) {
	return Peer{}, errors.New("localapi: peer credentials are not supported on this platform")
}

//go:build !linux

package platform

import (
	"context"
	"net"
	"net/netip"
	"os"
)

// Launch is not implemented on this operating system yet.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	return nil, unsupported("launching a browser")
}

// Close does nothing here: no [Process] can be launched on this system.
func (p *Process) Close(ctx context.Context, browserClose func(context.Context) error) error {
	return nil
}

// Listeners is not implemented on this operating system yet.
func (p *Process) Listeners() ([]netip.AddrPort, error) {
	return nil, unsupported("listener inspection")
}

// ListenerOwner is not implemented on this operating system yet.
func ListenerOwner(addr netip.AddrPort) (pid int, err error) {
	return 0, unsupported("endpoint ownership")
}

// CheckPrivateDir is not implemented on this operating system yet.
func CheckPrivateDir(path string) error { return unsupported("profile directory checks") }

// EnsurePrivateDir is not implemented on this operating system yet.
func EnsurePrivateDir(path string) error { return unsupported("profile directory checks") }

// InspectSingletonLock is not implemented on this operating system yet.
func InspectSingletonLock(userDataDir string) (LockState, error) {
	return "", unsupported("profile lock inspection")
}

// RemoveStaleLock is not implemented on this operating system yet.
func RemoveStaleLock(userDataDir string) error { return unsupported("profile lock inspection") }

// UserDataDirOf is unsupported on this platform.
func UserDataDirOf(pid int) (string, error) { return "", unsupported("profile identification") }

// ProveProfile is unsupported on this platform.
func ProveProfile(userDataDir string, pid int) error { return unsupported("profile identification") }

// PrivateNetworkProxyAddr is where a private network's listener would be.
const PrivateNetworkProxyAddr = "127.0.0.1:1080"

// PrivateNetworkState says whether browsers can run in a private network.
type PrivateNetworkState struct {
	Enabled bool
	Reason  string
}

// PrivateNetwork reports private networks as unavailable on this system.
func PrivateNetwork() PrivateNetworkState {
	return PrivateNetworkState{Reason: "network namespaces are Linux's"}
}

// PrivateNetworkListener is nil: no [Process] is launched on this system.
func (p *Process) PrivateNetworkListener() net.Listener { return nil }

// LoopbackPeerUID is not implemented on this operating system yet: every
// connection is refused.
func LoopbackPeerUID(local, remote netip.AddrPort) (uint32, error) {
	return 0, unsupported("the owner of a loopback connection")
}

// ShortTempDir makes a private temporary directory; the socket path limit
// is not checked on this operating system yet.
func ShortTempDir(pattern string, room int) (string, error) { return os.MkdirTemp("", pattern) }

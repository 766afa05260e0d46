package platform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// A browser launched with LaunchOptions.PrivateNetwork runs in a network
// namespace of its own, whose only interface is its own loopback: no
// datagram or connection it makes — TCP, UDP (WebRTC, QUIC, DNS), by any
// protocol and whatever its switches say — can reach another host or this
// host's own loopback. The one way out is a TCP listener at
// [PrivateNetworkProxyAddr] inside that namespace, which the launcher holds
// ([Process.PrivateNetworkListener]) and serves as the browser's proxy.
//
// A socket keeps the namespace it was created in, so the listener is made
// inside the namespace and handed out: the namespace's first process is this
// very program re-executed under privateNetworkArg0 (see the init below),
// which brings the loopback up, binds the listener, sends it to the launcher
// over a unix socket (fd privateNetworkFD), drops the one capability it was
// given and execs the browser in its place, keeping the PID. As root the
// namespace alone is made (CLONE_NEWNET); otherwise it comes with a user
// namespace mapping only this user's own uid and gid to themselves, so the
// browser runs as the same user, and Chromium's own sandbox nests inside.

// PrivateNetworkProxyAddr is the address, inside a private network, of the
// listener [Process.PrivateNetworkListener] returns. The namespace is the
// browser's alone, so a fixed port collides with nothing.
const PrivateNetworkProxyAddr = "127.0.0.1:1080"

const (
	// privateNetworkArg0 marks this program, re-executed, as the first
	// process of a private network.
	privateNetworkArg0 = "webcodex-private-network"
	// privateNetworkFD is the unix socket the listener goes back on: after
	// the DevTools pipes (3, 4).
	privateNetworkFD = 5
	// privateNetworkFailed is the exit status of a shim that could not set
	// the namespace up; its reason is on its stderr.
	privateNetworkFailed = 120
	capNetAdmin          = 12
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
)

func init() {
	if len(os.Args) < 2 || os.Args[0] != privateNetworkArg0 {
		return
	}
	// Capabilities are per thread, and exec keeps the calling thread's:
	// what is dropped must be dropped on the thread that execs.
	runtime.LockOSThread()
	err := privateNetworkShim(os.Args[1], os.Args[2:])
	fmt.Fprintln(os.Stderr, "webcodex: private network:", err)
	os.Exit(privateNetworkFailed)
}

// privateNetworkShim sets the namespace up and, in mode "exec", becomes
// args[0] with args; in mode "probe" it exits 0 once the listener is bound.
// It returns only on failure.
func privateNetworkShim(mode string, args []string) error {
	ln, err := privateNetworkListen()
	if err != nil {
		return err
	}
	if mode == "probe" {
		os.Exit(0)
	}
	if mode != "exec" || len(args) == 0 {
		return errors.New("bad invocation")
	}
	if err := syscall.Sendmsg(privateNetworkFD, []byte{1}, syscall.UnixRights(ln), nil, 0); err != nil {
		return fmt.Errorf("handing the listener over: %w", err)
	}
	syscall.Close(ln)
	syscall.Close(privateNetworkFD)
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("dropping capabilities: %w", e)
	}
	return syscall.Exec(args[0], args, os.Environ())
}

// ifreqFlags is struct ifreq with the ifr_flags member.
type ifreqFlags struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// privateNetworkListen brings the namespace's loopback up and returns a
// listening socket (close-on-exec) at PrivateNetworkProxyAddr.
func privateNetworkListen() (int, error) {
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(s)
	var req ifreqFlags
	copy(req.name[:], "lo")
	for _, op := range []uintptr{syscall.SIOCGIFFLAGS, syscall.SIOCSIFFLAGS} {
		if op == syscall.SIOCSIFFLAGS {
			req.flags |= syscall.IFF_UP
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), op, uintptr(unsafe.Pointer(&req))); e != 0 {
			return -1, fmt.Errorf("bringing the loopback up: %w", e)
		}
	}
	ln, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	ap, _ := net.ResolveTCPAddr("tcp", PrivateNetworkProxyAddr)
	sa := &syscall.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	if err := syscall.Bind(ln, sa); err != nil {
		syscall.Close(ln)
		return -1, fmt.Errorf("bind: %w", err)
	}
	if err := syscall.Listen(ln, 128); err != nil {
		syscall.Close(ln)
		return -1, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// privateNetworkAttr is how the shim is started: in a new network
// namespace, and, unless this is root, a new user namespace that maps this
// user to itself and grants the shim CAP_NET_ADMIN across its exec (to bring
// its loopback up; it drops it before the browser starts).
func privateNetworkAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM, Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		attr.AmbientCaps = []uintptr{capNetAdmin}
	}
	return attr
}

// privateNetworkCommand is the command that starts exe with args in a
// private network; its ExtraFiles must put the listener's way back at
// privateNetworkFD.
func privateNetworkCommand(exe string, args []string) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe", append([]string{"exec", exe}, args...)...)
	cmd.Args[0] = privateNetworkArg0
	cmd.SysProcAttr = privateNetworkAttr()
	return cmd
}

// receiveListener reads the listener the shim sends on conn, until ctx ends.
func receiveListener(ctx context.Context, conn *net.UnixConn) (net.Listener, error) {
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(past) })
	defer stop()
	buf := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("platform: private network: no listener from the browser's namespace: %w", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("platform: private network: a malformed hand-over")
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("platform: private network: a malformed hand-over")
	}
	f := os.NewFile(uintptr(fds[0]), "private-network-listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("platform: private network: %w", err)
	}
	return ln, nil
}

// socketPair returns the launcher's end (as a connection) and the shim's
// end (a file to inherit) of a unix stream socket pair.
func socketPair() (*net.UnixConn, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("platform: private network: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "private-network")
	defer ours.Close()
	c, err := net.FileConn(ours)
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("platform: private network: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "private-network-child"), nil
}

// PrivateNetworkState says whether browsers this process launches can run
// in a private network ([LaunchOptions.PrivateNetwork]).
type PrivateNetworkState struct {
	Enabled bool
	// Reason says why not, for a person; empty when enabled.
	Reason string
}

var privateNetwork struct {
	once  sync.Once
	state PrivateNetworkState
}

// privateNetworkProbeTimeout bounds the probe (one fork and exec of this
// program).
const privateNetworkProbeTimeout = 5 * time.Second

// PrivateNetwork reports whether this process can launch browsers in a
// private network: probed once, by starting the shim in its namespaces up
// to its bound listener. Safe for concurrent use.
func PrivateNetwork() PrivateNetworkState {
	privateNetwork.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), privateNetworkProbeTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/proc/self/exe", "probe")
		cmd.Args[0] = privateNetworkArg0
		cmd.SysProcAttr = privateNetworkAttr()
		cmd.SysProcAttr.Pdeathsig = 0
		out, err := cmd.CombinedOutput()
		privateNetwork.state = privateNetworkDecision(err, out)
	})
	return privateNetwork.state
}

// privateNetworkDecision turns the probe's outcome into a state.
func privateNetworkDecision(err error, out []byte) PrivateNetworkState {
	if err == nil {
		return PrivateNetworkState{Enabled: true}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return PrivateNetworkState{Reason: "this system does not let this user create a network namespace (" + errno.Error() + ")"}
	}
	if len(out) > 0 {
		return PrivateNetworkState{Reason: "a network namespace could not be set up: " + string(trimLine(out))}
	}
	return PrivateNetworkState{Reason: "a network namespace could not be set up: " + err.Error()}
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return b
}

// PrivateNetworkListener returns the listener at PrivateNetworkProxyAddr
// inside the browser's private network, the browser's one way out, or nil
// when it was launched without LaunchOptions.PrivateNetwork. The caller
// serves it; [Process.Close] closes it after the browser is gone.
func (p *Process) PrivateNetworkListener() net.Listener { return p.netLn }

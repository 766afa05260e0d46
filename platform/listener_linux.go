package platform

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// tcpListen is the LISTEN state in /proc/net/tcp{,6}.
const tcpListen = "0A"

// listenEntry is one LISTEN row of /proc/net/tcp or /proc/net/tcp6.
type listenEntry struct {
	addr  netip.AddrPort
	inode string
}

// ListenerOwner returns the PID of the process holding the TCP socket that
// listens on addr, a loopback address and port. It finds the LISTEN row in
// /proc/net/tcp and /proc/net/tcp6 (an exact address match first, else a
// wildcard listener that also accepts addr), then scans /proc/*/fd for
// "socket:[inode]". It returns errors wrapping [ErrNoListener],
// [ErrListenerHidden] or [ErrListenerShared], and a [fsm.InvalidArgument]
// refusal for an address that is not loopback.
func ListenerOwner(addr netip.AddrPort) (pid int, err error) {
	ip := addr.Addr().Unmap()
	if !ip.IsLoopback() || addr.Port() == 0 {
		return 0, fsm.Refuse(fsm.InvalidArgument, "the endpoint must be a loopback address and port")
	}
	var entries []listenEntry
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		es, err := readListeners(file)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // tcp6 is absent without IPv6
			return 0, err
		}
		entries = append(entries, es...)
	}
	inodes := matchListeners(entries, netip.AddrPortFrom(ip, addr.Port()))
	if len(inodes) == 0 {
		return 0, ErrNoListener
	}
	owners := socketOwners(inodes)
	switch len(owners) {
	case 0:
		return 0, ErrListenerHidden
	case 1:
		return owners[0], nil
	default:
		return 0, ErrListenerShared
	}
}

// matchListeners returns the inodes of the listeners that would accept a
// connection to addr (unmapped), most specific first: the exact address,
// else the wildcard of its family, else the IPv6 wildcard (dual stack).
func matchListeners(entries []listenEntry, addr netip.AddrPort) map[string]bool {
	var tiers [3]map[string]bool
	for _, e := range entries {
		if e.addr.Port() != addr.Port() {
			continue
		}
		l := e.addr.Addr().Unmap()
		tier := -1
		switch {
		case l == addr.Addr():
			tier = 0
		case l.IsUnspecified() && l.Is4() == addr.Addr().Is4():
			tier = 1
		case l.IsUnspecified() && l.Is6() && addr.Addr().Is4():
			tier = 2
		}
		if tier < 0 {
			continue
		}
		if tiers[tier] == nil {
			tiers[tier] = map[string]bool{}
		}
		tiers[tier][e.inode] = true
	}
	for _, t := range tiers {
		if len(t) > 0 {
			return t
		}
	}
	return nil
}

// readListeners returns the LISTEN rows of one /proc/net table.
func readListeners(file string) ([]listenEntry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("platform: read sockets: %w", err)
	}
	defer f.Close()
	var out []listenEntry
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		if e, ok := parseListenLine(sc.Text()); ok {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("platform: read sockets: %w", err)
	}
	return out, nil
}

// parseListenLine parses one row ("sl local rem st … uid timeout inode")
// and reports whether it is a LISTEN socket with an inode.
func parseListenLine(line string) (listenEntry, bool) {
	f := strings.Fields(line)
	if len(f) < 10 || f[3] != tcpListen || f[9] == "0" {
		return listenEntry{}, false
	}
	ap, ok := parseProcAddr(f[1])
	if !ok {
		return listenEntry{}, false
	}
	return listenEntry{addr: ap, inode: f[9]}, true
}

// parseProcAddr decodes "HEXADDR:HEXPORT". The kernel prints the address as
// 32-bit words in host byte order and the port in plain hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	ip, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(ip, uint16(port)), true
}

// socketOwners returns the PIDs whose open files include one of inodes.
// Processes this user may not inspect are skipped.
func socketOwners(inodes map[string]bool) []int {
	want := make(map[string]bool, len(inodes))
	for in := range inodes {
		want["socket:["+in+"]"] = true
	}
	var owners []int
	for _, pid := range procPIDs() {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(dir + fd.Name()); err == nil && want[target] {
				owners = append(owners, pid)
				break
			}
		}
	}
	return owners
}

// ErrNoSocketOwner is returned by LoopbackPeerUID when no socket of this
// network namespace is the other end of the connection (it closed, or it
// is not local).
var ErrNoSocketOwner = errors.New("platform: the connection's other end is not a local socket")

// LoopbackPeerUID returns the uid that owns the client end of an accepted
// TCP connection whose server end is local and whose client end is remote:
// the row of /proc/net/tcp or /proc/net/tcp6 whose local address is remote
// and whose remote address is local. Loopback TCP has no SO_PEERCRED; this
// is the kernel's own record of who opened the socket.
func LoopbackPeerUID(local, remote netip.AddrPort) (uint32, error) {
	local, remote = netip.AddrPortFrom(local.Addr().Unmap(), local.Port()), netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(file)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // no IPv6
			}
			return 0, fmt.Errorf("platform: read sockets: %w", err)
		}
		lines := strings.Split(string(data), "\n")
		for _, line := range lines[min(1, len(lines)):] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			l, ok1 := parseProcAddr(f[1])
			r, ok2 := parseProcAddr(f[2])
			if !ok1 || !ok2 {
				continue
			}
			l, r = netip.AddrPortFrom(l.Addr().Unmap(), l.Port()), netip.AddrPortFrom(r.Addr().Unmap(), r.Port())
			if l != remote || r != local {
				continue
			}
			uid, err := strconv.ParseUint(f[7], 10, 32)
			if err != nil {
				return 0, fmt.Errorf("platform: read sockets: uid %q: %w", f[7], err)
			}
			return uint32(uid), nil
		}
	}
	return 0, ErrNoSocketOwner
}

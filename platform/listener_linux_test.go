package platform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// procHex encodes an address the way /proc/net/tcp{,6} prints it.
func procHex(ap netip.AddrPort) string {
	b := ap.Addr().AsSlice()
	s := ""
	for i := 0; i < len(b); i += 4 {
		s += fmt.Sprintf("%08X", binary.NativeEndian.Uint32(b[i:]))
	}
	return fmt.Sprintf("%s:%04X", s, ap.Port())
}

func TestParseListenLine(t *testing.T) {
	t.Parallel()
	v4 := netip.MustParseAddrPort("127.0.0.1:8080")
	v6 := netip.MustParseAddrPort("[::1]:9222")
	rows := []struct {
		line string
		want netip.AddrPort
		ok   bool
	}{
		{"   0: " + procHex(v4) + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0", v4, true},
		{"   1: " + procHex(v6) + " 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0", v6, true},
		{"   2: " + procHex(v4) + " 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 31338 1 0", netip.AddrPort{}, false}, // ESTABLISHED
		{"   3: " + procHex(v4) + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0", netip.AddrPort{}, false},     // no inode
		{"   4: zz:0000 00000000:0000 0A 0 0 0 0 0 5 1", netip.AddrPort{}, false},
		{"short line", netip.AddrPort{}, false},
	}
	for i, r := range rows {
		e, ok := parseListenLine(r.line)
		if ok != r.ok || (ok && e.addr != r.want) {
			t.Errorf("row %d: parseListenLine = %v, %v; want %v, %v", i, e.addr, ok, r.want, r.ok)
		}
	}
}

func TestMatchListeners(t *testing.T) {
	t.Parallel()
	e := func(s, inode string) listenEntry { return listenEntry{netip.MustParseAddrPort(s), inode} }
	tests := []struct {
		name    string
		entries []listenEntry
		addr    string
		want    string // the one inode expected, "" for none
	}{
		{"exact wins over wildcard", []listenEntry{e("0.0.0.0:80", "w"), e("127.0.0.1:80", "x")}, "127.0.0.1:80", "x"},
		{"v4 wildcard", []listenEntry{e("0.0.0.0:80", "w"), e("[::]:80", "w6")}, "127.0.0.1:80", "w"},
		{"dual-stack wildcard", []listenEntry{e("[::]:80", "w6")}, "127.0.0.1:80", "w6"},
		{"v4-mapped exact", []listenEntry{e("[::ffff:127.0.0.1]:80", "m")}, "127.0.0.1:80", "m"},
		{"v6 exact", []listenEntry{e("[::1]:80", "x6"), e("0.0.0.0:80", "w")}, "[::1]:80", "x6"},
		{"v4 wildcard does not take v6", []listenEntry{e("0.0.0.0:80", "w")}, "[::1]:80", ""},
		{"other loopback address", []listenEntry{e("127.0.0.2:80", "y")}, "127.0.0.1:80", ""},
		{"other port", []listenEntry{e("127.0.0.1:81", "x")}, "127.0.0.1:80", ""},
	}
	for _, tt := range tests {
		got := matchListeners(tt.entries, netip.MustParseAddrPort(tt.addr))
		if (tt.want == "" && len(got) != 0) || (tt.want != "" && (len(got) != 1 || !got[tt.want])) {
			t.Errorf("%s: matchListeners = %v, want %q", tt.name, got, tt.want)
		}
	}
}

func TestListenerOwnerSelf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ network, listen, ask string }{
		{"tcp4", "127.0.0.1:0", "127.0.0.1"},
		{"tcp4", "0.0.0.0:0", "127.0.0.1"},
		{"tcp6", "[::1]:0", "::1"},
	} {
		ln, err := net.Listen(c.network, c.listen)
		if err != nil {
			if c.network == "tcp6" {
				continue // no IPv6 loopback here
			}
			t.Fatal(err)
		}
		port := uint16(ln.Addr().(*net.TCPAddr).Port)
		pid, err := ListenerOwner(netip.AddrPortFrom(netip.MustParseAddr(c.ask), port))
		if err != nil || pid != os.Getpid() {
			t.Errorf("ListenerOwner(%s listener) = %d, %v; want %d", c.listen, pid, err, os.Getpid())
		}
		ln.Close()
		if _, err := ListenerOwner(netip.AddrPortFrom(netip.MustParseAddr(c.ask), port)); !errors.Is(err, ErrNoListener) {
			t.Errorf("after close: ListenerOwner = %v, want ErrNoListener", err)
		}
	}
}

func TestListenerOwnerRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"192.0.2.1:80", "[2001:db8::1]:80", "0.0.0.0:80", "127.0.0.1:0"} {
		if _, err := ListenerOwner(netip.MustParseAddrPort(s)); !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Errorf("ListenerOwner(%s) = %v, want %s", s, err, fsm.InvalidArgument)
		}
	}
}

package netguard

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// socksDial speaks SOCKS5 to the proxy for dest (an IPv4 address:port, or
// a host name with ATYP domain) and returns the reply code and the
// connection.
func socksDial(t *testing.T, proxy, dest string) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte{5, 1, 0})
	var greet [2]byte
	if _, err := io.ReadFull(c, greet[:]); err != nil || greet != [2]byte{5, 0} {
		t.Fatalf("greeting = %v, %v", greet, err)
	}
	host, portStr, _ := net.SplitHostPort(dest)
	port, _ := net.LookupPort("tcp", portStr)
	req := []byte{5, 1, 0}
	if ip, err := netip.ParseAddr(host); err == nil {
		req = append(append(req, 1), ip.AsSlice()...)
	} else {
		req = append(append(req, 3, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	var reply [10]byte
	if _, err := io.ReadFull(c, reply[:]); err != nil {
		return 0xff, c
	}
	return reply[1], c
}

// TestEgressProxyJudgesEveryDestination: the proxy carries a connection to
// an allowed host and port, refuses a denied port on the same host and a
// denied host by name (SOCKS reply 2, nothing dialed), and refuses a
// greeting without the no-auth method.
func TestEgressProxyJudgesEveryDestination(t *testing.T) {
	t.Parallel()
	hits := 0
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer allowed.Close()
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer denied.Close()
	gate, _ := origin.New(origin.Owned, []string{allowed.URL})
	p, err := StartProxy(gate)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	proxy := p.ln.Addr().String()

	code, c := socksDial(t, proxy, allowed.Listener.Addr().String())
	if code != socksOK {
		t.Fatalf("allowed destination: reply %d", code)
	}
	c.Write([]byte("GET / HTTP/1.0\r\nHost: x\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("through the proxy: %v, %v", resp, err)
	}
	c.Close()
	_, deniedPort, _ := net.SplitHostPort(denied.Listener.Addr().String())
	for _, dest := range []string{denied.Listener.Addr().String(), "localhost:" + deniedPort} {
		code, c := socksDial(t, proxy, dest)
		c.Close()
		if code != socksNotAllowed {
			t.Errorf("%s: reply %d, want %d (not allowed)", dest, code, socksNotAllowed)
		}
	}
	if hits != 0 {
		t.Fatalf("the denied server was dialed %d times", hits)
	}
	c, err = net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte{5, 1, 2}) // username/password only
	var greet [2]byte
	if _, err := io.ReadFull(c, greet[:]); err != nil || greet != [2]byte{5, socksNoAcceptable} {
		t.Fatalf("a greeting without no-auth = %v, %v", greet, err)
	}
}

// TestEgressProxyBound: connections beyond the bound are refused at once,
// and a slot frees when a connection ends.
func TestEgressProxyBound(t *testing.T) {
	t.Parallel()
	gate, _ := origin.New(origin.Owned, []string{"127.0.0.1:1"})
	p, err := startProxyBounded(gate, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	proxy := p.ln.Addr().String()
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The proxy has both in hand once each answers a greeting.
	for _, c := range held {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte{5, 1, 0})
		var greet [2]byte
		if _, err := io.ReadFull(c, greet[:]); err != nil {
			t.Fatalf("a connection within the bound was not served: %v", err)
		}
	}
	extra, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	extra.SetDeadline(time.Now().Add(10 * time.Second))
	extra.Write([]byte{5, 1, 0})
	if n, _ := extra.Read(make([]byte, 2)); n != 0 {
		t.Fatal("a connection beyond the bound was served")
	}
	extra.Close()
	held[0].Close()
	waitfor.Until(t, 10*time.Second, "the freed slot is reused", func() bool {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		c.Write([]byte{5, 1, 0})
		n, _ := c.Read(make([]byte, 2))
		c.Close()
		return n == 2
	})
	held[1].Close()
}

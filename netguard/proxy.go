package netguard

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
)

// Bounds of the egress proxy.
const (
	// maxProxyConns bounds the connections one browser's proxy carries at
	// once; a connection beyond it is refused at once.
	maxProxyConns = 256
	// proxyHandshakeTimeout bounds the SOCKS greeting and request, and the
	// dial to the destination.
	proxyHandshakeTimeout = 10 * time.Second
)

// SOCKS5 (RFC 1928) constants used here.
const (
	socksVersion       = 5
	socksNoAuth        = 0
	socksNoAcceptable  = 0xff
	socksConnect       = 1
	socksIPv4          = 1
	socksDomain        = 3
	socksIPv6          = 4
	socksOK            = 0
	socksFailure       = 1
	socksNotAllowed    = 2
	socksUnreachable   = 4
	socksCmdNotSupport = 7
)

// Proxy is the one way out of an owned browser with an allowlist: the
// browser is launched with it as its SOCKS5 proxy for every destination,
// loopback included, so every connection it opens — a WebSocket, which
// request interception never sees, as much as a page load — is judged by
// the origin gate on its host and port before it is dialed. It carries
// connections only to allowed destinations, so using it gives another
// local process nothing it could not reach directly.
//
// Where the system allows it, the browser runs in a network namespace of its
// own (platform.LaunchOptions.PrivateNetwork) and the proxy serves the one
// listener inside it: nothing else leaves, whatever the protocol (WebRTC's
// UDP, QUIC, DNS) and whatever Chromium does with its switches. Elsewhere
// the proxy listens on a loopback port and the browser is held to it by
// switches only (ProxyLaunchArgs).
//
// Its goroutines belong to it: Close stops the listener and every carried
// connection and waits for them.
type Proxy struct {
	ln   net.Listener
	gate *origin.Gate
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// StartProxy listens on a loopback port for one browser.
func StartProxy(gate *origin.Gate) (*Proxy, error) {
	return startProxyBounded(gate, maxProxyConns)
}

// startProxyBounded is StartProxy with another connection bound
// (tests hit it).
func startProxyBounded(gate *origin.Gate, max int) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netguard: egress proxy: %w", err)
	}
	return serveProxy(gate, ln, max), nil
}

// ServeProxy serves the proxy on ln, which it owns from then on: the
// listener a launch in a private network hands back.
func ServeProxy(gate *origin.Gate, ln net.Listener) *Proxy {
	return serveProxy(gate, ln, maxProxyConns)
}

func serveProxy(gate *origin.Gate, ln net.Listener, max int) *Proxy {
	ctx, cancel := context.WithCancel(context.Background())
	var d net.Dialer
	p := &Proxy{ln: ln, gate: gate, dial: d.DialContext, ctx: ctx, cancel: cancel,
		slots: make(chan struct{}, max), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

// ProxyLaunchArgs are the browser flags that route every connection
// through the proxy at addr: loopback too (Chromium bypasses proxies for
// loopback unless told not to), and WebRTC's UDP only through the proxy,
// which carries none. In a private network they decide only which of the
// browser's connections work; outside one they are all that holds it (and
// WebRTC's UDP has been seen to leave despite them: Chromium 156).
func ProxyLaunchArgs(addr string) []string {
	return []string{
		"--proxy-server=socks5://" + addr,
		"--proxy-bypass-list=<-loopback>",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	}
}

// Addr is the loopback address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.cancel()
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		select {
		case p.slots <- struct{}{}:
		default:
			c.Close() // at the bound: refused, never queued
			continue
		}
		if !p.track(c) {
			<-p.slots
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.slots }()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// track records a live connection; false once the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// handle runs one SOCKS5 CONNECT: greeting, request, the gate's verdict on
// the destination, the dial, then the relay.
func (p *Proxy) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(proxyHandshakeTimeout))
	host, port, err := socksRequest(c)
	if err != nil {
		return // malformed or unsupported: already answered where the protocol allows
	}
	if !p.allowed(host, port) {
		socksReply(c, socksNotAllowed)
		return
	}
	dctx, cancel := context.WithTimeout(p.ctx, proxyHandshakeTimeout)
	up, err := p.dial(dctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
	cancel()
	if err != nil {
		socksReply(c, socksUnreachable)
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	if socksReply(c, socksOK) != nil {
		return
	}
	c.SetDeadline(time.Time{})
	done := make(chan struct{}, 2)
	relay := func(dst, src net.Conn) {
		io.Copy(dst, src)
		// Half-close where possible so the other direction can finish.
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go relay(up, c)
	go relay(c, up)
	<-done
	<-done
}

// allowed reports whether the gate authorizes host:port under any scheme a
// browser connection can carry (http, https, ws, wss): the proxy sees only
// the destination, so it lets through what some allowed origin needs.
func (p *Proxy) allowed(host string, port uint16) bool {
	hp := net.JoinHostPort(host, strconv.Itoa(int(port)))
	for _, scheme := range []string{"http", "https", "ws", "wss"} {
		if p.gate.Allowed(scheme + "://" + hp + "/") {
			return true
		}
	}
	return false
}

var errSocks = errors.New("netguard: egress proxy: malformed SOCKS5 exchange")

// socksRequest reads the greeting and one CONNECT request and returns the
// destination.
func socksRequest(c net.Conn) (string, uint16, error) {
	var head [2]byte
	if _, err := io.ReadFull(c, head[:]); err != nil || head[0] != socksVersion {
		return "", 0, errSocks
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", 0, errSocks
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksNoAuth
	}
	if !noAuth {
		c.Write([]byte{socksVersion, socksNoAcceptable})
		return "", 0, errSocks
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return "", 0, errSocks
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != socksVersion {
		return "", 0, errSocks
	}
	if req[1] != socksConnect {
		socksReply(c, socksCmdNotSupport)
		return "", 0, errSocks
	}
	var host string
	switch req[3] {
	case socksIPv4, socksIPv6:
		n := 4
		if req[3] == socksIPv6 {
			n = 16
		}
		raw := make([]byte, n)
		if _, err := io.ReadFull(c, raw); err != nil {
			return "", 0, errSocks
		}
		ip, _ := netip.AddrFromSlice(raw)
		host = ip.String()
	case socksDomain:
		var l [1]byte
		if _, err := io.ReadFull(c, l[:]); err != nil || l[0] == 0 {
			return "", 0, errSocks
		}
		name := make([]byte, l[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", 0, errSocks
		}
		host = string(name)
	default:
		socksReply(c, socksFailure)
		return "", 0, errSocks
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", 0, errSocks
	}
	return host, binary.BigEndian.Uint16(port[:]), nil
}

// socksReply answers a request; the bound address is not disclosed.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

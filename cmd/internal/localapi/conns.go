package localapi

import (
	"context"
	"net"
	"os"
	"sync"
	"time"
)

// Connection bounds of the local API.
const (
	// MaxConns bounds the connections the Runner holds at once. A new
	// connection beyond it evicts the oldest one that is not running a
	// call (still sending its request, or idle), so connections that trickle
	// their bodies cannot lock callers out; only when every held connection
	// is running a call is the new one closed.
	MaxConns = 64
	// requestReadTimeout bounds reading one request, headers and body.
	requestReadTimeout = 15 * time.Second
	// idleTimeout bounds a kept-alive connection between requests.
	idleTimeout = 60 * time.Second
)

// heldConn is one accepted connection and whether a call is running on it.
type heldConn struct {
	net.Conn
	peer     Peer
	accepted time.Time
	set      *connSet

	mu      sync.Mutex
	running bool
	closed  bool
}

func (c *heldConn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	c.mu.Unlock()
	if first {
		c.set.remove(c)
	}
	return c.Conn.Close()
}

// setRunning marks the connection as running a call (not evictable).
func (c *heldConn) setRunning(v bool) {
	c.mu.Lock()
	c.running = v
	c.mu.Unlock()
}

func (c *heldConn) evictable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.running && !c.closed
}

// connSet is the set of held connections.
type connSet struct {
	max   int
	mu    sync.Mutex
	conns map[*heldConn]struct{}
}

func (s *connSet) remove(c *heldConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *connSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// admit adds c, evicting the oldest evictable connection when the set is
// full. It reports false (and c must be closed) when nothing could be
// evicted.
func (s *connSet) admit(c *heldConn) bool {
	for {
		s.mu.Lock()
		if len(s.conns) < s.max {
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			return true
		}
		var oldest *heldConn
		for h := range s.conns {
			if h.evictable() && (oldest == nil || h.accepted.Before(oldest.accepted)) {
				oldest = h
			}
		}
		s.mu.Unlock()
		if oldest == nil {
			return false
		}
		oldest.Close() // removes itself; loop to take its place
	}
}

// guardedListener accepts only connections from this user, bounded by
// connSet. A connection from another uid is closed before any byte of it is
// read.
type guardedListener struct {
	net.Listener
	set *connSet
}

func (l guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer, err := peerCred(c)
		if err != nil || peer.UID != os.Getuid() {
			c.Close()
			continue
		}
		h := &heldConn{Conn: c, peer: peer, accepted: time.Now(), set: l.set}
		if !l.set.admit(h) {
			c.Close()
			continue
		}
		return h, nil
	}
}

type connKey struct{}

// connFrom returns the held connection a request arrived on.
func connFrom(ctx context.Context) (*heldConn, bool) {
	h, ok := ctx.Value(connKey{}).(*heldConn)
	return h, ok
}

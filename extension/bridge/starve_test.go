package bridge

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/wire"
)

// TestSameUserHandshakesCannotStarveTheHost: a client of the person's own
// uid (so not closed at accept) keeps every peer slot filled with
// unfinished handshakes, re-dialing each one the Runner closes, while the
// person's host connects ten times: all ten get ready, each by taking the
// slot of the oldest unfinished handshake. Before the eviction the host was
// refused while the slots were full.
func TestSameUserHandshakesCannotStarveTheHost(t *testing.T) {
	s, _ := newServer(t, Options{})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.rec.Port))
	stop := make(chan struct{})
	var dialed, closed atomic.Int64
	var holding sync.WaitGroup
	holding.Add(wire.MaxPeers)
	var wg sync.WaitGroup
	for range wire.MaxPeers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				dialed.Add(1)
				c.Write([]byte{10, 0, 0, 0, '{'}) // half a frame: an unfinished handshake
				if first {
					holding.Done()
					first = false
				}
				c.SetReadDeadline(time.Now().Add(wait))
				_, err = c.Read(make([]byte, 1))
				var ne net.Error
				if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
					closed.Add(1)
				}
				c.Close()
			}
		}()
	}
	holding.Wait()
	deadline := time.Now().Add(wait)
	for s.Status().Peers < wire.MaxPeers && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the dialers' connections are being accepted
	}
	if st := s.Status(); st.Peers != wire.MaxPeers || st.Verified != 0 {
		t.Fatalf("the same-user client holds %+v, want every slot unverified", st)
	}
	for i := range 10 {
		f := connect(t, s) // fails the test unless ready comes
		if st := s.Status(); st.Verified != 1 || st.Peers > wire.MaxPeers {
			t.Fatalf("host %d connected: %+v", i, st)
		}
		f.conn.Close()
		for s.Status().Verified != 0 && time.Now().Before(deadline.Add(wait)) {
			time.Sleep(5 * time.Millisecond) // its reader is closing it
		}
	}
	close(stop)
	wg.Wait()
	if closed.Load() < 10 {
		t.Fatalf("the client's unfinished handshakes were closed %d times for ten hosts (dialed %d)", closed.Load(), dialed.Load())
	}
}

// TestVerifiedPeersAreNeverEvicted: with every slot held by a verified
// peer, a newcomer is refused at once and the verified peers stay.
func TestVerifiedPeersAreNeverEvicted(t *testing.T) {
	s, _ := newServer(t, Options{})
	var peers []*fakeExtension
	for range wire.MaxPeers {
		peers = append(peers, connect(t, s))
	}
	extra := dial(t, s)
	extra.sendMsg(&wire.Message{T: wire.KindAuth, V: 1, Token: s.rec.Token, Instance: s.rec.Instance, Origin: testOrigin})
	if !extra.closedByRunner() {
		t.Fatal("a connection beyond four verified peers was kept")
	}
	if st := s.Status(); st.Verified != wire.MaxPeers {
		t.Fatalf("after the refused newcomer: %+v", st)
	}
	peers[0].share(7) // still served
}

// Package bridge is the Runner's side of the extension bridge: a
// loopback-only listener the native host connects to, peer authentication
// from the private rendezvous record, the offers people share from the
// extension, and the routes of attached tabs, each exposed to the Runner as
// a cdp.Socket ([Socket]) so a shared tab gets the same Conn, fences,
// refusals and bounds as any page.
//
// A connection from another user is closed at accept, before it holds a
// slot. Every bound of protocol version 1 (package wire) is enforced here:
// four peers including unverified handshakes (a newcomer takes the oldest
// unfinished handshake's slot, so those cannot starve the host), a two-second handshake, sixteen
// ten-minute offers, sixty-four routes, thirty-two commands in flight per
// peer, and sixteen MiB of queued response and event data. Command or
// response exhaustion closes the peer (and invalidates its offers, leases
// and routes); event exhaustion closes only the affected route's event
// stream. The token is never logged, returned or sent to the extension.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/platform"
)

// Options configures [Listen].
type Options struct {
	StateDir string
	// Logf logs lifecycle lines: never a token, port, URL, title or frame.
	Logf func(format string, args ...any)
	// Now is the clock offers expire by; nil is time.Now.
	Now func() time.Time
	// MaxQueuedBytes overrides wire.MaxQueuedBytes (tests); 0 is the default.
	MaxQueuedBytes int64
	// MaxRouteEvents bounds one route's queued events; 0 is DefaultRouteEvents.
	MaxRouteEvents int
}

// DefaultRouteEvents bounds the events one route may have queued for its
// reader before it turns lossy.
const DefaultRouteEvents = 1024

// sweepEvery is how often expired offers are swept and their extension told.
const sweepEvery = 15 * time.Second

// writeTimeout bounds one frame written to a peer; a write that times out
// leaves the stream out of step, so the peer is closed.
const writeTimeout = 10 * time.Second

// Offer is a pending offer as the Runner lists it. URL and Title are the
// tab's when it was shared; callers show them only where the origin gate
// allows the URL.
type Offer struct {
	ID      string
	URL     string
	Title   string
	Expires time.Time
}

// offerMeta is what the server keeps of a live offer.
type offerMeta struct {
	peer    *peer
	tab     int64
	target  string
	url     string
	title   string
	expires time.Time
}

// Server is the Runner's bridge listener. Safe for concurrent use.
type Server struct {
	opts   Options
	ln     net.Listener
	rec    rendezvous.Record
	offers *lease.Offers
	budget *budget
	stop   chan struct{}
	wg     sync.WaitGroup                                       // the accept loop, the sweeper and every peer
	life   *fsm.Owner[ListenerState, ListenerTrigger, struct{}] // listening, closing, closed
	// closeErr is the listener's close error, written by stop_listening
	// before the machine reaches closed.
	closeErr error

	mu        sync.Mutex // mu guards the fields that follow
	peers     map[*peer]struct{}
	offerMeta map[string]*offerMeta
	routes    map[int64]*route // by channel number
	nextCh    int64
	accepted  uint64 // connections accepted so far: orders the peers for eviction
}

// Listen binds a loopback-only listener on an ephemeral port and publishes
// the rendezvous record (a fresh token and instance id) in the state root.
func Listen(opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = wire.MaxQueuedBytes
	}
	if opts.MaxRouteEvents <= 0 {
		opts.MaxRouteEvents = DefaultRouteEvents
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bridge: listen: %w", err)
	}
	rec, err := rendezvous.NewRecord(ln.Addr().(*net.TCPAddr).Port)
	if err == nil {
		err = rendezvous.WriteRecord(opts.StateDir, rec)
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	offers := lease.NewOffers()
	offers.Now = opts.Now
	s := &Server{
		opts: opts, ln: ln, rec: rec, offers: offers, budget: &budget{limit: opts.MaxQueuedBytes},
		stop: make(chan struct{}), peers: map[*peer]struct{}{}, offerMeta: map[string]*offerMeta{}, routes: map[int64]*route{},
	}
	s.life = fsm.NewOwner(ListenerSpec, fsm.Effects[ListenerState, ListenerTrigger]{
		EffectStopListening: s.stopListening,
	})
	s.wg.Add(2)
	go s.accept()
	go s.sweep()
	return s, nil
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Close stops listening, closes every peer (their leases end with
// native_disconnected), removes the rendezvous record and waits for every
// goroutine it started: the listener machine's stop_listening, once. Safe
// to call twice.
func (s *Server) Close() error {
	if _, err := s.life.Fire(context.Background(), ListenerClose); err != nil {
		s.wg.Wait() // closing or closed already
		return nil
	}
	return s.closeErr
}

// listening reports whether the listener still serves (not closing).
func (s *Server) listening() bool { return s.life.State() == ListenerListening }

// stopListening is stop_listening. The machine left listening before it
// runs, so the accept loop takes no peer it would miss here.
func (s *Server) stopListening(context.Context, fsm.Step[ListenerState, ListenerTrigger]) (ListenerTrigger, error) {
	close(s.stop)
	s.closeErr = s.ln.Close()
	s.mu.Lock()
	peers := make([]*peer, 0, len(s.peers))
	for p := range s.peers {
		peers = append(peers, p)
	}
	s.mu.Unlock()
	for _, p := range peers {
		p.close("shutdown")
	}
	s.wg.Wait()
	rendezvous.RemoveRecord(s.opts.StateDir, s.rec)
	return ListenerStopped, nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		if !s.sameUser(conn) {
			conn.Close() // before it can hold a handshake slot
			s.logf("bridge: a connection from another user was refused")
			continue
		}
		s.mu.Lock()
		if !s.listening() {
			s.mu.Unlock()
			conn.Close()
			continue
		}
		var evicted *peer
		if len(s.peers) >= wire.MaxPeers {
			// Every slot is held. Unfinished handshakes must not starve the
			// person's host, which sends its handshake as it connects: the
			// newcomer takes the slot of the oldest one. With every slot
			// verified, the newcomer is refused.
			if evicted = s.evictHandshakeLocked(); evicted == nil {
				s.mu.Unlock()
				conn.Close()
				s.logf("bridge: a connection was refused: %d peers already", wire.MaxPeers)
				continue
			}
			delete(s.peers, evicted)
		}
		s.accepted++
		p := newPeer(s, conn)
		p.seq = s.accepted
		s.peers[p] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		if evicted != nil {
			evicted.conn.Close() // refused already: its reader fails and closes it
			s.logf("bridge: an unfinished handshake gave its slot to a newer connection")
		}
		go p.run()
	}
}

// evictHandshakeLocked refuses the oldest peer still handshaking and
// returns it, or nil when every peer is verified. The refusal goes through
// the peer's machine, so a handshake that completes meanwhile is not cut:
// its authenticate won, the refusal is refused, and the next is tried. The
// caller holds s.mu.
func (s *Server) evictHandshakeLocked() *peer {
	var waiting []*peer
	for p := range s.peers {
		if p.owner.State() == PeerHandshaking {
			waiting = append(waiting, p)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].seq < waiting[j].seq })
	for _, p := range waiting {
		if _, err := p.owner.Fire(context.Background(), PeerRefuse); err == nil {
			return p
		}
	}
	return nil
}

func (s *Server) sweep() {
	defer s.wg.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sweepOffers()
		}
	}
}

// sweepOffers expires offers whose ten minutes passed and tells each one's
// extension, so its popup stops saying "waiting for attach".
func (s *Server) sweepOffers() { s.tellExpired(s.expire()) }

// expire sweeps the book and forgets the expired offers.
func (s *Server) expire() []*offerMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	var told []*offerMeta
	for _, id := range s.offers.Sweep() {
		if m := s.offerMeta[id]; m != nil {
			told = append(told, &offerMeta{peer: m.peer, tab: m.tab, target: id})
			delete(s.offerMeta, id)
		}
	}
	return told
}

// tellExpired tells each expired offer's extension (target holds the
// offer id here).
func (s *Server) tellExpired(told []*offerMeta) {
	for _, m := range told {
		m.peer.send(&wire.Message{T: wire.KindEnded, Tab: m.tab, Offer: m.target, Reason: wire.ReasonOfferExpired})
	}
}

// Status is what the Runner reports of the bridge.
type Status struct {
	Listening bool
	Peers     int // connections, unverified included
	Verified  int
	Offers    int
	Routes    int
}

// Status reports the bridge's counts (nothing identifying).
func (s *Server) Status() Status {
	s.sweepOffers()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Listening: s.listening(), Peers: len(s.peers), Offers: len(s.offerMeta), Routes: len(s.routes)}
	for p := range s.peers {
		if p.owner.State() == PeerVerified {
			st.Verified++
		}
	}
	return st
}

// Offers lists the pending offers, oldest first.
func (s *Server) Offers() []Offer {
	s.sweepOffers()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Offer, 0, len(s.offerMeta))
	for id, m := range s.offerMeta {
		out = append(out, Offer{ID: id, URL: m.url, Title: m.title, Expires: m.expires})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out
}

// addOffer records a tab a verified peer shared. A tab already offered by
// that peer keeps its offer (repeated Share).
func (s *Server) addOffer(p *peer, m *wire.Message) (string, error) {
	// Sweep first, so the book's own sweep inside Offer never drops one
	// without its extension being told.
	s.tellExpired(s.expire())
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, o := range s.offerMeta {
		if o.peer == p && o.tab == m.Tab {
			return id, nil
		}
	}
	id, err := s.offers.Offer(int(m.Tab))
	if err != nil {
		return "", err
	}
	s.offerMeta[id] = &offerMeta{peer: p, tab: m.Tab, target: m.Target, url: m.URL, title: m.Title, expires: s.opts.Now().Add(lease.OfferTTL)}
	return id, nil
}

// revokeOffers revokes p's offers for tab (or all of p's when tab is 0).
func (s *Server) revokeOffers(p *peer, tab int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, o := range s.offerMeta {
		if o.peer == p && (tab == 0 || o.tab == tab) {
			s.offers.Revoke(id)
			delete(s.offerMeta, id)
		}
	}
}

// ErrNoOffer is wrapped by the refusal for an offer that is unknown,
// expired, consumed, revoked or whose peer is gone: all look alike.
var ErrNoOffer = errors.New("bridge: no such live offer")

// Attach consumes the exact offer id once and asks its extension to attach
// the debugger to that tab. It returns the Socket of the new route, which
// the caller owns (Close detaches). Refusals: not_found for an offer that
// is not live, limit_exceeded beyond 64 routes, attachment_lost when the
// extension could not attach or its peer went meanwhile.
func (s *Server) Attach(ctx context.Context, offerID string) (*Socket, error) {
	s.sweepOffers()
	s.mu.Lock()
	meta := s.offerMeta[offerID]
	if meta == nil || !s.listening() {
		s.mu.Unlock()
		return nil, fsm.Refuse(fsm.NotFound, "no such live offer: the person shares the tab again from the extension").WithCause(ErrNoOffer)
	}
	if len(s.routes) >= wire.MaxChannels {
		s.mu.Unlock()
		return nil, fsm.Refusef(fsm.LimitExceeded, "at most %d shared tabs may be attached at once", wire.MaxChannels)
	}
	if _, err := s.offers.Consume(offerID); err != nil {
		delete(s.offerMeta, offerID)
		s.mu.Unlock()
		return nil, fsm.Refuse(fsm.NotFound, "no such live offer: the person shares the tab again from the extension").WithCause(ErrNoOffer)
	}
	delete(s.offerMeta, offerID)
	s.nextCh++
	sock := newSocket(s, meta.peer, meta.url, meta.title)
	rt := sock.addRoute(s.nextCh, meta.tab, meta.target, false)
	s.routes[rt.ch] = rt
	s.mu.Unlock()

	res, err := meta.peer.call(ctx, &wire.Message{T: wire.KindControl, Op: wire.OpAttach, Ch: rt.ch, Offer: offerID, Tab: meta.tab})
	if err == nil && res.Error != nil {
		err = fmt.Errorf("bridge: the extension could not attach: %w", errExtension(res.Error))
	}
	var out struct {
		TargetID string `json:"targetId"`
		URL      string `json:"url"`
		Title    string `json:"title"`
	}
	if err == nil {
		if err = decodeResult(res.Result, &out); err == nil && out.TargetID == "" {
			err = errors.New("bridge: the extension named no target")
		}
	}
	if err != nil {
		rt.attachFailed()
		s.dropRoute(rt)
		sock.finish("attach_failed")
		if ctx.Err() != nil {
			return nil, fmt.Errorf("bridge: attach: %w", ctx.Err())
		}
		return nil, fsm.Refuse(fsm.AttachmentLost, "the extension did not attach the shared tab (it was revoked, closed or detached meanwhile); share it again").WithCause(err)
	}
	if err := rt.attached(out.TargetID); err != nil {
		s.dropRoute(rt)
		sock.finish("attach_failed")
		return nil, fsm.Refuse(fsm.AttachmentLost, "the shared tab's connection ended while it was attached; share it again").WithCause(err)
	}
	if out.URL != "" {
		sock.setInfo(out.URL, out.Title)
	}
	s.logf("bridge: attached a shared tab on route %d", rt.ch)
	return sock, nil
}

// dropRoute forgets rt on the server.
func (s *Server) dropRoute(rt *route) {
	s.mu.Lock()
	if s.routes[rt.ch] == rt {
		delete(s.routes, rt.ch)
	}
	s.mu.Unlock()
}

// newRoute registers a route for a child tab the Runner opened (new_page).
func (s *Server) newRoute(sock *Socket, tab int64) (*route, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listening() {
		return nil, errors.New("bridge: closed")
	}
	if len(s.routes) >= wire.MaxChannels {
		return nil, fmt.Errorf("bridge: at most %d routes", wire.MaxChannels)
	}
	s.nextCh++
	rt := sock.addRoute(s.nextCh, tab, "", true)
	s.routes[rt.ch] = rt
	return rt, nil
}

// routeOf returns the route on channel ch if it belongs to p.
func (s *Server) routeOf(p *peer, ch int64) *route {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt := s.routes[ch]; rt != nil && rt.sock.peer == p {
		return rt
	}
	return nil
}

// routesOf returns p's routes (for tab, or all when tab is 0).
func (s *Server) routesOf(p *peer, tab int64) []*route {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*route
	for _, rt := range s.routes {
		if rt.sock.peer == p && (tab == 0 || rt.tab == tab) {
			out = append(out, rt)
		}
	}
	return out
}

// removePeer forgets p and invalidates everything it had.
func (s *Server) removePeer(p *peer) {
	s.mu.Lock()
	delete(s.peers, p)
	s.mu.Unlock()
	s.revokeOffers(p, 0)
	for _, rt := range s.routesOf(p, 0) {
		rt.end(wire.ReasonNative)
	}
}

// budget is the bridge-wide bound on queued response and event bytes.
type budget struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

func (b *budget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+int64(n) > b.limit {
		return false
	}
	b.used += int64(n)
	return true
}

func (b *budget) give(n int) {
	b.mu.Lock()
	b.used -= int64(n)
	b.mu.Unlock()
}

func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// sameUser reports whether the connection's client socket belongs to this
// process's user, as the local API's SO_PEERCRED check does for its unix
// socket: loopback TCP has no peer credentials, so the kernel's socket
// table names the owner. Another user's connection, or one whose owner
// cannot be read (it closed already), is refused.
func (s *Server) sameUser(conn net.Conn) bool {
	local, ok1 := conn.LocalAddr().(*net.TCPAddr)
	remote, ok2 := conn.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false
	}
	uid, err := platform.LoopbackPeerUID(local.AddrPort(), remote.AddrPort())
	return err == nil && uid == uint32(os.Getuid())
}

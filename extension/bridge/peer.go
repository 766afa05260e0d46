package bridge

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
)

// peer is one native-host connection. Its life is [PeerSpec]; the reader
// goroutine (run) owns it and is waited for by the server.
type peer struct {
	s     *Server
	conn  net.Conn
	owner *fsm.Owner[PeerState, PeerTrigger, struct{}]
	seq   uint64 // its place in accept order (guarded by s.mu)

	// wsem holds one token while a frame is written: frames never
	// interleave, and a caller waiting for its turn leaves when its ctx ends.
	wsem chan struct{}

	mu      sync.Mutex // mu guards the fields that follow
	pending map[int64]deliverFunc
	nextID  int64
	reason  string // why it closed; set once, before the peer closes

	closeOnce sync.Once
	done      chan struct{}
}

// deliverFunc receives a command's response, or the error that ended it.
// An error it returns (a response that found the queues full) closes the
// peer: response exhaustion invalidates the peer's leases.
type deliverFunc func(*wire.Message, error) error

func newPeer(s *Server, conn net.Conn) *peer {
	p := &peer{s: s, conn: conn, pending: map[int64]deliverFunc{}, done: make(chan struct{}), wsem: make(chan struct{}, 1)}
	p.owner = fsm.NewOwner(PeerSpec, fsm.Effects[PeerState, PeerTrigger]{
		EffectSendReady:      p.sendReady,
		EffectInvalidatePeer: p.invalidate,
	})
	return p
}

// sendReady is send_ready: the native host hears it was authenticated.
func (p *peer) sendReady(ctx context.Context, _ fsm.Step[PeerState, PeerTrigger]) (PeerTrigger, error) {
	if err := p.write(ctx, &wire.Message{T: wire.KindReady, V: wire.Version}); err != nil {
		return "", err
	}
	p.s.logf("bridge: a native host authenticated")
	return "", nil
}

// invalidate is invalidate_offers_leases_routes: nothing of a closed
// verified peer stays usable.
func (p *peer) invalidate(context.Context, fsm.Step[PeerState, PeerTrigger]) (PeerTrigger, error) {
	p.s.removePeer(p)
	p.s.logf("bridge: a peer closed (%s): its offers, leases and routes are invalid", p.closeReason())
	return "", nil
}

func (p *peer) closeReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reason
}

// errPeerClosed is wrapped by the error of a call whose peer closed.
var errPeerClosed = errors.New("bridge: the extension's connection closed")

// ErrAuth is why a handshake was refused (never says which part).
var ErrAuth = errors.New("bridge: handshake refused")

// authenticate checks a handshake frame's body against the record: the
// token in constant time, the instance id, and the extension origin the
// installation names. Pure, for the fuzz target.
func authenticate(body []byte, rec rendezvous.Record, origin string) error {
	m, err := wire.Decode(body, wire.FromHost)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAuth, err)
	}
	tokenOK := subtle.ConstantTimeCompare([]byte(m.Token), []byte(rec.Token)) == 1
	if !tokenOK || m.Instance != rec.Instance || (origin != "" && m.Origin != origin) {
		return ErrAuth
	}
	return nil
}

// run authenticates the peer within the handshake bound, then reads frames
// until the connection ends or a frame breaks a rule (fail closed).
func (p *peer) run() {
	defer p.s.wg.Done()
	err := p.handshake()
	if err != nil {
		if p.owner.State() == PeerHandshaking { // a bad or late handshake; else ready could not be sent
			if _, ferr := p.owner.Fire(context.Background(), PeerRefuse); ferr != nil {
				p.s.logf("bridge: refusing a peer: %v", ferr)
			}
		}
		p.close("handshake")
		return
	}
	rd := wire.NewReader(p.conn, binary.LittleEndian)
	for {
		body, err := rd.ReadFrameFunc(func() int { return wire.MaxInbound(p.awaiting()) })
		if err != nil {
			p.close(closeReason(err))
			return
		}
		m, err := wire.Decode(body, wire.FromExtension)
		if err != nil {
			p.s.logf("bridge: closing a peer: %s", closeReason(err))
			p.close(closeReason(err))
			return
		}
		if err := p.dispatch(m, len(body)); err != nil {
			p.s.logf("bridge: closing a peer: %v", err)
			p.close("exhausted")
			return
		}
	}
}

func closeReason(err error) string {
	switch {
	case errors.Is(err, wire.ErrFrameTooLarge):
		return "oversized frame"
	case errors.Is(err, wire.ErrMalformed), errors.Is(err, wire.ErrEmptyFrame):
		return "malformed frame"
	}
	return "connection ended"
}

// handshake reads the auth frame within wire.HandshakeTimeout (a partial
// frame at the deadline fails too) and answers ready.
func (p *peer) handshake() error {
	p.conn.SetReadDeadline(time.Now().Add(wire.HandshakeTimeout))
	body, err := wire.NewReader(p.conn, binary.LittleEndian).ReadFrame(wire.MaxEvent)
	if err != nil {
		return err
	}
	origin := ""
	if in, err := rendezvous.ReadInstall(p.s.opts.StateDir); err == nil {
		origin = in.Origin
	} else {
		return fmt.Errorf("%w: no installation record", ErrAuth)
	}
	if err := authenticate(body, p.s.rec, origin); err != nil {
		return err
	}
	p.conn.SetReadDeadline(time.Time{})
	_, err = p.owner.Fire(context.Background(), PeerAuthenticate) // send_ready
	return err
}

// awaiting reports whether a command of this peer awaits its response: only
// then may a frame be response-sized.
func (p *peer) awaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) > 0
}

// write sends one message as a frame, within writeTimeout and ctx: a
// caller whose ctx ends while it waits for its turn, or while its frame is
// blocked in the socket (a reader that does not read), is released at once.
// A frame of which nothing went leaves the stream in step and the peer
// serving; one cut partway closes the peer, so no later frame follows a
// half-sent one.
func (p *peer) write(ctx context.Context, m *wire.Message) error {
	body, err := wire.Encode(m)
	if err != nil {
		return err // above its limit: nothing sent, the peer stays
	}
	frame, err := wire.AppendFrame(make([]byte, 0, wire.HeaderSize+len(body)), binary.LittleEndian, body, wire.Limit(m.T))
	if err != nil {
		return err
	}
	select {
	case p.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("bridge: write: %w", context.Cause(ctx))
	case <-p.done:
		return errPeerClosed
	}
	defer func() { <-p.wsem }()
	deadline := time.Now().Add(writeTimeout)
	d, byCtx := ctx.Deadline()
	if byCtx = byCtx && d.Before(deadline); byCtx {
		deadline = d
	}
	p.conn.SetWriteDeadline(deadline)
	// A cancel cuts the blocked Write by moving its deadline to the past;
	// the next writer sets its own only after this one has run.
	moved := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(moved)
		p.conn.SetWriteDeadline(time.Unix(1, 0))
	})
	n, err := p.conn.Write(frame)
	if !stop() {
		<-moved
	}
	if err == nil {
		return nil
	}
	cut := ctx.Err() != nil || (byCtx && errors.Is(err, os.ErrDeadlineExceeded))
	if cut && n == 0 {
		return fmt.Errorf("bridge: write: %w", ctxErr(ctx)) // nothing went: the stream is in step
	}
	// Part of a frame may have gone: the stream is out of step. The reader
	// fails on the closed connection and closes the peer.
	p.conn.Close()
	if cut {
		return fmt.Errorf("%w: %w", errPeerClosed, ctxErr(ctx))
	}
	return fmt.Errorf("%w: %w", errPeerClosed, err)
}

// ctxErr is why ctx ended; a deadline the socket reached a moment before
// ctx's own timer fired is ctx's deadline.
func ctxErr(ctx context.Context) error {
	if ctx.Err() == nil {
		return context.DeadlineExceeded
	}
	return context.Cause(ctx)
}

// send writes a message that needs no answer, ignoring a closed peer.
func (p *peer) send(m *wire.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	_ = p.write(ctx, m)
}

// start registers deliver for a new command id and sends m with it. A
// peer with wire.MaxQueuedCommands commands in flight is exhausted: it is
// closed (its leases with it) and start fails.
func (p *peer) start(ctx context.Context, m *wire.Message, deliver deliverFunc) error {
	p.mu.Lock()
	if p.reason != "" {
		p.mu.Unlock()
		return errPeerClosed
	}
	if len(p.pending) >= wire.MaxQueuedCommands {
		p.mu.Unlock()
		p.close("command queue exhausted")
		return fmt.Errorf("%w: %d commands already in flight", errPeerClosed, wire.MaxQueuedCommands)
	}
	p.nextID++
	m.ID = p.nextID
	p.pending[m.ID] = deliver
	p.mu.Unlock()
	if err := p.write(ctx, m); err != nil {
		p.mu.Lock()
		delete(p.pending, m.ID)
		p.mu.Unlock()
		return err
	}
	return nil
}

// call sends a control and waits for its answer, ctx or the peer's end.
func (p *peer) call(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	ch := make(chan callResult, 1)
	if err := p.start(ctx, m, func(res *wire.Message, err error) error { ch <- callResult{res, err}; return nil }); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.m, r.err
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.pending, m.ID)
		p.mu.Unlock()
		return nil, ctx.Err()
	}
}

type callResult struct {
	m   *wire.Message
	err error
}

// dispatch routes one decoded frame. An error closes the peer.
func (p *peer) dispatch(m *wire.Message, size int) error {
	switch m.T {
	case wire.KindResponse:
		p.mu.Lock()
		deliver := p.pending[m.ID]
		delete(p.pending, m.ID)
		p.mu.Unlock()
		if deliver != nil {
			return deliver(m, nil)
		}
		return nil
	case wire.KindEvent:
		if rt := p.s.routeOf(p, m.Ch); rt != nil {
			return rt.event(m, size)
		}
		return nil // a route that ended meanwhile
	case wire.KindShare:
		id, err := p.s.addOffer(p, m)
		if err != nil {
			p.s.logf("bridge: a shared tab was not offered: %s", refusalCode(err))
			p.send(&wire.Message{T: wire.KindEnded, Tab: m.Tab, Reason: wire.ReasonOfferRefused})
			return nil
		}
		p.send(&wire.Message{T: wire.KindOffered, Tab: m.Tab, Offer: id})
		return nil
	case wire.KindRevoke:
		p.s.revokeOffers(p, m.Tab)
		for _, rt := range p.s.routesOf(p, m.Tab) {
			rt.end(wire.ReasonRevoke)
		}
		return nil
	case wire.KindDetached:
		if rt := p.s.routeOf(p, m.Ch); rt != nil && rt.tab == m.Tab {
			rt.end(m.Reason)
		}
		return nil
	}
	return fmt.Errorf("%w: unexpected %s", wire.ErrMalformed, m.T)
}

// close ends the peer once: the connection closes, calls in flight fail,
// and (verified) its offers, leases and routes are invalidated.
func (p *peer) close(reason string) {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.reason = reason
		pending := p.pending
		p.pending = map[int64]deliverFunc{}
		p.mu.Unlock()
		// Invalidate first, then close: whoever sees the connection end
		// sees its offers, leases and routes gone already. A verified peer
		// is invalidated by its machine's effect; one that never verified
		// (refused above, or closing now) has nothing but its slot.
		verified := p.owner.State() == PeerVerified
		if p.owner.State() != PeerClosed {
			if _, err := p.owner.Fire(context.Background(), PeerClose); err != nil {
				p.s.logf("bridge: closing a peer: %v", err)
			}
		}
		if !verified {
			p.s.removePeer(p) // it holds nothing but its slot
		}
		for _, deliver := range pending {
			deliver(nil, fmt.Errorf("%w (%s)", errPeerClosed, reason))
		}
		p.conn.Close()
		close(p.done)
	})
}

func refusalCode(err error) string {
	if r, ok := fsm.AsRefusal(err); ok {
		return string(r.Code)
	}
	return "failure"
}

// errExtension is a failed control's error as a Go error (its message is
// the extension's, bounded by the wire).
func errExtension(e *wire.Error) error {
	return fmt.Errorf("extension error %d: %.200s", e.Code, e.Message)
}

func decodeResult(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("bridge: empty result")
	}
	return json.Unmarshal(raw, v)
}

package cdp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	cdprotomsg "github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
)

// Session is one CDP session on a [Conn]: the browser session
// ([Conn.Browser]) or a flattened session attached to a target. It
// implements cdproto's cdp.Session, so cdproto.Call(ctx, sess, cmd, params)
// and cdproto.Events work on it.
//
// Session is safe for concurrent use. When it is detached (or the connection
// ends), its subscription channels close and its calls fail with an error
// wrapping [ErrDetached] (or [ErrClosed]).
type Session struct {
	conn   *Conn
	id     string
	parent string // session through which it was attached ("" = browser)

	done chan struct{} // closed when the session ends

	dropped atomic.Uint64

	// mu guards the fields that follow.
	mu    sync.Mutex
	subs  map[string][]*subscription
	ended bool
	err   error
}

var _ cdproto.Session = (*Session)(nil)

// subscription is one subscriber: raw for Subscribe (the params of one
// method, as cdproto.Events reads them), typed for Events (several methods
// on one channel, in wire order, decoded to cdproto's types).
type subscription struct {
	raw    chan jsonv2.Value
	typed  chan any
	closed bool // guarded by Session.mu
}

// closeLocked closes the subscriber's channel once (an Events subscriber is
// listed under several methods).
func (sub *subscription) closeLocked() {
	if sub.closed {
		return
	}
	sub.closed = true
	if sub.typed != nil {
		close(sub.typed)
	} else {
		close(sub.raw)
	}
}

// EventPageDownloadWillBegin is Page.downloadWillBegin, which Chromium (156)
// still sends on a page session once the browser's download behaviour has
// events enabled, but which the protocol, and so cdproto, no longer lists.
// Its params are Browser.downloadWillBegin's.
type EventPageDownloadWillBegin browser.EventDownloadWillBegin

// PageDownloadWillBegin names [EventPageDownloadWillBegin] as cdproto names
// its events, for [Session.Events].
var PageDownloadWillBegin = cdproto.Event[EventPageDownloadWillBegin]{Method: "Page.downloadWillBegin"}

// decodeEvent returns the params of the event method as cdproto's type for
// it (for example *page.EventLifecycleEvent).
func decodeEvent(method string, params jsonv2.Value) (any, error) {
	if len(params) == 0 {
		params = jsonv2.Value("{}") // an event without params decodes to its empty type
	}
	if method == PageDownloadWillBegin.Method {
		v := new(EventPageDownloadWillBegin)
		if err := jsonv2.Unmarshal(params, v); err != nil {
			return nil, fmt.Errorf("cdp: decoding %s: %w", method, err)
		}
		return v, nil
	}
	v, err := cdprotomsg.UnmarshalMessage(&cdprotomsg.Message{Method: cdprotomsg.MethodType(method), Params: params})
	if err != nil {
		return nil, fmt.Errorf("cdp: decoding %s: %w", method, err)
	}
	return v, nil
}

func newSession(c *Conn, id, parent string) *Session {
	return &Session{conn: c, id: id, parent: parent, done: make(chan struct{}), subs: make(map[string][]*subscription)}
}

// ID returns the CDP session id; "" for the browser session.
func (s *Session) ID() string { return s.id }

// Conn returns the connection the session belongs to.
func (s *Session) Conn() *Conn { return s.conn }

// Done returns a channel that is closed when the session ends: detached, or
// its connection ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the session is live, and afterwards an error wrapping
// [ErrDetached] or [ErrClosed].
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Dropped returns how many events of this session were dropped: a
// subscription's queue was full, or the event was above the socket's read
// limit (discarded unread). A consumer that needs every event compares it
// before and after; events are never silently reordered, only dropped.
func (s *Session) Dropped() uint64 { return s.dropped.Load() }

// Call sends the command method with params (encoded with cdproto's jsonv2;
// nil sends none) and decodes the result into result (nil discards it). It
// returns a *[ProtocolError] for an error response, and errors wrapping
// ctx.Err(), [ErrClosed], [ErrDetached] or [ErrMessageTooLarge] (a
// *[TooLargeError] for a command above the write limit, nothing sent; an
// *[InboundTooLargeError] for a reply above the read limit, discarded).
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	return s.conn.call(ctx, s, method, params, result, nil)
}

// Subscribe returns a channel of the params of every event named method on
// this session from now on, and a func that ends the subscription and closes
// the channel: cdproto's Session, which cdproto.Events reads. The channel
// holds up to ConnOptions.EventQueue events; an event that finds it full is
// dropped and counted in [Session.Dropped] and [Conn.Dropped]. The channel
// also closes when the session ends. On an ended session it returns a closed
// channel.
func (s *Session) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	sub := &subscription{raw: make(chan jsonv2.Value, s.conn.opts.EventQueue)}
	return sub.raw, s.add(sub, []string{method})
}

// Events returns one channel of the events of methods on this session from
// now on, each decoded once to cdproto's type for it (a
// *page.EventFrameNavigated, a *runtime.EventConsoleAPICalled; for
// Page.downloadWillBegin an *[EventPageDownloadWillBegin]), so a consumer
// switches on Go types. Events arrive in the order the browser sent them,
// which separate subscriptions cannot promise across methods: a consumer that
// relates an event to an earlier one of another method (a console message to
// the execution context it names, whose ids a new renderer process reuses)
// needs that order. Every subscriber of an event receives the same value:
// read it, never change it.
//
// Queueing, dropping and closing are as for [Session.Subscribe]; an event
// whose params do not decode is dropped and counted the same way. A method
// with no cdproto type is a programming error, and Events panics.
func (s *Session) Events(methods ...string) (<-chan any, func()) {
	seen := make(map[string]bool, len(methods))
	var listed []string
	for _, m := range methods {
		if seen[m] {
			continue // listed once, delivered once
		}
		if _, err := decodeEvent(m, nil); errors.As(err, new(cdproto.ErrUnknownCommandOrEvent)) {
			panic(fmt.Sprintf("cdp: Events: %s has no cdproto type", m))
		}
		seen[m] = true
		listed = append(listed, m)
	}
	sub := &subscription{typed: make(chan any, s.conn.opts.EventQueue)}
	return sub.typed, s.add(sub, listed)
}

// add lists sub under methods and returns its cancel; on an ended session
// it closes sub at once.
func (s *Session) add(sub *subscription, methods []string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		sub.closeLocked()
		return func() {}
	}
	for _, m := range methods {
		s.subs[m] = append(s.subs[m], sub)
	}
	var once sync.Once
	return func() { once.Do(func() { s.unsubscribe(methods, sub) }) }
}

func (s *Session) unsubscribe(methods []string, sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return // end closed it
	}
	for _, method := range methods {
		list := s.subs[method]
		for i, x := range list {
			if x == sub {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.subs, method)
		} else {
			s.subs[method] = list
		}
	}
	sub.closeLocked()
}

// deliver queues an event for its subscribers without blocking. It is
// decoded at most once, for the first typed subscriber, and shared.
func (s *Session) deliver(method string, params jsonv2.Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		decoded   any
		decodeErr error
		tried     bool
	)
	for _, sub := range s.subs[method] {
		ok := false
		if sub.typed != nil {
			if !tried {
				decoded, decodeErr = decodeEvent(method, params)
				tried = true
			}
			if decodeErr == nil {
				select {
				case sub.typed <- decoded:
					ok = true
				default:
				}
			}
		} else {
			select {
			case sub.raw <- params:
				ok = true
			default:
			}
		}
		if !ok {
			s.dropped.Add(1)
			s.conn.dropped.Add(1)
		}
	}
}

// end closes the session's subscriptions and done, once.
func (s *Session) end(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended, s.err = true, cause
	for _, list := range s.subs {
		for _, sub := range list {
			sub.closeLocked()
		}
	}
	s.subs = nil
	close(s.done)
}

// AttachTarget attaches to the target through Target.attachToTarget with
// flatten:true, so the new session shares this connection's socket.
func (c *Conn) AttachTarget(ctx context.Context, targetID target.ID) (*Session, error) {
	// The session is registered by the reader as the response is routed, so
	// a Target.detachedFromTarget that follows cannot be overtaken.
	var s *Session
	register := func(raw jsonv2.Value) {
		var res target.AttachToTargetResult
		if jsonv2.Unmarshal(raw, &res) == nil && res.SessionID != "" {
			s = c.register(string(res.SessionID), "")
		}
	}
	params := target.AttachToTargetParams{TargetID: targetID, Flatten: new(true)}
	if err := c.call(ctx, c.browser, target.CommandAttachToTarget, params, nil, register); err != nil {
		return nil, err
	}
	if s == nil {
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("cdp: %s: %w", target.CommandAttachToTarget, err)
		}
		return nil, fmt.Errorf("cdp: %s: no session in the response", target.CommandAttachToTarget)
	}
	return s, nil
}

// Session returns the live session with the id, and whether there is one.
// Sessions announced by Target.attachedToTarget (auto-attach) are known from
// the moment that event is read, before any subscriber sees it.
func (c *Conn) Session(id string) (*Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[id]
	return s, ok
}

// Detach detaches the session from its target with Target.detachFromTarget
// and ends it. Detaching the browser session is an error.
func (s *Session) Detach(ctx context.Context) error {
	if s.id == "" {
		return fmt.Errorf("cdp: cannot detach the browser session")
	}
	err := s.conn.browser.Call(ctx, target.CommandDetachFromTarget, target.DetachFromTargetParams{SessionID: target.SessionID(s.id)}, nil)
	if err == nil {
		s.conn.detach(s.id)
	}
	return err
}

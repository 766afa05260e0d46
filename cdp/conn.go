package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
)

// DefaultEventQueue is the default capacity of one subscription's queue.
const DefaultEventQueue = 256

// DefaultWriteTimeout is the default bound on one socket write.
const DefaultWriteTimeout = 10 * time.Second

// ConnOptions configures [NewConn]. The zero value uses the defaults.
type ConnOptions struct {
	// EventQueue is the capacity of each subscription's channel; 0 means
	// DefaultEventQueue. An event that finds the queue full is dropped and
	// counted (see [Session.Dropped]); the reader never blocks on a consumer.
	EventQueue int
	// WriteTimeout bounds one socket write; 0 means DefaultWriteTimeout. A
	// write that times out closes the connection, since a partly written
	// message cannot be taken back. The caller's ctx bounds only the wait for
	// the write slot and for the response, so a caller's deadline never
	// breaks the socket.
	WriteTimeout time.Duration
}

// Conn is a CDP connection to one browser over one [Socket]. One reader
// goroutine routes responses by id and events by (session, method); writes
// are serialized. Every target is reached through a flattened [Session] on
// this connection ([Conn.AttachTarget]), never through a socket of its own.
//
// Conn is safe for concurrent use. When the socket fails or [Conn.Close] is
// called, Done closes, every call in flight fails with an error wrapping
// [ErrClosed], and every subscription channel closes.
type Conn struct {
	sock Socket
	opts ConnOptions

	nextID atomic.Int64
	wsem   chan struct{} // write slot; holds one token when free

	browser *Session

	// mu guards the fields that follow.
	mu       sync.Mutex
	pending  map[int64]*call
	sessions map[string]*Session // flattened sessions by id; "" is the browser
	err      error               // set once, when the connection ends

	dropped   atomic.Uint64
	oversized atomic.Uint64

	done       chan struct{} // closed when the connection has ended
	readerDone chan struct{} // closed when the reader goroutine returns
	closeOnce  sync.Once
	closeErr   error
}

// call is one command waiting for its response.
type call struct {
	session string
	method  string
	ch      chan response // buffered 1: the reader never blocks
	// onResult, when set, runs in the reader goroutine on a successful
	// response, before any later message is routed.
	onResult func(jsonv2.Value)
}

type response struct {
	result jsonv2.Value
	err    error
}

// NewConn starts a connection over sock and owns it from then on: Close
// closes sock. The reader goroutine it starts ends with the connection.
func NewConn(sock Socket, opts ConnOptions) *Conn {
	if opts.EventQueue <= 0 {
		opts.EventQueue = DefaultEventQueue
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	c := &Conn{
		sock:       sock,
		opts:       opts,
		wsem:       make(chan struct{}, 1),
		pending:    make(map[int64]*call),
		sessions:   make(map[string]*Session),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	c.wsem <- struct{}{}
	c.browser = newSession(c, "", "")
	c.sessions[""] = c.browser
	go c.read()
	return c
}

// Browser returns the browser-level session, on which Target.* and
// Browser.* commands run.
func (c *Conn) Browser() *Session { return c.browser }

// Done returns a channel that is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection is open, and afterwards the reason it
// ended, which wraps [ErrClosed].
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Dropped returns how many events were dropped on this connection: a
// subscription's queue was full, or the event was above the socket's limit.
func (c *Conn) Dropped() uint64 { return c.dropped.Load() }

// Oversized returns how many inbound messages (replies and events) were
// above the socket's limit and discarded.
func (c *Conn) Oversized() uint64 { return c.oversized.Load() }

// Close closes the socket, fails every call in flight with [ErrClosed], and
// waits for the reader goroutine to return. It is idempotent; later calls
// return nil.
func (c *Conn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.shutdown(ErrClosed)
		c.closeErr = c.sock.Close()
	})
	<-c.readerDone
	if first {
		return c.closeErr
	}
	return nil
}

// shutdown ends the connection once with cause (wrapped with ErrClosed when
// it does not already wrap it): it fails every pending call, ends every
// session and closes done.
func (c *Conn) shutdown(cause error) {
	if !errors.Is(cause, ErrClosed) {
		cause = fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = cause
	pending := c.pending
	c.pending = nil
	sessions := c.sessions
	c.sessions = nil
	c.mu.Unlock()
	for _, p := range pending {
		p.ch <- response{err: cause}
	}
	for _, s := range sessions {
		s.end(cause)
	}
	close(c.done)
}

// read is the reader goroutine: it runs until the socket fails.
func (c *Conn) read() {
	defer close(c.readerDone)
	ctx := context.Background()
	for {
		msg, err := c.sock.ReadMessage(ctx)
		if tl, ok := errors.AsType[*InboundTooLargeError](err); ok {
			c.dispatchTooLarge(tl)
			continue
		}
		if err != nil {
			c.shutdown(err)
			c.sock.Close()
			return
		}
		c.dispatch(msg)
	}
}

// dispatchTooLarge routes what is known of a message the socket discarded
// because it was above its limit: the command whose reply it was fails with
// the error (the connection and every other call go on), and an event is
// counted as dropped on its session, so a reader of diagnostics sees a loss
// marker rather than a gap.
func (c *Conn) dispatchTooLarge(tl *InboundTooLargeError) {
	c.oversized.Add(1)
	id, method, ok := messageHead(tl.Head)
	if ok && method == "" && id != 0 {
		c.mu.Lock()
		p := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if p != nil {
			e := *tl
			e.Method = p.method
			e.Head, e.Tail = nil, nil // nothing of the content leaves the reader
			p.ch <- response{err: &e}
		}
		return
	}
	c.mu.Lock()
	s := c.sessions[messageSession(tl.Tail)]
	c.mu.Unlock()
	if s == nil {
		s = c.browser // unknown session: count it where the connection's owner looks
	}
	s.dropped.Add(1)
	c.dropped.Add(1)
}

// messageHead reads the id and method of a message from its first bytes.
// The browser writes them before the params or result, so the members are
// read in order until the first that is not a scalar.
func messageHead(head []byte) (id int64, method string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, "", false
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return id, method, id != 0 || method != ""
		}
		key, _ := t.(string)
		switch key {
		case "id", "method":
		default:
			return id, method, id != 0 || method != "" // params, result: not read
		}
		v, err := dec.Token()
		if err != nil {
			return id, method, id != 0 || method != ""
		}
		switch x := v.(type) {
		case json.Number:
			if key == "id" {
				id, _ = x.Int64()
			}
		case string:
			if key == "method" {
				method = x
			}
		}
	}
}

// sessionSuffix matches the sessionId the browser appends as the last
// member of a message of a flattened session. Anchored at the end, it
// cannot match text inside the params: a string there is followed by at
// least the closing brace of params.
var sessionSuffix = regexp.MustCompile(`,"sessionId":"([0-9A-Za-z]{1,64})"\}\s*$`)

// messageSession returns the session id a message ends with ("" for the
// browser session).
func messageSession(tail []byte) string {
	if m := sessionSuffix.FindSubmatch(tail); m != nil {
		return string(m[1])
	}
	return ""
}

// inbound is a message from the browser: a response (ID set) or an event
// (Method set).
type inbound struct {
	ID        int64          `json:"id,omitzero"`
	SessionID string         `json:"sessionId,omitzero"`
	Method    string         `json:"method,omitzero"`
	Params    jsonv2.Value   `json:"params,omitzero"`
	Result    jsonv2.Value   `json:"result,omitzero"`
	Error     *ProtocolError `json:"error,omitzero"`
}

// dispatch routes one message. It never blocks on a consumer. A message that
// does not parse is ignored: one bad message must not end the connection.
func (c *Conn) dispatch(msg []byte) {
	var in inbound
	if err := jsonv2.Unmarshal(msg, &in); err != nil {
		return
	}
	if in.Method == "" {
		c.mu.Lock()
		p := c.pending[in.ID]
		delete(c.pending, in.ID)
		c.mu.Unlock()
		if p == nil {
			return // its caller gave up
		}
		if in.Error != nil {
			p.ch <- response{err: in.Error}
			return
		}
		if p.onResult != nil {
			p.onResult(in.Result)
		}
		p.ch <- response{result: in.Result}
		return
	}
	switch in.Method {
	case target.AttachedToTarget.Method:
		var ev target.EventAttachedToTarget
		if jsonv2.Unmarshal(in.Params, &ev) == nil && ev.SessionID != "" {
			c.register(string(ev.SessionID), in.SessionID)
		}
	case target.DetachedFromTarget.Method:
		var ev target.EventDetachedFromTarget
		if jsonv2.Unmarshal(in.Params, &ev) == nil && ev.SessionID != "" {
			c.detach(string(ev.SessionID))
		}
	}
	c.mu.Lock()
	s := c.sessions[in.SessionID]
	c.mu.Unlock()
	if s != nil {
		s.deliver(in.Method, in.Params)
	}
}

// register records a flattened session (idempotently) and returns it, or nil
// when the connection has ended.
func (c *Conn) register(id, parent string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions == nil {
		return nil
	}
	if s := c.sessions[id]; s != nil {
		return s
	}
	s := newSession(c, id, parent)
	c.sessions[id] = s
	return s
}

// detach ends the session id and, recursively, the sessions attached through
// it, failing their calls in flight with ErrDetached.
func (c *Conn) detach(id string) {
	if id == "" {
		return // the browser session ends only with the connection
	}
	c.mu.Lock()
	if c.sessions == nil {
		c.mu.Unlock()
		return
	}
	ids := map[string]bool{id: true}
	for grew := true; grew; { // children of detached sessions, transitively
		grew = false
		for sid, s := range c.sessions {
			if !ids[sid] && ids[s.parent] {
				ids[sid], grew = true, true
			}
		}
	}
	var ended []*Session
	for sid := range ids {
		if s := c.sessions[sid]; s != nil {
			ended = append(ended, s)
			delete(c.sessions, sid)
		}
	}
	var failed []*call
	for cid, p := range c.pending {
		if ids[p.session] {
			failed = append(failed, p)
			delete(c.pending, cid)
		}
	}
	c.mu.Unlock()
	for _, p := range failed {
		p.ch <- response{err: ErrDetached}
	}
	for _, s := range ended {
		s.end(ErrDetached)
	}
}

// outbound is a command sent to the browser.
type outbound struct {
	ID        int64        `json:"id"`
	SessionID string       `json:"sessionId,omitzero"`
	Method    string       `json:"method"`
	Params    jsonv2.Value `json:"params,omitzero"`
}

// call sends method with params on the session and decodes the response's
// result into result (when non-nil).
func (c *Conn) call(ctx context.Context, s *Session, method string, params, result any, onResult func(jsonv2.Value)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	req := outbound{ID: c.nextID.Add(1), SessionID: s.id, Method: method}
	if params != nil {
		raw, err := jsonv2.Marshal(params)
		if err != nil {
			return fmt.Errorf("cdp: %s: encoding params: %w", method, err)
		}
		req.Params = raw
	}
	msg, err := jsonv2.Marshal(req)
	if err != nil {
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	p := &call{session: s.id, method: method, ch: make(chan response, 1), onResult: onResult}
	c.mu.Lock()
	switch {
	case c.err != nil:
		err = c.err
	case s.id != "" && c.sessions[s.id] != s:
		err = ErrDetached
	default:
		c.pending[req.ID] = p
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	if err := c.write(ctx, msg); err != nil {
		c.forget(req.ID)
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	select {
	case r := <-p.ch:
		if r.err != nil {
			return fmt.Errorf("cdp: %s: %w", method, r.err)
		}
		if result != nil && len(r.result) > 0 {
			if err := jsonv2.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("cdp: %s: decoding result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(req.ID)
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// forget drops a pending call whose caller gives up.
func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// write sends msg once the write slot is free. ctx bounds only the wait for
// the slot; the write itself is bounded by WriteTimeout, and any failure
// other than ErrMessageTooLarge ends the connection.
func (c *Conn) write(ctx context.Context, msg []byte) error {
	select {
	case <-c.wsem:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.Err()
	}
	defer func() { c.wsem <- struct{}{} }()
	if c.Err() != nil {
		return c.Err()
	}
	wctx, cancel := context.WithTimeout(context.Background(), c.opts.WriteTimeout)
	defer cancel()
	err := c.sock.WriteMessage(wctx, msg)
	if err == nil || errors.Is(err, ErrMessageTooLarge) {
		return err
	}
	c.shutdown(err)
	c.sock.Close()
	return c.Err()
}

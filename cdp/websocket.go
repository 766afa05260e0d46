package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Default limits of [DialWebSocket].
const (
	// DefaultMaxMessageSize bounds inbound messages: a full-page screenshot or
	// an accessibility tree of a large page is several MiB (6.5 MB for 5,000
	// buttons, Chromium 156).
	DefaultMaxMessageSize = 64 << 20
	// DefaultMaxWriteSize bounds outbound messages. Commands are small; the
	// write buffer is this large, per socket, so it is kept well below the
	// inbound limit.
	DefaultMaxWriteSize = 4 << 20
)

// DialOptions configures [DialWebSocket]. The zero value uses the defaults.
type DialOptions struct {
	// MaxMessageSize bounds an inbound message, in bytes; 0 means
	// DefaultMaxMessageSize. A larger message is read to its end and
	// discarded: the read returns an [*InboundTooLargeError] and the socket
	// stays usable.
	MaxMessageSize int64
	// MaxWriteSize bounds an outbound message, in bytes; 0 means
	// DefaultMaxWriteSize. The write buffer is at least this large, because
	// gorilla fragments any message larger than its buffer and Chrome rejects
	// fragmented frames; a larger message is refused with
	// ErrMessageTooLarge before anything is sent.
	MaxWriteSize int
	// NetDialContext dials the TCP connection; nil means a net.Dialer. Tests
	// wrap it to cut the connection.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DialWebSocket opens a DevTools WebSocket to wsURL (ws://host:port/devtools/
// browser/id). The handshake sends no Origin header (Chrome refuses foreign
// origins) and is bounded by ctx, which ends only the handshake, not the
// returned socket. Errors never contain the URL or the address.
func DialWebSocket(ctx context.Context, wsURL string, opts DialOptions) (Socket, error) {
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxWriteSize <= 0 {
		opts.MaxWriteSize = DefaultMaxWriteSize
	}
	dial := opts.NetDialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	// Capture the TCP connection so that cancelling ctx without a deadline
	// also ends the handshake: gorilla only honours deadlines.
	var (
		mu  sync.Mutex
		raw net.Conn
	)
	d := websocket.Dialer{
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err == nil {
				mu.Lock()
				raw = c
				mu.Unlock()
				// A cancel that came before raw was set found nothing to
				// unblock: do it here.
				if ctx.Err() != nil {
					c.SetDeadline(past)
				}
			}
			return c, err
		},
		ReadBufferSize:  64 << 10,
		WriteBufferSize: opts.MaxWriteSize,
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if raw != nil {
			raw.SetDeadline(time.Unix(1, 0))
		}
	})
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	if !stop() && err == nil {
		// ctx ended after the handshake finished but may have set a deadline.
		ws.Close()
		err = ctx.Err()
	}
	if err != nil {
		// gorilla puts ctx's deadline on the connection, which can fire a
		// moment before ctx's own timer: once the deadline has passed, wait
		// for ctx to say so, so callers can tell a deadline by ctx.Err().
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cdp: dial: %w", ctx.Err())
		}
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			return nil, &HandshakeError{Status: resp.StatusCode}
		}
		return nil, fmt.Errorf("cdp: dial: %w", sanitize(err))
	}
	ws.SetReadLimit(0) // no limit of gorilla's: it would close the socket (ReadMessage applies ours)
	return &wsSocket{ws: ws, maxRead: opts.MaxMessageSize, maxWrite: opts.MaxWriteSize, closed: make(chan struct{})}, nil
}

// sanitize drops addresses and URLs from err, keeping the cause.
func sanitize(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return fmt.Errorf("%s: %w", op.Op, op.Err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return errors.New("invalid URL")
	}
	return err
}

// wsSocket is a [Socket] over gorilla/websocket. Writes are serialized by
// wmu; reads must come from one goroutine at a time.
type wsSocket struct {
	ws       *websocket.Conn
	maxRead  int64
	maxWrite int

	readDeadline bool // a read deadline is set; touched only by the reader

	wmu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
}

// past is a deadline that has already expired, set to wake a blocked call.
var past = time.Unix(1, 0)

func (s *wsSocket) ReadMessage(ctx context.Context) ([]byte, error) {
	if dl, ok := ctx.Deadline(); ok {
		s.ws.SetReadDeadline(dl)
		s.readDeadline = true
	} else if s.readDeadline {
		s.ws.SetReadDeadline(time.Time{})
		s.readDeadline = false
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.ws.SetReadDeadline(past) })
		defer stop()
	}
	_, r, err := s.ws.NextReader()
	if err != nil {
		return nil, s.failure("read", ctx, err)
	}
	// The limit is ours, not gorilla's (whose limit closes the socket): read
	// the message as a stream, and past the limit keep only its head and
	// tail until its end.
	msg, err := io.ReadAll(io.LimitReader(r, s.maxRead+1))
	if err != nil {
		return nil, s.failure("read", ctx, err)
	}
	if int64(len(msg)) <= s.maxRead {
		return msg, nil
	}
	var d discard
	d.write(msg)
	msg = nil
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		d.write(buf[:n])
		if err == io.EOF {
			return nil, d.err(s.maxRead)
		}
		if err != nil {
			return nil, s.failure("read", ctx, err)
		}
	}
}

func (s *wsSocket) WriteMessage(ctx context.Context, msg []byte) error {
	if len(msg) > s.maxWrite {
		return &TooLargeError{Size: len(msg), Limit: s.maxWrite}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	dl, _ := ctx.Deadline()
	s.ws.SetWriteDeadline(dl)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.ws.SetWriteDeadline(past) })
		defer stop()
	}
	if err := s.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
		return s.failure("write", ctx, err)
	}
	return nil
}

// failure turns a gorilla or net error into one without addresses.
func (s *wsSocket) failure(op string, ctx context.Context, err error) error {
	select {
	case <-s.closed:
		return fmt.Errorf("cdp: %s: %w", op, ErrClosed)
	default:
	}
	if ctx.Err() != nil {
		return fmt.Errorf("cdp: %s: %w", op, ctx.Err())
	}
	return fmt.Errorf("cdp: %s: %w", op, sanitize(err))
}

// Close closes the TCP connection without a closing handshake; Chrome
// treats both the same. It is idempotent.
func (s *wsSocket) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		err = s.ws.Close()
		if err != nil {
			err = fmt.Errorf("cdp: close: %w", sanitize(err))
		}
	})
	return err
}

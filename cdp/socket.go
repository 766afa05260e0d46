// Package cdp speaks the Chrome DevTools Protocol over one browser-level
// connection: a [Socket] carries whole messages, and a [Conn] correlates
// commands with responses, routes events, and multiplexes every target
// through flattened [Session]s on that one socket.
//
// Commands are typed by cdproto: cdproto.Call(ctx, sess, runtime.Evaluate,
// params) works on any *[Session]. Errors never contain the WebSocket URL,
// ports or profile paths.
package cdp

import (
	"context"
	"errors"
	"fmt"
)

// Socket is a message transport to a browser: a WebSocket ([DialWebSocket]),
// a pipe ([NewPipeSocket]), or later an extension bridge. Each message is one
// complete JSON text.
//
// One goroutine may call ReadMessage while another calls WriteMessage; Close
// may be called from any goroutine, is idempotent, and makes blocked calls
// return. A ReadMessage or WriteMessage that fails for any reason other than
// [ErrMessageTooLarge] leaves the socket unusable.
type Socket interface {
	// ReadMessage returns the next message. It fails when ctx ends or the
	// socket closes. A message larger than the socket's limit is read to its
	// end as a stream and discarded, and ReadMessage returns an
	// [*InboundTooLargeError] (wrapping ErrMessageTooLarge) with the
	// message's head and tail: the socket stays usable, so a page that makes
	// the browser send one huge message costs that message only.
	ReadMessage(ctx context.Context) ([]byte, error)
	// WriteMessage sends msg as one message. A msg above the socket's limit
	// fails with an error wrapping ErrMessageTooLarge before anything is
	// sent, and the socket stays usable.
	WriteMessage(ctx context.Context, msg []byte) error
	// Close closes the socket.
	Close() error
}

// ErrClosed is wrapped by every error that reports the connection (or the
// socket) as closed: calls in flight when it closes, and calls made after.
var ErrClosed = errors.New("cdp: connection closed")

// ErrMessageTooLarge is wrapped by the error for a message above the
// socket's limit: outbound, nothing was sent; inbound, the message was read
// to its end and discarded. Either way the connection stays usable.
var ErrMessageTooLarge = errors.New("cdp: message too large")

// ErrDetached is wrapped by the error of a call on a session that has been
// detached from its target, including calls in flight at the time.
var ErrDetached = errors.New("cdp: session detached")

// ProtocolError is an error response from the browser to a command.
type ProtocolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitzero"`
}

// Error implements error.
func (e *ProtocolError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("cdp: protocol error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("cdp: protocol error %d: %s", e.Code, e.Message)
}

// TooLargeError is the error for an outbound message above a socket's limit.
// It wraps [ErrMessageTooLarge].
type TooLargeError struct {
	Size, Limit int
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("cdp: message of %d bytes is above the limit of %d bytes", e.Size, e.Limit)
}

// Unwrap returns ErrMessageTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrMessageTooLarge }

// HandshakeError reports that the endpoint answered the WebSocket upgrade
// with an HTTP status instead of switching protocols. Chrome answers 403 when
// the person cancels its "Allow remote debugging?" prompt.
type HandshakeError struct {
	Status int
}

// Error implements error.
func (e *HandshakeError) Error() string {
	return fmt.Sprintf("cdp: dial: handshake refused with HTTP status %d", e.Status)
}

// Bounds of what a socket keeps of an inbound message above its limit.
const (
	// keptHead is the start of the message kept: the browser writes "id"
	// (a response) or "method" (an event) first.
	keptHead = 4 << 10
	// keptTail is the end of the message kept: the browser appends
	// "sessionId" last, after the params or result.
	keptTail = 256
)

// InboundTooLargeError reports an inbound message above a socket's read
// limit. The message was read to its end and discarded; Head and Tail are
// its first and last bytes, enough for a [Conn] to learn which command's
// reply or which session's event it was. It wraps [ErrMessageTooLarge]: the
// socket stays usable. When it fails a call, Method names the command.
type InboundTooLargeError struct {
	Size, Limit int64
	Head, Tail  []byte
	Method      string // the command whose reply it was, when known
}

// Error implements error. It holds sizes and the method only, never
// message content.
func (e *InboundTooLargeError) Error() string {
	what := "an inbound message"
	if e.Method != "" {
		what = "the reply to " + e.Method
	}
	return fmt.Sprintf("cdp: %s was %d bytes, above the limit of %d bytes; it was discarded", what, e.Size, e.Limit)
}

// Unwrap returns ErrMessageTooLarge.
func (e *InboundTooLargeError) Unwrap() error { return ErrMessageTooLarge }

// discard keeps the head and tail of an over-limit message while the rest
// streams past; its zero value is ready to use.
type discard struct {
	size int64
	head []byte
	tail []byte // the last keptTail bytes seen
}

func (d *discard) write(p []byte) {
	d.size += int64(len(p))
	if n := keptHead - len(d.head); n > 0 {
		d.head = append(d.head, p[:min(n, len(p))]...)
	}
	if len(p) >= keptTail {
		d.tail = append(d.tail[:0], p[len(p)-keptTail:]...)
		return
	}
	d.tail = append(d.tail, p...)
	if over := len(d.tail) - keptTail; over > 0 {
		d.tail = append(d.tail[:0], d.tail[over:]...)
	}
}

func (d *discard) err(limit int64) *InboundTooLargeError {
	return &InboundTooLargeError{Size: d.size, Limit: limit, Head: d.head, Tail: d.tail}
}

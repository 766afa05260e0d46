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
// or later a pipe or an extension bridge. Each message is one complete JSON
// text.
//
// One goroutine may call ReadMessage while another calls WriteMessage; Close
// may be called from any goroutine, is idempotent, and makes blocked calls
// return. A ReadMessage or WriteMessage that fails for any reason other than
// [ErrMessageTooLarge] leaves the socket unusable.
type Socket interface {
	// ReadMessage returns the next message. It fails when ctx ends, when the
	// socket closes, or when a message is larger than the socket's limit.
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

// ErrMessageTooLarge is wrapped by the error for an outbound message above
// the socket's limit. Nothing was sent and the connection stays usable.
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

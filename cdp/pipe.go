package cdp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// PipeOptions configures [NewPipeSocket]. The zero value uses the defaults.
type PipeOptions struct {
	// MaxMessageSize bounds an inbound message, in bytes; 0 means
	// DefaultMaxMessageSize. A larger message is read to its delimiter and
	// discarded, keeping only its head and tail: the read returns an
	// [*InboundTooLargeError] and the socket stays usable (the NUL
	// delimiter cannot occur inside a JSON text, so the stream stays in
	// step).
	MaxMessageSize int64
	// MaxWriteSize bounds an outbound message, in bytes; 0 means
	// DefaultMaxWriteSize. A larger message is refused with
	// ErrMessageTooLarge before anything is sent.
	MaxWriteSize int
}

// ErrNULInMessage is wrapped by the error for an outbound message that
// contains a NUL byte, the pipe's message delimiter: sent, it would reach
// the browser as two messages. JSON encoders escape NUL, so a message that
// has one is malformed. Nothing was sent.
var ErrNULInMessage = errors.New("cdp: message contains a NUL byte")

// pipeReadBuffer is the bufio buffer of a [PipeSocket]: most messages fit,
// larger ones are assembled from several fills.
const pipeReadBuffer = 64 << 10

// PipeSocket is a [Socket] over Chromium's --remote-debugging-pipe: the
// browser reads commands from its fd 3 and writes responses and events to
// its fd 4, each message one JSON text followed by a NUL byte. Nothing
// listens: only the holder of the pipe's ends can speak to the browser.
//
// Reads are bounded by the read limit while they are assembled, never
// after: past the limit the rest of the message streams past into a
// discard that keeps its head and tail. A read that ctx cancels keeps what
// it had read (or discarded), so the next read resumes the same message. A write that fails part-way leaves the browser
// with half a message, so the socket refuses every later write.
type PipeSocket struct {
	fromBrowser *os.File
	toBrowser   *os.File
	maxRead     int64
	maxWrite    int

	// Touched only by the reader (one ReadMessage at a time).
	br      *bufio.Reader
	partial []byte   // the start of a message whose read was cancelled
	over    *discard // set while a message above the limit streams past

	wmu    sync.Mutex
	wbuf   []byte // message plus delimiter, reused between writes
	broken bool   // a write failed part-way; guarded by wmu

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// NewPipeSocket returns a socket that reads the browser's messages from
// fromBrowser and writes commands to toBrowser, the parent's ends of two
// pipes made by [os.Pipe] (their other ends are the browser's fd 4 and fd 3).
// The socket owns both files: Close closes them, and a browser started with
// --remote-debugging-pipe exits when its command pipe closes.
func NewPipeSocket(fromBrowser, toBrowser *os.File, opts PipeOptions) *PipeSocket {
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxWriteSize <= 0 {
		opts.MaxWriteSize = DefaultMaxWriteSize
	}
	return &PipeSocket{
		fromBrowser: fromBrowser,
		toBrowser:   toBrowser,
		maxRead:     opts.MaxMessageSize,
		maxWrite:    opts.MaxWriteSize,
		br:          bufio.NewReaderSize(fromBrowser, pipeReadBuffer),
		closed:      make(chan struct{}),
	}
}

// ReadMessage returns the next message, without its NUL. Empty messages
// (two NULs in a row) carry nothing and are skipped.
func (s *PipeSocket) ReadMessage(ctx context.Context) ([]byte, error) {
	if s.isClosed() {
		return nil, fmt.Errorf("cdp: read: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cdp: read: %w", err)
	}
	stop := bindDeadline(ctx, s.fromBrowser.SetReadDeadline)
	defer stop()
	for {
		chunk, err := s.br.ReadSlice(0)
		if err == nil {
			chunk = chunk[:len(chunk)-1] // the delimiter
		}
		if s.over == nil && int64(len(s.partial))+int64(len(chunk)) > s.maxRead {
			s.over = &discard{}
			s.over.write(s.partial)
			s.partial = nil
		}
		if s.over != nil {
			s.over.write(chunk)
			switch {
			case err == nil:
				tooLarge := s.over.err(s.maxRead)
				s.over = nil
				return nil, tooLarge
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			default:
				return nil, s.failure("read", ctx, err)
			}
		}
		switch {
		case err == nil:
			var msg []byte
			if s.partial == nil {
				msg = bytes.Clone(chunk) // chunk is the reader's buffer
			} else {
				msg, s.partial = append(s.partial, chunk...), nil
			}
			if len(msg) == 0 {
				continue
			}
			return msg, nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.partial = append(s.partial, chunk...)
		default:
			// ReadSlice has consumed chunk: keep it for a resumed read.
			s.partial = append(s.partial, chunk...)
			return nil, s.failure("read", ctx, err)
		}
	}
}

// WriteMessage sends msg followed by the delimiter.
func (s *PipeSocket) WriteMessage(ctx context.Context, msg []byte) error {
	if len(msg) > s.maxWrite {
		return &TooLargeError{Size: len(msg), Limit: s.maxWrite}
	}
	if bytes.IndexByte(msg, 0) >= 0 {
		return fmt.Errorf("cdp: write: %w", ErrNULInMessage)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.isClosed() || s.broken {
		return fmt.Errorf("cdp: write: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cdp: write: %w", err)
	}
	stop := bindDeadline(ctx, s.toBrowser.SetWriteDeadline)
	defer stop()
	// One write per message: fewer syscalls, and a reader on the other end
	// sees the delimiter with the last byte.
	s.wbuf = append(append(s.wbuf[:0], msg...), 0)
	_, err := s.toBrowser.Write(s.wbuf)
	if cap(s.wbuf) > pipeReadBuffer {
		s.wbuf = nil // do not keep a rare large command's buffer
	}
	if err != nil {
		s.broken = true
		return s.failure("write", ctx, err)
	}
	return nil
}

// Close closes both ends; blocked reads and writes return [ErrClosed]. It
// is idempotent: later calls return the first call's result.
func (s *PipeSocket) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		err := errors.Join(s.toBrowser.Close(), s.fromBrowser.Close())
		if err != nil {
			s.closeErr = fmt.Errorf("cdp: close: %w", withoutPath(err))
		}
	})
	return s.closeErr
}

func (s *PipeSocket) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// failure turns a file error into one without a file name.
func (s *PipeSocket) failure(op string, ctx context.Context, err error) error {
	if s.isClosed() {
		return fmt.Errorf("cdp: %s: %w", op, ErrClosed)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Done() != nil {
		// Only ctx sets deadlines; its timer may fire a moment after the
		// file's, so wait for ctx to say which it was.
		<-ctx.Done()
		return fmt.Errorf("cdp: %s: %w", op, ctx.Err())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("cdp: %s: the browser closed the pipe: %w", op, ErrClosed)
	}
	return fmt.Errorf("cdp: %s: %w", op, withoutPath(err))
}

// withoutPath drops the file name from err, keeping the cause.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// bindDeadline gives the file ctx's deadline and expires it when ctx is
// cancelled. The returned stop waits for a cancellation already under way,
// so its late deadline cannot leak into the next call, which sets its own.
func bindDeadline(ctx context.Context, set func(time.Time) error) (stop func()) {
	dl, _ := ctx.Deadline() // zero: none
	set(dl)
	if ctx.Done() == nil {
		return func() {}
	}
	fired := make(chan struct{})
	cancel := context.AfterFunc(ctx, func() {
		set(past)
		close(fired)
	})
	return func() {
		if !cancel() {
			<-fired
		}
	}
}

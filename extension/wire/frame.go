// Package wire is version 1 of the extension bridge's protocol: frames of a
// 32-bit length and a strict I-JSON body (RFC 7493), little-endian on the
// Runner's loopback TCP and native-endian on Chrome's Native Messaging
// stdio, every length checked against its limit before a body is
// allocated.
//
// The package holds data and pure functions, plus [Reader], which keeps a
// frame's partial state across read timeouts. It knows nothing of peers,
// offers or CDP.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Version is the protocol version both ends must speak.
const Version = 1

// HeaderSize is the size of a frame's length prefix.
const HeaderSize = 4

// Errors a frame read or write wraps. Each one but a read timeout leaves
// the stream out of step: its owner closes it (fail closed).
var (
	// ErrFrameTooLarge: the length is above the limit for the frame.
	ErrFrameTooLarge = errors.New("wire: frame above its limit")
	// ErrEmptyFrame: a length of zero, which no message has.
	ErrEmptyFrame = errors.New("wire: empty frame")
	// ErrTruncated: the stream ended inside a frame.
	ErrTruncated = errors.New("wire: stream ended inside a frame")
)

// LimitError reports a frame whose length is above its limit, found from
// its header alone: nothing of its body was read or allocated. It wraps
// [ErrFrameTooLarge].
type LimitError struct {
	Size  uint64 // the length the frame declared (or a body's size on write)
	Limit int
}

// Error implements error. It holds sizes only.
func (e *LimitError) Error() string {
	return fmt.Sprintf("wire: frame of %d bytes is above the limit of %d bytes", e.Size, e.Limit)
}

// Unwrap returns ErrFrameTooLarge.
func (e *LimitError) Unwrap() error { return ErrFrameTooLarge }

// Reader reads frames from one stream. It is not safe for concurrent use:
// one goroutine reads.
//
// A read that fails with a timeout (an error for which
// errors.Is(err, os.ErrDeadlineExceeded)) keeps what it had read of the
// header or body: the next ReadFrame resumes the same frame, so a truncated
// body is never read as a new header. Any other error is sticky: every
// later ReadFrame returns it.
type Reader struct {
	r     io.Reader
	order binary.ByteOrder

	hdr   [HeaderSize]byte
	nhdr  int    // header bytes read of the current frame
	body  []byte // allocated once the header passed its limit; nil between frames
	nbody int    // body bytes read
	err   error  // sticky failure
}

// NewReader returns a Reader of r whose lengths are in order:
// binary.LittleEndian on TCP, binary.NativeEndian on Chrome's stdio.
func NewReader(r io.Reader, order binary.ByteOrder) *Reader {
	return &Reader{r: r, order: order}
}

// ReadFrame returns the next frame's body. limit is the largest body the
// caller accepts for this frame; it is compared with the length as soon as
// the header is complete and before the body is allocated, and a frame
// above it fails with a [*LimitError] (the stream is then out of step). A
// resumed frame keeps the limit it was admitted under.
//
// At a frame boundary the end of the stream is io.EOF; inside a frame it
// is an error wrapping [ErrTruncated].
func (fr *Reader) ReadFrame(limit int) ([]byte, error) {
	return fr.ReadFrameFunc(func() int { return limit })
}

// ReadFrameFunc is ReadFrame with the limit asked when the header is
// complete, not when the read starts: a reader that blocked waiting for a
// frame sees the limit as it is when the frame arrives (a response-sized
// frame becomes admissible once a command awaits one).
func (fr *Reader) ReadFrameFunc(limitOf func() int) ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	for fr.body == nil {
		n, err := fr.r.Read(fr.hdr[fr.nhdr:])
		fr.nhdr += n
		if fr.nhdr == HeaderSize {
			size, limit := fr.order.Uint32(fr.hdr[:]), limitOf()
			switch {
			case size == 0:
				return nil, fr.fail(ErrEmptyFrame)
			case limit < 0 || uint64(size) > uint64(limit):
				return nil, fr.fail(&LimitError{Size: uint64(size), Limit: limit})
			}
			fr.body = make([]byte, size)
			continue
		}
		if err != nil {
			return nil, fr.readErr(err, fr.nhdr > 0)
		}
	}
	for fr.nbody < len(fr.body) {
		n, err := fr.r.Read(fr.body[fr.nbody:])
		fr.nbody += n
		if fr.nbody == len(fr.body) {
			break
		}
		if err != nil {
			return nil, fr.readErr(err, true)
		}
	}
	body := fr.body
	fr.body, fr.nbody, fr.nhdr = nil, 0, 0
	return body, nil
}

// Partial reports whether a frame has been started and not finished.
func (fr *Reader) Partial() bool { return fr.nhdr > 0 }

func (fr *Reader) readErr(err error, inFrame bool) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err // resumable: the partial state stays
	}
	if errors.Is(err, io.EOF) {
		if inFrame {
			return fr.fail(fmt.Errorf("%w: %w", ErrTruncated, io.ErrUnexpectedEOF))
		}
		return fr.fail(io.EOF)
	}
	return fr.fail(err)
}

func (fr *Reader) fail(err error) error {
	fr.err = err
	fr.body = nil
	return err
}

// AppendFrame appends body as one frame (its length in order, then the
// body) to dst. A body above limit, or empty, is refused before anything
// is appended.
func AppendFrame(dst []byte, order binary.ByteOrder, body []byte, limit int) ([]byte, error) {
	switch {
	case len(body) == 0:
		return dst, ErrEmptyFrame
	case len(body) > limit || uint64(len(body)) > 0xFFFFFFFF:
		return dst, &LimitError{Size: uint64(len(body)), Limit: limit}
	}
	var hdr [HeaderSize]byte
	order.PutUint32(hdr[:], uint32(len(body)))
	return append(append(dst, hdr[:]...), body...), nil
}

// WriteFrame writes body as one frame with a single Write, so a frame is
// never interleaved with another writer's. A failed Write may have sent
// part of the frame: the stream is then out of step and its owner closes
// it.
func WriteFrame(w io.Writer, order binary.ByteOrder, body []byte, limit int) error {
	buf, err := AppendFrame(make([]byte, 0, HeaderSize+len(body)), order, body, limit)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

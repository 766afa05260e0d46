package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func frame(order binary.ByteOrder, body []byte) []byte {
	var hdr [4]byte
	order.PutUint32(hdr[:], uint32(len(body)))
	return append(hdr[:], body...)
}

func TestFrameBothByteOrders(t *testing.T) {
	t.Parallel()
	body := []byte(`{"t":"ev","ch":1,"method":"Log.entryAdded"}`)
	for _, tc := range []struct {
		name  string
		order binary.ByteOrder
	}{{"little", binary.LittleEndian}, {"big", binary.BigEndian}, {"native", binary.NativeEndian}} {
		var buf bytes.Buffer
		if err := WriteFrame(&buf, tc.order, body, MaxEvent); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), frame(tc.order, body)) {
			t.Fatalf("%s: header %x, want length %d in %s order", tc.name, buf.Bytes()[:4], len(body), tc.name)
		}
		got, err := NewReader(&buf, tc.order).ReadFrame(MaxEvent)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: ReadFrame = %q, %v", tc.name, got, err)
		}
	}
	// A little-endian length read as big-endian is a different length: the
	// order is part of the protocol, not guessed.
	le := frame(binary.LittleEndian, body)
	if _, err := NewReader(bytes.NewReader(le), binary.BigEndian).ReadFrame(MaxEvent); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("little-endian frame read big-endian = %v, want too large", err)
	}
}

// countingReader counts bytes handed out, to show a refused frame's body
// was never read.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestFrameLimitAtAndOverBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{MaxEvent, MaxCommand, MaxResponse} {
		at := bytes.Repeat([]byte("x"), limit)
		got, err := NewReader(bytes.NewReader(frame(binary.LittleEndian, at)), binary.LittleEndian).ReadFrame(limit)
		if err != nil || len(got) != limit {
			t.Fatalf("frame at limit %d: %d bytes, %v", limit, len(got), err)
		}
		over := frame(binary.LittleEndian, append(at, 'x'))
		cr := &countingReader{r: bytes.NewReader(over)}
		fr := NewReader(cr, binary.LittleEndian)
		_, err = fr.ReadFrame(limit)
		var le *LimitError
		if !errors.As(err, &le) || le.Size != uint64(limit+1) || le.Limit != limit {
			t.Fatalf("frame over limit %d: %v", limit, err)
		}
		if cr.n != HeaderSize {
			t.Fatalf("over limit %d: read %d bytes, want the header only", limit, cr.n)
		}
		if _, err2 := fr.ReadFrame(limit); !errors.Is(err2, ErrFrameTooLarge) {
			t.Fatalf("a failed reader must stay failed, got %v", err2)
		}
		if err := WriteFrame(io.Discard, binary.LittleEndian, append(at, 'x'), limit); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("write over limit %d: %v", limit, err)
		}
	}
	// A header claiming 4 GiB is refused without allocating it.
	huge := []byte{0xff, 0xff, 0xff, 0xff}
	if _, err := NewReader(bytes.NewReader(huge), binary.LittleEndian).ReadFrame(MaxResponse); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("4 GiB header: %v", err)
	}
}

func TestFrameMalformedStreams(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"empty frame":        {[]byte{0, 0, 0, 0}, ErrEmptyFrame},
		"truncated header":   {[]byte{5, 0}, ErrTruncated},
		"truncated body":     {append([]byte{5, 0, 0, 0}, "{}"...), ErrTruncated},
		"clean end of input": {nil, io.EOF},
	}
	for name, tc := range cases {
		_, err := NewReader(bytes.NewReader(tc.in), binary.LittleEndian).ReadFrame(MaxEvent)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if err := WriteFrame(io.Discard, binary.LittleEndian, nil, MaxEvent); !errors.Is(err, ErrEmptyFrame) {
		t.Errorf("writing an empty frame: %v", err)
	}
}

// TestFramePartialAcrossReadTimeouts cuts a frame into a header split in
// two and a body split in two, each piece arriving after a read deadline
// passed: every timeout keeps the partial state, so the body is never
// read as a new header.
func TestFramePartialAcrossReadTimeouts(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	// The body starts with bytes that, read as a header, would claim a
	// small frame: misreading it would yield a different message.
	body := []byte(`{"t":"ev","ch":7,"method":"Log.entryAdded","params":{"x":"` + strings.Repeat("y", 300) + `"}}`)
	whole := frame(binary.LittleEndian, body)
	pieces := [][]byte{whole[:2], whole[2:4], whole[4:40], whole[40:]}
	fr := NewReader(server, binary.LittleEndian)
	timeouts := 0
	for i, p := range pieces {
		if _, err := client.Write(p); err != nil {
			t.Fatal(err)
		}
		if i == len(pieces)-1 {
			break
		}
		// Wait until the piece has arrived and been consumed, then let the
		// deadline pass with nothing more to read.
		for {
			server.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			_, err := fr.ReadFrame(MaxEvent)
			if err == nil {
				t.Fatalf("a frame returned after piece %d of %d", i+1, len(pieces))
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("piece %d: %v, want a timeout", i+1, err)
			}
			timeouts++
			if !fr.Partial() {
				t.Fatalf("piece %d: the timeout dropped the partial frame", i+1)
			}
			if consumed(fr) >= offsetAfter(pieces, i) {
				break
			}
		}
	}
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := fr.ReadFrame(MaxEvent)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("after %d timeouts: %q, %v", timeouts, got, err)
	}
	if fr.Partial() {
		t.Fatal("a complete frame left partial state")
	}
}

func consumed(fr *Reader) int { return fr.nhdr + fr.nbody }

func offsetAfter(pieces [][]byte, i int) int {
	n := 0
	for _, p := range pieces[:i+1] {
		n += len(p)
	}
	return n
}

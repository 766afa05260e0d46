package bridge

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/internal/slow"
)

// blockedPeer is a verified peer whose extension reads nothing after ready,
// on socket buffers shrunk below one command frame: a frame that size
// blocks in the Runner's Write until the extension reads.
func blockedPeer(t *testing.T) (*Server, *fakeExtension, *peer) {
	t.Helper()
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	p := onlyPeer(t, s)
	if err := p.conn.(*net.TCPConn).SetWriteBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	if err := f.conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	return s, f, p
}

// command is a command frame carrying text, padded to about size bytes.
func command(text string, size int) *wire.Message {
	params, _ := json.Marshal(map[string]string{"text": text, "pad": strings.Repeat("x", size)})
	return &wire.Message{T: wire.KindCommand, ID: int64(len(text)), Ch: 1, Method: "Input.insertText", Params: params}
}

// frameStarted reads the header of the frame the Runner is writing (proof
// its Write began) and returns the body's length.
func frameStarted(t *testing.T, f *fakeExtension) int {
	t.Helper()
	var hdr [wire.HeaderSize]byte
	f.conn.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadFull(f.conn, hdr[:]); err != nil {
		t.Fatalf("the extension saw no frame start: %v", err)
	}
	return int(binary.LittleEndian.Uint32(hdr[:]))
}

// readBody reads n bytes of a frame's body and returns how many came
// before the stream ended.
func readBody(f *fakeExtension, n int) (int, error) {
	f.conn.SetReadDeadline(time.Now().Add(wait))
	got, err := io.ReadFull(f.conn, make([]byte, n))
	return got, err
}

// releasedWithin fails unless a write ended within releaseBound of since,
// reported as a ratio of the bound.
func releasedWithin(t *testing.T, since time.Time) {
	t.Helper()
	elapsed, bound := time.Since(since), slow.Scale(releaseBound)
	if elapsed > bound {
		t.Fatalf("released %v after its end: %.2f times its %v bound", elapsed, float64(elapsed)/float64(bound), bound)
	}
	t.Logf("released %v after its end: %.3f of its %v bound", elapsed, float64(elapsed)/float64(bound), bound)
}

// TestBlockedWriteHonoursContext: a send whose frame is blocked in the
// socket (a real TCP peer that never reads) returns when its caller's
// context ends, not at the 10 s write timeout; a frame cut partway closes
// the peer, so no later frame follows half of one; a caller that only
// waited for its turn leaves with nothing sent and the stream in step.
func TestBlockedWriteHonoursContext(t *testing.T) {
	big := 96 << 10 // several times what the shrunk buffers hold

	t.Run("cancel cuts the blocked frame and closes the peer", func(t *testing.T) {
		s, f, p := blockedPeer(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := make(chan error, 1)
		go func() { res <- p.write(ctx, command("first", big)) }()
		n := frameStarted(t, f)
		cancelled := time.Now()
		cancel()
		err := <-res
		releasedWithin(t, cancelled)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errPeerClosed) {
			t.Fatalf("the cut write ended with %v; want its cancellation and the peer closed", err)
		}
		lctx, lcancel := context.WithTimeout(context.Background(), wait)
		defer lcancel()
		if err := p.write(lctx, command("later", 16)); !errors.Is(err, errPeerClosed) {
			t.Fatalf("a later send after the cut frame: %v, want the peer closed", err)
		}
		got, err := readBody(f, n)
		if got >= n || err == nil {
			t.Fatalf("the extension read %d of the cut frame's %d bytes (%v); want it cut short by the close", got, n, err)
		}
		if st := s.Status(); st.Verified != 0 {
			t.Fatalf("%d verified peers after the cut frame, want 0", st.Verified)
		}
	})

	t.Run("deadline cuts the blocked frame", func(t *testing.T) {
		_, f, p := blockedPeer(t)
		const short = 200 * time.Millisecond // far below writeTimeout
		ctx, cancel := context.WithTimeout(context.Background(), short)
		defer cancel()
		start := time.Now()
		err := p.write(ctx, command("first", big))
		deadline := start.Add(short)
		if time.Now().Before(deadline) {
			t.Fatalf("returned %v before its %v deadline", time.Since(start), short)
		}
		releasedWithin(t, deadline)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errPeerClosed) {
			t.Fatalf("the write past its deadline ended with %v", err)
		}
		n := frameStarted(t, f)
		if got, err := readBody(f, n); got >= n || err == nil {
			t.Fatalf("the extension read %d of the cut frame's %d bytes (%v); want it cut short by the close", got, n, err)
		}
	})

	t.Run("a waiting caller leaves with nothing sent", func(t *testing.T) {
		s, f, p := blockedPeer(t)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		first := make(chan error, 1)
		go func() { first <- p.write(ctx, command("first", big)) }()
		n := frameStarted(t, f) // first holds the write turn

		wctx, wcancel := context.WithCancel(context.Background())
		waiting := make(chan error, 1)
		go func() { waiting <- p.write(wctx, command("waiting", 16)) }()
		cancelled := time.Now()
		wcancel()
		err := <-waiting
		releasedWithin(t, cancelled)
		if !errors.Is(err, context.Canceled) || errors.Is(err, errPeerClosed) {
			t.Fatalf("the waiting send ended with %v; want its cancellation, the peer open", err)
		}

		if got, err := readBody(f, n); got != n {
			t.Fatalf("the first frame: %d of %d bytes (%v)", got, n, err)
		}
		if err := <-first; err != nil {
			t.Fatalf("the first send, read through: %v", err)
		}
		if err := p.write(ctx, command("later", 16)); err != nil {
			t.Fatalf("a later send: %v", err)
		}
		m := f.recv() // the next whole frame: the later one, never the cancelled one
		var params struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Params, &params); err != nil || params.Text != "later" {
			t.Fatalf("after the cancelled send the extension got %q (%v), want the later send", params.Text, err)
		}
		if st := s.Status(); st.Verified != 1 {
			t.Fatalf("%d verified peers, want the peer still serving", st.Verified)
		}
	})
}

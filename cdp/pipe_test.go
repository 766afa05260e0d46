package cdp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp"
)

// pipeEnds is a PipeSocket and the browser's side of its two pipes: the
// test writes what the browser would send on toSock and reads what the
// socket sent from fromSock.
type pipeEnds struct {
	sock     *cdp.PipeSocket
	toSock   *os.File // the browser's fd 4
	fromSock *os.File // the browser's fd 3
}

func newPipeEnds(t *testing.T, opts cdp.PipeOptions) *pipeEnds {
	t.Helper()
	inR, inW, err := os.Pipe() // browser → socket
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // socket → browser
	if err != nil {
		t.Fatal(err)
	}
	e := &pipeEnds{sock: cdp.NewPipeSocket(inR, outW, opts), toSock: inW, fromSock: outR}
	t.Cleanup(func() {
		e.sock.Close()
		inW.Close()
		outR.Close()
	})
	return e
}

// readOne reads one message within a bound a loaded machine still meets.
func readOne(t *testing.T, s cdp.Socket) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.ReadMessage(ctx)
}

// assertNoPath fails when err's text could name a file: os.Pipe names its
// files "|0" and "|1", and a real path would have a slash.
func assertNoPath(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.ContainsAny(err.Error(), "|/") {
		t.Errorf("error %q names a file", err)
	}
}

// TestPipeFraming: messages arrive whole however the stream is cut: byte
// by byte, several in one write, one larger than the read buffer; empty
// frames carry nothing.
func TestPipeFraming(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	big := `{"id":3,"result":{"data":"` + strings.Repeat("x", 300<<10) + `"}}`
	want := []string{`{"id":1,"result":{}}`, `{"method":"A.b","params":{}}`, `{"id":2}`, big, `{"id":4}`}
	go func() { // ends when the stream is written or a write fails at cleanup
		w := e.toSock
		for _, b := range []byte(want[0] + "\x00") { // split across many reads
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
		}
		w.Write([]byte(want[1] + "\x00\x00" + want[2] + "\x00")) // two in one read, and an empty frame
		w.Write([]byte(big[:100]))
		w.Write([]byte(big[100:] + "\x00" + want[4][:3]))
		w.Write([]byte(want[4][3:] + "\x00"))
	}()
	for i, w := range want {
		got, err := readOne(t, e.sock)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if string(got) != w {
			t.Fatalf("message %d = %.60q (%d bytes), want %.60q (%d bytes)", i, got, len(got), w, len(w))
		}
	}
}

// TestPipeMessagesAreCopies: a returned message is the caller's; later
// reads do not overwrite it.
func TestPipeMessagesAreCopies(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	e.toSock.Write([]byte(`{"id":1}` + "\x00" + `{"id":2}` + "\x00"))
	first, err := readOne(t, e.sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readOne(t, e.sock); err != nil {
		t.Fatal(err)
	}
	if string(first) != `{"id":1}` {
		t.Errorf("first message became %q after the second read", first)
	}
}

// TestPipeReadLimit: a message above the limit is read to its delimiter
// and discarded, keeping its head and tail, with a typed error that leaves
// the socket usable; a read cancelled in the middle of the discard resumes
// it; one exactly at the limit passes, and so does the message after.
func TestPipeReadLimit(t *testing.T) {
	const limit = 100 << 10 // above the 64 KiB read buffer, so the check spans fills
	e := newPipeEnds(t, cdp.PipeOptions{MaxMessageSize: limit})
	at := bytes.Repeat([]byte("a"), limit)
	head := `{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":"`
	tail := `"}]},"sessionId":"ABCDEF0123"}`
	over := head + strings.Repeat("b", 3*limit) + tail
	go func() {
		e.toSock.Write(append(at, 0))
		// The oversized message arrives in two parts, with a cancelled
		// read in between.
		e.toSock.Write([]byte(over[:2*limit]))
	}()
	got, err := readOne(t, e.sock)
	if err != nil || len(got) != limit {
		t.Fatalf("message at the limit: %d bytes, %v", len(got), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := e.sock.ReadMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read of half an oversized message = %v, want its deadline", err)
	}
	go e.toSock.Write([]byte(over[2*limit:] + "\x00" + `{"id":9}` + "\x00"))
	_, err = readOne(t, e.sock)
	tl, ok := errors.AsType[*cdp.InboundTooLargeError](err)
	if !ok || !errors.Is(err, cdp.ErrMessageTooLarge) || errors.Is(err, cdp.ErrClosed) {
		t.Fatalf("message above the limit: %v, want an *InboundTooLargeError wrapping ErrMessageTooLarge", err)
	}
	if tl.Limit != limit || tl.Size != int64(len(over)) {
		t.Errorf("size %d, limit %d; want %d, %d", tl.Size, tl.Limit, len(over), limit)
	}
	if !strings.HasPrefix(over, string(tl.Head)) || !strings.HasPrefix(string(tl.Head), head) || !strings.HasSuffix(string(tl.Tail), tail) || len(tl.Head)+len(tl.Tail) > 5<<10 {
		t.Errorf("kept %d head bytes %.80q and tail %q", len(tl.Head), tl.Head, tl.Tail)
	}
	if got, err := readOne(t, e.sock); err != nil || string(got) != `{"id":9}` {
		t.Fatalf("message after the discarded one = %q, %v", got, err)
	}
	if err := e.sock.WriteMessage(context.Background(), []byte(`{}`)); err != nil {
		t.Errorf("write after the discard = %v", err)
	}
}

// TestPipeWriteRefusals: a message above the write limit, or one holding a
// NUL (which would reach the browser as two messages), is refused before
// anything is sent, and the socket stays usable.
func TestPipeWriteRefusals(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{MaxWriteSize: 64})
	ctx := context.Background()
	err := e.sock.WriteMessage(ctx, bytes.Repeat([]byte("x"), 65))
	var tl *cdp.TooLargeError
	if !errors.Is(err, cdp.ErrMessageTooLarge) || !errors.As(err, &tl) || tl.Size != 65 || tl.Limit != 64 {
		t.Errorf("oversized write = %v, want a *TooLargeError 65/64", err)
	}
	if err := e.sock.WriteMessage(ctx, []byte(`{"id":1,"method":"A.b"}`+"\x00"+`{"id":2,"method":"Evil.x"}`)); !errors.Is(err, cdp.ErrNULInMessage) {
		t.Errorf("write with a NUL = %v, want ErrNULInMessage", err)
	}
	if err := e.sock.WriteMessage(ctx, []byte(`{"id":3}`)); err != nil {
		t.Fatalf("write after refusals: %v", err)
	}
	e.sock.Close() // the browser's side then reads to EOF
	sent, err := io.ReadAll(e.fromSock)
	if err != nil {
		t.Fatal(err)
	}
	if string(sent) != `{"id":3}`+"\x00" {
		t.Errorf("the browser received %q, want only the valid message", sent)
	}
}

// TestPipeCloseUnblocks: Close ends a blocked read and a blocked write
// (the browser reads nothing, so the pipe fills) with ErrClosed, and is
// idempotent.
func TestPipeCloseUnblocks(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	readErr := make(chan error, 1)
	go func() {
		_, err := e.sock.ReadMessage(context.Background())
		readErr <- err
	}()
	writeErr := make(chan error, 1)
	go func() {
		chunk := bytes.Repeat([]byte("w"), 1<<20)
		for {
			if err := e.sock.WriteMessage(context.Background(), chunk); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	// Wait until the write blocks: the pipe holds far less than 1 MiB.
	if _, err := e.fromSock.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := e.sock.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, ch := range map[string]chan error{"read": readErr, "write": writeErr} {
		select {
		case err := <-ch:
			if !errors.Is(err, cdp.ErrClosed) {
				t.Errorf("blocked %s after Close = %v, want ErrClosed", name, err)
			}
			assertNoPath(t, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("blocked %s still blocked 10 s after Close", name)
		}
	}
	if err := e.sock.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestPipeReadContext: a cancelled read returns ctx's error and keeps what
// it had read, so the next read returns the whole message; a deadline is
// reported as such.
func TestPipeReadContext(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	e.toSock.Write([]byte(`{"id":7,"res`))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.sock.ReadMessage(ctx)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled read = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled read did not return")
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if _, err := e.sock.ReadMessage(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read past its deadline = %v, want context.DeadlineExceeded", err)
	}
	e.toSock.Write([]byte(`ult":{}}` + "\x00"))
	got, err := readOne(t, e.sock)
	if err != nil || string(got) != `{"id":7,"result":{}}` {
		t.Fatalf("resumed read = %q, %v; want the whole message", got, err)
	}
}

// TestPipeWriteContext: a write that ctx ends while the pipe is full may
// have sent part of a message, so the socket refuses later writes.
func TestPipeWriteContext(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	// The context ends only once the browser's end has received part of the
	// message, so the write is partial however slow the machine: a clock
	// started before the write may run out before it begins, and then
	// nothing is broken.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(e.fromSock, make([]byte, 1))
		cancel()
		started <- err
	}()
	err := e.sock.WriteMessage(ctx, bytes.Repeat([]byte("w"), 2<<20)) // the pipe holds far less
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("write cancelled part-way = %v, want context.Canceled", err)
	}
	if err := <-started; err != nil {
		t.Fatalf("the browser's end read nothing: %v", err)
	}
	if err := e.sock.WriteMessage(context.Background(), []byte(`{"id":1}`)); !errors.Is(err, cdp.ErrClosed) {
		t.Errorf("write after a partial write = %v, want ErrClosed", err)
	}
}

// TestPipeBrowserGone: the browser closing its end is ErrClosed for the
// reader and the writer, and no error names a file.
func TestPipeBrowserGone(t *testing.T) {
	e := newPipeEnds(t, cdp.PipeOptions{})
	e.toSock.Write([]byte(`{"id":1,"trunc`)) // the browser died mid-message
	e.toSock.Close()
	e.fromSock.Close()
	_, err := readOne(t, e.sock)
	if !errors.Is(err, cdp.ErrClosed) {
		t.Errorf("read after the browser closed = %v, want ErrClosed", err)
	}
	assertNoPath(t, err)
	err = e.sock.WriteMessage(context.Background(), []byte(`{"id":2}`))
	if !errors.Is(err, cdp.ErrClosed) {
		t.Errorf("write after the browser closed = %v, want ErrClosed", err)
	}
	assertNoPath(t, err)
}

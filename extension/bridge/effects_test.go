package bridge

import (
	"context"
	"errors"
	"testing"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/extension/wire"
)

// TestFakeExtension_LostAcknowledgement cuts the peer while an input
// command is in flight: the call fails as a lost session (the route ended
// with the peer), never as a browser's refusal, which the page surface reports as outcome_unknown
// (the input may have happened; it is not replayed).
func TestFakeExtension_LostAcknowledgement(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	id := f.share(1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := make(chan *Socket, 1)
	go func() { sk, _ := s.Attach(ctx, id); res <- sk }()
	ctl := f.recv()
	f.answer(ctl.ID, map[string]string{"targetId": "T1"})
	conn := cdp.NewConn(<-res, cdp.ConnOptions{})
	defer conn.Close()
	sess, err := conn.AttachTarget(ctx, "T1")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- sess.Call(ctx, "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1, "button": "left", "clickCount": 1}, nil)
	}()
	if m := f.recv(); m.T != wire.KindCommand || m.Method != "Input.dispatchMouseEvent" {
		t.Fatalf("the extension got %s %s", m.T, m.Method)
	}
	f.conn.Close() // the acknowledgement never comes
	err = <-done
	var pe *cdp.ProtocolError
	if !(errors.Is(err, cdp.ErrClosed) || errors.Is(err, cdp.ErrDetached)) || errors.As(err, &pe) {
		t.Fatalf("the in-flight input ended with %v; want a lost session or connection, not a refusal", err)
	}
}

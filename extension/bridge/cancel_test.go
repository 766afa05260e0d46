package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
)

// releaseBound bounds how long a send cancelled in flight may keep its
// caller, stretched by the machine's load.
const releaseBound = 300 * time.Millisecond

// releasedAtCancel fails unless a send cancelled at cancelled ended with
// the cancellation, within releaseBound of it (reported as a ratio of the
// bound). The send is cancelled only once the extension holds its frame,
// so the frame was sent whatever the machine's load.
func releasedAtCancel(t *testing.T, err error, cancelled time.Time) {
	t.Helper()
	elapsed := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled send ended with %v, want its cancellation", err)
	}
	bound := slow.Scale(releaseBound)
	if elapsed > bound {
		t.Fatalf("released %v after the cancel: %.2f times its %v bound", elapsed, float64(elapsed)/float64(bound), bound)
	}
	t.Logf("released %v after the cancel: %.3f of its %v bound", elapsed, float64(elapsed)/float64(bound), bound)
}

// onlyPeer returns the server's one peer.
func onlyPeer(t *testing.T, s *Server) *peer {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.peers) != 1 {
		t.Fatalf("%d peers, want 1", len(s.peers))
	}
	for p := range s.peers {
		return p
	}
	return nil
}

// TestFakeExtension_SendCancelledInFlight cancels a send whose frame the
// extension received and has not answered. The caller is released at the
// cancel; the frame went out once and is never sent again (no effect is
// retried: the extension may have acted on it); its late answer reaches
// nobody and leaks nothing; the peer goes on serving.
func TestFakeExtension_SendCancelledInFlight(t *testing.T) {
	t.Run("attach control", func(t *testing.T) {
		s, _ := newServer(t, Options{})
		f := connect(t, s)
		id := f.share(1)
		res := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _, err := s.Attach(ctx, id); res <- err }()
		ctl := f.recv()
		if ctl.T != wire.KindControl || ctl.Op != wire.OpAttach {
			t.Fatalf("the extension got %s %s, want the attach control", ctl.T, ctl.Op)
		}
		cancelled := time.Now()
		cancel()
		releasedAtCancel(t, <-res, cancelled)
		p := onlyPeer(t, s)
		if p.awaiting() {
			t.Fatal("the cancelled control still holds a command slot")
		}
		if st := s.Status(); st.Routes != 0 {
			t.Fatalf("%d routes after a cancelled attach", st.Routes)
		}
		// The offer was consumed by the attempt: it is not offered again,
		// and the attach is not sent again.
		octx, ocancel := context.WithTimeout(context.Background(), wait)
		defer ocancel()
		if _, err := s.Attach(octx, id); !fsm.IsCode(err, fsm.NotFound) {
			t.Fatalf("the consumed offer attached again: %v", err)
		}
		// The late answer reaches nobody: no route appears.
		f.answer(ctl.ID, map[string]string{"targetId": "T1"})
		next := f.share(2) // a barrier: the answer was read; fails on any other frame (a resent control)
		if st := s.Status(); st.Routes != 0 || st.Verified != 1 {
			t.Fatalf("after the late answer: %d routes, %d verified peers; want 0 and 1", st.Routes, st.Verified)
		}
		go func() { _, err := s.Attach(octx, next); res <- err }()
		ctl2 := f.recv()
		if ctl2.Op != wire.OpAttach || ctl2.Offer != next {
			t.Fatalf("the next attach sent %s for offer %q", ctl2.Op, ctl2.Offer)
		}
		f.answer(ctl2.ID, map[string]string{"targetId": "T2"})
		if err := <-res; err != nil {
			t.Fatalf("an attach after the cancelled one: %v", err)
		}
	})

	t.Run("page command", func(t *testing.T) {
		s, _ := newServer(t, Options{})
		f := connect(t, s)
		id := f.share(1)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		socks := make(chan *Socket, 1)
		go func() { sk, _ := s.Attach(ctx, id); socks <- sk }()
		ctl := f.recv()
		f.answer(ctl.ID, map[string]string{"targetId": "T1"})
		sk := <-socks
		if sk == nil {
			t.Fatal("attach failed")
		}
		conn := cdp.NewConn(sk, cdp.ConnOptions{})
		defer conn.Close()
		sess, err := conn.AttachTarget(ctx, "T1")
		if err != nil {
			t.Fatal(err)
		}
		p := onlyPeer(t, s)

		res := make(chan error, 1)
		cctx, ccancel := context.WithCancel(context.Background())
		defer ccancel()
		go func() {
			res <- sess.Call(cctx, "Input.insertText", map[string]any{"text": "first"}, nil)
		}()
		first := f.recv()
		if first.T != wire.KindCommand || first.Method != "Input.insertText" {
			t.Fatalf("the extension got %s %s", first.T, first.Method)
		}
		cancelled := time.Now()
		ccancel()
		releasedAtCancel(t, <-res, cancelled)
		// The command is still the extension's: it may run, so it counts
		// toward the commands in flight until answered.
		if !p.awaiting() {
			t.Fatal("a command the extension holds no longer counts as in flight")
		}
		f.answer(first.ID, map[string]string{"echo": "first"})

		var out struct {
			Echo string `json:"echo"`
		}
		go func() {
			res <- sess.Call(ctx, "Input.insertText", map[string]any{"text": "second"}, &out)
		}()
		second := f.recv()
		var params struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(second.Params, &params); err != nil || second.Method != "Input.insertText" || params.Text != "second" {
			t.Fatalf("after the cancelled command the extension got %s %s; want the second command, not a replay", second.Method, second.Params)
		}
		f.answer(second.ID, map[string]string{"echo": "second"})
		if err := <-res; err != nil || out.Echo != "second" {
			t.Fatalf("the next command got %q, %v; want its own answer, not the late one", out.Echo, err)
		}
		if p.awaiting() {
			t.Fatal("commands still in flight after both were answered")
		}
		if n := s.budget.inUse(); n != 0 {
			t.Fatalf("%d bytes still charged: the late answer leaked its budget", n)
		}
		f.share(2) // still served
		if rt := onlyRoute(sk); rt == nil || rt.state() != RouteOpen || sk.Reason() != "" || s.Status().Verified != 1 {
			t.Fatal("the cancelled command ended the route or the peer")
		}
		var wg sync.WaitGroup
		f.serve(&served{}, &wg) // answers the detach of the deferred Close
		t.Cleanup(func() { f.conn.Close(); wg.Wait() })
	})
}

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/lease"
)

// TestFakeExtension_SixtyFourRoutes attaches 64 shared tabs (16 offers at a
// time) and shows the 65th attach is refused without consuming its offer.
func TestFakeExtension_SixtyFourRoutes(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	var ids []string
	for tab := int64(1); tab <= wire.MaxChannels+1; tab++ {
		ids = append(ids, f.share(tab))
		if len(ids) == lease.MaxLiveOffers || tab == wire.MaxChannels+1 {
			break
		}
	}
	var wg sync.WaitGroup
	f.serve(&served{}, &wg)
	t.Cleanup(func() { f.conn.Close(); wg.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	// Shares after serve started are answered by serve's loop, so offers
	// are read from Offers() from here on.
	shareMore := func(from, to int64) {
		for tab := from; tab <= to; tab++ {
			f.sendMsg(&wire.Message{T: wire.KindShare, Tab: tab, Target: "T", URL: "https://shop.test/"})
		}
		// The peer's reader is recording them.
		waitfor.Until(t, wait, "the shared tabs offered", func() bool { return len(s.Offers()) >= int(to-from+1) })
	}
	attached := 0
	attachAll := func() {
		for _, o := range s.Offers() {
			if _, err := s.Attach(ctx, o.ID); err != nil {
				t.Fatalf("attach %d: %v", attached+1, err)
			}
			attached++
		}
	}
	for _, id := range ids {
		if _, err := s.Attach(ctx, id); err != nil {
			t.Fatal(err)
		}
		attached++
	}
	for round := int64(1); attached < wire.MaxChannels; round++ {
		shareMore(round*16+1, round*16+16)
		attachAll()
	}
	if s.Status().Routes != wire.MaxChannels {
		t.Fatalf("%d routes, want %d", s.Status().Routes, wire.MaxChannels)
	}
	shareMore(1000, 1000)
	offers := s.Offers()
	if len(offers) != 1 {
		t.Fatalf("%d offers waiting", len(offers))
	}
	if _, err := s.Attach(ctx, offers[0].ID); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("the 65th attach: %v", err)
	}
	if len(s.Offers()) != 1 {
		t.Fatal("a refused attach consumed its offer")
	}
}

// TestFakeExtension_DefaultByteBudgetAtAndOver queues events nobody reads
// up to exactly the 16 MiB budget (the route stays open), then one more
// byte's worth (the route turns lossy; the peer stays).
func TestFakeExtension_DefaultByteBudgetAtAndOver(t *testing.T) {
	s, _ := newServer(t, Options{MaxRouteEvents: 1 << 20})
	f := connect(t, s)
	id := f.share(1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := make(chan *Socket, 1)
	go func() { sk, _ := s.Attach(ctx, id); res <- sk }()
	ctl := f.recv()
	f.answer(ctl.ID, map[string]string{"targetId": "T1"})
	sk := <-res
	sk.WriteMessage(ctx, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
	sk.ReadMessage(ctx) // the attach answer: nothing queued now
	rt := onlyRoute(sk)
	// The queued form of an event is its CDP message; size one so that a
	// whole number of them fills the budget exactly.
	event := func(pad int) (*wire.Message, int) {
		params := json.RawMessage(`{"p":"` + strings.Repeat("x", pad) + `"}`)
		cdpForm, _ := json.Marshal(struct {
			Method    string          `json:"method"`
			Params    json.RawMessage `json:"params,omitempty"`
			SessionID string          `json:"sessionId"`
		}{"Log.entryAdded", params, rt.session})
		return &wire.Message{T: wire.KindEvent, Ch: rt.ch, Method: "Log.entryAdded", Params: params}, len(cdpForm)
	}
	_, base := event(0)
	const n = 256
	per := wire.MaxQueuedBytes / n
	m, size := event(per - base)
	if size*n != wire.MaxQueuedBytes {
		t.Fatalf("sized %d x %d = %d", size, n, size*n)
	}
	frame, _ := json.Marshal(m) // encoded once: the flood is the Runner's work, not the test's
	for i := 0; i < n; i++ {
		f.sendRaw(frame)
	}
	f.share(2) // a barrier: the reader handled every event before it
	if got := s.budget.inUse(); got != wire.MaxQueuedBytes || rt.owner.State() != RouteOpen {
		t.Fatalf("at the bound: %d bytes queued, route %s", got, rt.owner.State())
	}
	small, _ := event(0)
	f.sendMsg(small)
	f.share(3)
	if rt.owner.State() != RouteLossy || s.Status().Verified != 1 {
		t.Fatalf("over the bound: route %s, %d verified peers", rt.owner.State(), s.Status().Verified)
	}
}

// TestFakeExtension_CommandLimitOnTheSocket refuses a command above 256
// KiB before anything is sent, and the socket stays usable.
func TestFakeExtension_CommandLimitOnTheSocket(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	sv := &served{}
	sock, _, sess := attachConn(t, s, f, sv)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	big := strings.Repeat("x", wire.MaxCommand)
	err := sess.Call(ctx, "Runtime.evaluate", map[string]any{"expression": big}, nil)
	if !errors.Is(err, cdp.ErrMessageTooLarge) {
		t.Fatalf("a command above 256 KiB: %v", err)
	}
	// Just under the limit once wrapped in its frame: sent.
	fits := strings.Repeat("x", wire.MaxCommand-200)
	if err := sess.Call(ctx, "Runtime.evaluate", map[string]any{"expression": fits}, nil); err != nil {
		t.Fatalf("a command under the limit: %v", err)
	}
	if got := sv.methods(); len(got) != 1 {
		t.Fatalf("the extension saw %d commands, want only the one that fits", len(got))
	}
	_ = sock
}

package bridge

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/lease"
)

func TestFakeExtension_Handshake(t *testing.T) {
	s, state := newServer(t, Options{})
	connect(t, s) // the right token, instance and origin: ready

	other, _ := rendezvous.NewRecord(1)
	cases := map[string]*wire.Message{
		"wrong token":    {T: wire.KindAuth, V: 1, Token: other.Token, Instance: s.rec.Instance, Origin: testOrigin},
		"stale instance": {T: wire.KindAuth, V: 1, Token: s.rec.Token, Instance: other.Instance, Origin: testOrigin},
		"wrong origin":   {T: wire.KindAuth, V: 1, Token: s.rec.Token, Instance: s.rec.Instance, Origin: "chrome-extension://pppppppppppppppppppppppppppppppp/"},
	}
	for name, m := range cases {
		f := dial(t, s)
		f.sendMsg(m)
		if !f.closedByRunner() {
			t.Errorf("%s: not closed", name)
		}
	}
	// A stale record (an earlier Runner's) does not authenticate with this
	// one, even though it was once valid.
	if err := rendezvous.WriteRecord(state, other); err != nil {
		t.Fatal(err)
	}
	f := dial(t, s)
	f.sendMsg(&wire.Message{T: wire.KindAuth, V: 1, Token: other.Token, Instance: other.Instance, Origin: testOrigin})
	if !f.closedByRunner() {
		t.Error("an earlier Runner's record authenticated")
	}
	if st := s.Status(); st.Verified != 1 {
		t.Errorf("verified peers = %d, want 1", st.Verified)
	}
}

// TestFakeExtension_HandshakeBoundAndFifthPeer fills the four peer slots
// with silent connections (unverified handshakes count), shows a fifth
// that authenticates takes the oldest one's slot at once (the oldest is
// closed, the fifth is ready), and that the other silent ones are closed
// by the two-second bound, after which a peer is admitted again. One of
// them sends half a frame: partial state at the deadline fails too.
func TestFakeExtension_HandshakeBoundAndFifthPeer(t *testing.T) {
	s, _ := newServer(t, Options{})
	var silent []*fakeExtension
	for i := 0; i < wire.MaxPeers; i++ {
		silent = append(silent, dial(t, s))
		for s.Status().Peers != i+1 {
			time.Sleep(time.Millisecond) // accepted in dial order: the first is the oldest
		}
	}
	silent[1].conn.Write([]byte{10, 0, 0, 0, '{'}) // half an auth frame
	start := time.Now()
	// The fifth takes the oldest handshake's slot at once (long before the
	// handshake bound).
	fifth := dial(t, s)
	fifth.sendMsg(&wire.Message{T: wire.KindAuth, V: 1, Token: s.rec.Token, Instance: s.rec.Instance, Origin: testOrigin})
	if m := fifth.recv(); m.T != wire.KindReady {
		t.Fatalf("the fifth's first frame %s, want ready", m.T)
	}
	if !silent[0].closedByRunner() {
		t.Fatal("the oldest unfinished handshake kept its slot")
	}
	if took := time.Since(start); took >= wire.HandshakeTimeout {
		t.Fatalf("the oldest handshake was closed after %v, not at once", took)
	}
	for i, f := range silent[1:] {
		if !f.closedByRunner() {
			t.Fatalf("silent peer %d was not closed", i+1)
		}
	}
	if took := time.Since(start); took < wire.HandshakeTimeout-100*time.Millisecond {
		t.Fatalf("silent peers closed after %v, before the %v bound", took, wire.HandshakeTimeout)
	}
	fifth.conn.Close()
	// The slots are free again.
	// The reader goroutines are finishing their close.
	waitfor.Until(t, wait, "every peer slot free", func() bool { return s.Status().Peers == 0 })
	connect(t, s)
}

func TestFakeExtension_SixteenOffersThenRefused(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	ids := map[string]bool{}
	for tab := int64(1); tab <= lease.MaxLiveOffers; tab++ {
		ids[f.share(tab)] = true
	}
	if len(ids) != lease.MaxLiveOffers || len(s.Offers()) != lease.MaxLiveOffers {
		t.Fatalf("%d distinct offers, %d listed; want %d", len(ids), len(s.Offers()), lease.MaxLiveOffers)
	}
	// Sharing an offered tab again keeps its offer (no new one).
	if id := f.share(3); !ids[id] {
		t.Fatal("repeated Share minted a new offer")
	}
	f.sendMsg(&wire.Message{T: wire.KindShare, Tab: 17, Target: "T17", URL: "https://shop.test/"})
	m := f.recv()
	if m.T != wire.KindEnded || m.Reason != wire.ReasonOfferRefused || m.Tab != 17 {
		t.Fatalf("17th offer answered %s %s", m.T, m.Reason)
	}
	if len(s.Offers()) != lease.MaxLiveOffers {
		t.Fatal("a 17th offer was listed")
	}
}

func TestFakeExtension_OfferExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, _ := newServer(t, Options{Now: clock})
	f := connect(t, s)
	id := f.share(5)
	mu.Lock()
	now = now.Add(lease.OfferTTL - time.Second)
	mu.Unlock()
	if len(s.Offers()) != 1 {
		t.Fatal("the offer expired early")
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if len(s.Offers()) != 0 {
		t.Fatal("an offer outlived ten minutes")
	}
	m := f.recv()
	if m.T != wire.KindEnded || m.Offer != id || m.Reason != wire.ReasonOfferExpired {
		t.Fatalf("the extension was told %s %s, want ended offer_expired", m.T, m.Reason)
	}
	_, err := s.Attach(context.Background(), id)
	if r, ok := fsm.AsRefusal(err); !ok || r.Code != fsm.NotFound {
		t.Fatalf("attach of an expired offer: %v", err)
	}
}

// attachConn shares tab 7, attaches it and returns a Conn and the page
// session over the bridge Socket, the fake extension answering.
func attachConn(t *testing.T, s *Server, f *fakeExtension, sv *served) (*Socket, *cdp.Conn, *cdp.Session) {
	t.Helper()
	id := f.share(7)
	var wg sync.WaitGroup
	f.serve(sv, &wg)
	t.Cleanup(func() { f.conn.Close(); wg.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sock, err := s.Attach(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	conn := cdp.NewConn(sock, cdp.ConnOptions{})
	t.Cleanup(func() { conn.Close() })
	res, err := cdproto.Call(ctx, conn.Browser(), target.GetTargets, target.GetTargetsParams{})
	if err != nil || len(res.TargetInfos) != 1 || res.TargetInfos[0].TargetID != "TARGET7" || res.TargetInfos[0].URL != "https://shop.test/" {
		t.Fatalf("Target.getTargets = %+v, %v", res, err)
	}
	sess, err := conn.AttachTarget(ctx, "TARGET7")
	if err != nil {
		t.Fatal(err)
	}
	return sock, conn, sess
}

func TestFakeExtension_SocketCarriesThePageSurfaceOnly(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	sv := &served{}
	_, conn, sess := attachConn(t, s, f, sv)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out struct {
		Echo string `json:"echo"`
	}
	if err := sess.Call(ctx, "Runtime.evaluate", map[string]any{"expression": "1", "returnByValue": true}, &out); err != nil || out.Echo != "Runtime.evaluate" {
		t.Fatalf("Runtime.evaluate through the bridge: %+v, %v", out, err)
	}
	refused := []struct {
		sess   *cdp.Session
		method string
		params any
	}{
		{conn.Browser(), "Browser.close", nil},
		{conn.Browser(), "Storage.getCookies", nil},
		{conn.Browser(), "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false}},
		{sess, "Network.getAllCookies", nil},
		{sess, "Network.getResponseBody", map[string]any{"requestId": "1"}},
		{sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "x"}},
		{sess, "Page.navigate", map[string]any{"url": "https://shop.test/", "frameId": "F2"}},
		{sess, "Page.createIsolatedWorld", map[string]any{"frameId": "F1", "grantUniveralAccess": true}},
		{sess, "Runtime.evaluate", map[string]any{"expression": "1", "includeCommandLineAPI": true}},
		{sess, "Browser.close", nil},
		{sess, "Target.createTarget", map[string]any{"url": "https://shop.test/"}},
	}
	for _, c := range refused {
		err := c.sess.Call(ctx, c.method, c.params, nil)
		var pe *cdp.ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s (session %q): %v, want a protocol error", c.method, c.sess.ID(), err)
		}
	}
	// Target.setAutoAttach on the page session is answered, attaching nothing.
	if err := sess.Call(ctx, "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": true}, nil); err != nil {
		t.Fatalf("setAutoAttach on the page session: %v", err)
	}
	got := sv.methods()
	if strings.Join(got, ",") != "Runtime.evaluate" {
		t.Fatalf("the extension was sent %v; only the allowed command may reach it", got)
	}
}

func TestFakeExtension_EventsAndLossMarker(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	sock, _, sess := attachConn(t, s, f, &served{})
	logs, stop := sess.Subscribe("Log.entryAdded")
	defer stop()
	rt := sock.routes[1]
	f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: rt.ch, Method: "Log.entryAdded", Params: json.RawMessage(`{"entry":{"text":"hello"}}`)})
	select {
	case ev := <-logs:
		if !strings.Contains(string(ev), "hello") {
			t.Fatalf("event params %s", ev)
		}
	case <-time.After(wait):
		t.Fatal("the event did not arrive")
	}
	if sess.Dropped() != 0 {
		t.Fatal("dropped before any loss")
	}
	f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: rt.ch, Method: wire.DiscardedMethod, Params: json.RawMessage(`{"method":"Runtime.consoleAPICalled","count":1}`)})
	f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: rt.ch, Method: "Log.entryAdded", Params: json.RawMessage(`{"entry":{"text":"after"}}`)})
	select {
	case <-logs:
	case <-time.After(wait):
		t.Fatal("the event after the marker did not arrive")
	}
	if sess.Dropped() != 1 {
		t.Fatalf("dropped = %d after one loss marker, want 1", sess.Dropped())
	}
}

// TestFakeExtension_RouteOverflowClosesOnlyThatRoute floods one route's
// events with nobody reading: it turns lossy (one marker, the rest
// discarded), the peer and the other route go on, and it opens again once
// drained.
func TestFakeExtension_RouteOverflowClosesOnlyThatRoute(t *testing.T) {
	s, _ := newServer(t, Options{MaxRouteEvents: 4})
	f := connect(t, s)
	a, b := f.share(1), f.share(2)
	var wg sync.WaitGroup
	f.serve(&served{}, &wg)
	t.Cleanup(func() { f.conn.Close(); wg.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sa, err := s.Attach(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := s.Attach(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range []*Socket{sa, sb} {
		for _, rt := range sk.routes {
			attach := `{"id":1,"method":"Target.attachToTarget","params":{"targetId":"` + rt.target + `","flatten":true}}`
			if err := sk.WriteMessage(ctx, []byte(attach)); err != nil {
				t.Fatal(err)
			}
			if msg, err := sk.ReadMessage(ctx); err != nil || !strings.Contains(string(msg), "sessionId") {
				t.Fatalf("attach: %s, %v", msg, err)
			}
		}
	}
	ra, rb := onlyRoute(sa), onlyRoute(sb)
	for i := 0; i < 10; i++ {
		f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: ra.ch, Method: "Log.entryAdded", Params: json.RawMessage(`{"entry":{"text":"x"}}`)})
	}
	f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: rb.ch, Method: "Log.entryAdded", Params: json.RawMessage(`{"entry":{"text":"b"}}`)})
	// Route b's event arrives: the peer's reader got past a's flood.
	if msg, err := sb.ReadMessage(ctx); err != nil || !strings.Contains(string(msg), `"b"`) {
		t.Fatalf("route b: %s, %v", msg, err)
	}
	if ra.owner.State() != RouteLossy || rb.owner.State() != RouteOpen {
		t.Fatalf("routes %s and %s, want lossy and open", ra.owner.State(), rb.owner.State())
	}
	var events, markers int
	for i := 0; i < 5; i++ {
		_, err := sa.ReadMessage(ctx)
		var tl *cdp.InboundTooLargeError
		switch {
		case errors.As(err, &tl):
			markers++
		case err == nil:
			events++
		default:
			t.Fatal(err)
		}
	}
	if events != 4 || markers != 1 {
		t.Fatalf("read %d events and %d markers, want 4 and 1", events, markers)
	}
	if ra.owner.State() != RouteOpen || ra.owner.Counter("losses") != 1 {
		t.Fatalf("after draining: %s with %d losses", ra.owner.State(), ra.owner.Counter("losses"))
	}
	f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: ra.ch, Method: "Log.entryAdded", Params: json.RawMessage(`{"entry":{"text":"again"}}`)})
	if msg, err := sa.ReadMessage(ctx); err != nil || !strings.Contains(string(msg), "again") {
		t.Fatalf("the recovered route: %s, %v", msg, err)
	}
	if s.Status().Verified != 1 {
		t.Fatal("event overflow closed the peer")
	}
}

func onlyRoute(s *Socket) *route {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.routes {
		return r
	}
	return nil
}

// TestFakeExtension_ByteBudget fills the 16 MiB budget (scaled down here)
// with events nobody reads: events past it make their route lossy and
// keep the peer; a response past it closes the peer and ends its leases.
func TestFakeExtension_ByteBudget(t *testing.T) {
	s, _ := newServer(t, Options{MaxQueuedBytes: 4096, MaxRouteEvents: 1000})
	f := connect(t, s)
	id := f.share(1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	type attachRes struct {
		sock *Socket
		err  error
	}
	res := make(chan attachRes, 1)
	go func() { sk, err := s.Attach(ctx, id); res <- attachRes{sk, err} }()
	ctl := f.recv()
	f.answer(ctl.ID, map[string]string{"targetId": "T1"})
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	sk := r.sock
	sk.WriteMessage(ctx, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
	sk.ReadMessage(ctx)
	rt := onlyRoute(sk)
	big := json.RawMessage(`{"entry":{"text":"` + strings.Repeat("x", 1000) + `"}}`)
	for i := 0; i < 6; i++ {
		f.sendMsg(&wire.Message{T: wire.KindEvent, Ch: rt.ch, Method: "Log.entryAdded", Params: big})
	}
	// A command whose answer must wait behind the events.
	if err := sk.WriteMessage(ctx, []byte(`{"id":2,"sessionId":"`+rt.session+`","method":"Runtime.evaluate","params":{"expression":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	cmd := f.recv()
	// The peer's reader is queuing the flood.
	waitfor.Start(wait).Wait(func() bool { return rt.owner.State() == RouteLossy })
	if rt.owner.State() != RouteLossy || s.Status().Verified != 1 {
		t.Fatalf("after the event flood: route %s, %d verified peers; want lossy and the peer kept", rt.owner.State(), s.Status().Verified)
	}
	f.answer(cmd.ID, map[string]string{"data": strings.Repeat("y", 4096)})
	if !f.closedByRunner() {
		t.Fatal("a response past the budget kept the peer")
	}
	if got := sk.Reason(); got != wire.ReasonNative {
		t.Fatalf("the lease ended with %q, want %s", got, wire.ReasonNative)
	}
}

func TestFakeExtension_CommandQueueExhaustionClosesPeer(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	id := f.share(1)
	other := f.share(2)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := make(chan *Socket, 1)
	go func() { sk, _ := s.Attach(ctx, id); res <- sk }()
	ctl := f.recv()
	f.answer(ctl.ID, map[string]string{"targetId": "T1"})
	sk := <-res
	sk.WriteMessage(ctx, []byte(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
	sk.ReadMessage(ctx)
	rt := onlyRoute(sk)
	for i := 0; i < wire.MaxQueuedCommands; i++ {
		cmd := `{"id":` + jsonInt(int64(i+10)) + `,"sessionId":"` + rt.session + `","method":"Runtime.evaluate","params":{"expression":"1"}}`
		if err := sk.WriteMessage(ctx, []byte(cmd)); err != nil {
			t.Fatalf("command %d: %v", i+1, err)
		}
	}
	for i := 0; i < wire.MaxQueuedCommands; i++ {
		if m := f.recv(); m.T != wire.KindCommand {
			t.Fatalf("frame %d is %s", i, m.T)
		}
	}
	err := sk.WriteMessage(ctx, []byte(`{"id":999,"sessionId":"`+rt.session+`","method":"Runtime.evaluate","params":{"expression":"1"}}`))
	if !errors.Is(err, cdp.ErrClosed) {
		t.Fatalf("the 33rd command: %v, want the connection closed", err)
	}
	if !f.closedByRunner() {
		t.Fatal("the peer stayed open")
	}
	if _, err := s.Attach(ctx, other); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("the closed peer's other offer: %v", err)
	}
	if sk.Reason() != wire.ReasonNative {
		t.Fatalf("lease ended with %q", sk.Reason())
	}
}

func TestFakeExtension_FramesFailClosed(t *testing.T) {
	s, _ := newServer(t, Options{})
	hdr := func(n uint32) []byte {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], n)
		return b[:]
	}
	cases := map[string][]byte{
		"event-sized limit with no command pending": hdr(wire.MaxEvent + 1),
		"malformed JSON":               append(hdr(2), "{x"...),
		"duplicate member":             append(hdr(30), `{"t":"revoke","tab":1,"tab":2}`...),
		"a command from the extension": append(hdr(47), `{"t":"cmd","id":1,"ch":1,"method":"Page.enable"}`...),
		"empty frame":                  hdr(0),
	}
	for name, raw := range cases {
		f := connect(t, s)
		f.conn.Write(raw)
		if !f.closedByRunner() {
			t.Errorf("%s: the peer stayed open", name)
		}
	}
	// At the bound it passes: an event of exactly MaxEvent bytes.
	f := connect(t, s)
	body := []byte(`{"t":"ev","ch":99,"method":"Log.entryAdded","params":{"p":"`)
	body = append(body, strings.Repeat("x", wire.MaxEvent-len(body)-3)...)
	body = append(body, `"}}`...)
	if len(body) != wire.MaxEvent {
		t.Fatalf("built %d bytes", len(body))
	}
	f.sendRaw(body)
	f.share(3) // still served
}

func TestFakeExtension_ResponseLimitWhileAwaited(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	id := f.share(1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := make(chan error, 1)
	go func() { _, err := s.Attach(ctx, id); res <- err }()
	ctl := f.recv()
	// A response of exactly MaxResponse bytes is admitted while awaited.
	prefix := `{"t":"res","id":` + jsonInt(ctl.ID) + `,"result":{"targetId":"T1","pad":"`
	body := prefix + strings.Repeat("x", wire.MaxResponse-len(prefix)-3) + `"}}`
	f.sendRaw([]byte(body))
	if err := <-res; err != nil {
		t.Fatalf("a response at the limit: %v", err)
	}
	// One byte over closes the peer.
	second := f.share(2)
	go func() { _, err := s.Attach(ctx, second); res <- err }()
	ctl = f.recv()
	prefix = `{"t":"res","id":` + jsonInt(ctl.ID) + `,"result":{"targetId":"T1","pad":"`
	body = prefix + strings.Repeat("x", wire.MaxResponse-len(prefix)-2) + `"}}`
	f.sendOversized([]byte(body))
	if !f.closedByRunner() {
		t.Fatal("a response above the limit kept the peer")
	}
	if err := <-res; !fsm.IsCode(err, fsm.AttachmentLost) {
		t.Fatalf("the attach whose answer was oversized: %v", err)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestFakeExtension_RevokeDetachAndReconnect(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	sv := &served{}
	sock, conn, _ := attachConn(t, s, f, sv)
	f.sendMsg(&wire.Message{T: wire.KindRevoke, Tab: 7})
	select {
	case <-conn.Done():
	case <-time.After(wait):
		t.Fatal("revoke did not end the lease's connection")
	}
	if sock.Reason() != wire.ReasonRevoke {
		t.Fatalf("reason %q, want %s", sock.Reason(), wire.ReasonRevoke)
	}

	// A detach with a fixed reason ends another lease with that reason.
	g := connect(t, s)
	sock2, conn2, _ := attachConn(t, s, g, sv)
	g.sendMsg(&wire.Message{T: wire.KindDetached, Tab: 7, Ch: onlyRouteCh(sock2), Reason: wire.ReasonCanceledByUser})
	<-conn2.Done()
	if sock2.Reason() != wire.ReasonCanceledByUser {
		t.Fatalf("reason %q", sock2.Reason())
	}

	// A reconnecting host is a new peer: the old one's offer is invalid.
	h := connect(t, s)
	old := h.share(9)
	h.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	// The reader sees EOF.
	waitfor.Until(t, wait, "the old peer's offers gone", func() bool { return len(s.Offers()) == 0 })
	k := connect(t, s)
	k.share(9)
	if _, err := s.Attach(ctx, old); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("the old peer's offer after reconnect: %v", err)
	}
}

func onlyRouteCh(s *Socket) int64 {
	rt := onlyRoute(s)
	if rt == nil {
		return 0
	}
	return rt.ch
}

func TestFakeExtension_CloseDetachesNeverCloses(t *testing.T) {
	s, _ := newServer(t, Options{})
	f := connect(t, s)
	id := f.share(4)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := make(chan *Socket, 1)
	go func() { sk, _ := s.Attach(ctx, id); res <- sk }()
	ctl := f.recv()
	f.answer(ctl.ID, map[string]string{"targetId": "T4"})
	sk := <-res
	closed := make(chan struct{})
	go func() { sk.Close(); close(closed) }()
	m := f.recv()
	if m.T != wire.KindControl || m.Op != wire.OpDetach {
		t.Fatalf("closing the socket sent %s %s, want a detach control", m.T, m.Op)
	}
	f.answer(m.ID, map[string]any{})
	<-closed
	if s.Status().Routes != 0 {
		t.Fatal("the route outlived Close")
	}
}

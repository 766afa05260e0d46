package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/fsm"
)

// ReasonRunnerDetached is a route's end reason when the Runner detached
// it (the browser was closed or the page detached).
const ReasonRunnerDetached = "runner_detached"

// detachTimeout bounds the wait for the extension to detach a route when
// the Runner closes a Socket.
const detachTimeout = 5 * time.Second

// Socket is a cdp.Socket over the bridge: to its cdp.Conn it looks like a
// browser endpoint whose only page targets are the lease's tabs (the
// shared tab and any tab opened with new_page). Browser-level commands are
// answered here from the closed bridge controls (targets, detach,
// new_page, close_page); Browser.close and every other browser command is
// refused, never forwarded. A page session's commands pass the bridge's
// command table ([PageCommands]) and go to the extension as wire commands;
// its events come back projected by the extension.
//
// Cross-site iframes are not attached through the bridge
// (Target.setAutoAttach is answered here and attaches nothing), so their
// content is out of reach, as a denied frame's is.
//
// Socket is safe for concurrent use as cdp.Socket requires.
type Socket struct {
	s    *Server
	peer *peer

	lifeCtx context.Context // cancelled by Close: ends async controls
	cancel  context.CancelFunc
	wg      sync.WaitGroup // async controls

	wake chan struct{} // cap 1: an item was queued or the socket ended

	// life is the socket's machine (SocketSpec): open, ended (every route
	// ended: reads fail once the queue is read), closing, closed.
	life *fsm.Owner[SocketState, SocketTrigger, struct{}]

	mu        sync.Mutex // mu guards the fields that follow
	queue     []item
	routes    map[int64]*route
	url       string // the shared tab's, when shared or attached
	title     string
	endReason string // the first route end's reason (a fixed detach code, or runner_detached)
}

// item is one queued inbound message, or a loss marker.
type item struct {
	msg     []byte
	charged int    // bytes taken from the server's budget
	rt      *route // an event's route, for its queue count
	marker  *cdp.InboundTooLargeError
}

// route is one attached tab of a Socket: a wire channel. Its life is
// [RouteSpec].
type route struct {
	sock  *Socket
	ch    int64
	tab   int64
	child bool // opened with new_page: close_page may close it
	owner *fsm.Owner[RouteState, RouteTrigger, struct{}]

	// guarded by sock.mu
	target    string // the CDP target id the extension named
	session   string // the flattened session id the Conn knows it by
	sessionUp bool   // the Conn attached it
	queued    int    // its events (and marker) waiting to be read
	lost      string // the method of the event whose overflow queue_loss_marker reports
}

func newSocket(s *Server, p *peer, url, title string) *Socket {
	ctx, cancel := context.WithCancel(context.Background())
	sock := &Socket{s: s, peer: p, lifeCtx: ctx, cancel: cancel, wake: make(chan struct{}, 1), routes: map[int64]*route{}, url: url, title: title}
	sock.life = fsm.NewOwner(SocketSpec, fsm.Effects[SocketState, SocketTrigger]{
		EffectDetachRoutes: sock.detachRoutes,
		EffectReleaseQueue: sock.releaseQueue,
	})
	return sock
}

// state returns the socket's state.
func (s *Socket) state() SocketState { return s.life.State() }

// closed reports whether reads and writes fail for good.
func (s *Socket) closed() bool { return s.state() == SocketClosed }

func (s *Socket) addRoute(ch, tab int64, target string, child bool) *route {
	rt := &route{sock: s, ch: ch, tab: tab, child: child, target: target, session: fmt.Sprintf("WCBRIDGE%d", ch)}
	rt.owner = fsm.NewOwner(RouteSpec, fsm.Effects[RouteState, RouteTrigger]{
		EffectMarkLoss:   rt.markLoss,
		EffectEndSession: rt.endSession,
	})
	s.mu.Lock()
	s.routes[ch] = rt
	s.mu.Unlock()
	return rt
}

func (s *Socket) setInfo(url, title string) {
	s.mu.Lock()
	s.url, s.title = url, title
	s.mu.Unlock()
}

// Reason returns why the socket ended: the fixed detach code of its
// shared tab's route (explicit_revoke, tab_closed, native_disconnected, a
// debugger_* code) or runner_detached; "" while it lives.
func (s *Socket) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endReason
}

func (rt *route) fire(t RouteTrigger) (fsm.Step[RouteState, RouteTrigger], error) {
	return rt.owner.Fire(context.Background(), t)
}

// state returns the route's state.
func (rt *route) state() RouteState { return rt.owner.State() }

// attached opens the route on target. It fails when the route ended while
// the extension attached (its peer went): then nothing is attached.
func (rt *route) attached(target string) error {
	rt.sock.mu.Lock()
	rt.target = target
	rt.sock.mu.Unlock()
	_, err := rt.fire(RouteAttached)
	return err
}

// attachFailed ends a route whose attach failed. A route the loss of its
// peer ended meanwhile is closed already, which is what is wanted.
func (rt *route) attachFailed() {
	if _, err := rt.fire(RouteAttachFailed); err != nil && rt.state() != RouteClosed {
		rt.sock.s.logf("bridge: route %d: %v", rt.ch, err)
	}
}

// markLoss is queue_loss_marker; the caller holds sock.mu.
func (rt *route) markLoss(context.Context, fsm.Step[RouteState, RouteTrigger]) (RouteTrigger, error) {
	rt.sock.queueMarkerLocked(rt, rt.lost)
	return "", nil
}

// endSession is end_session: the Conn hears its page session end (unless
// it never attached it, or the socket is closed). The caller holds sock.mu.
func (rt *route) endSession(context.Context, fsm.Step[RouteState, RouteTrigger]) (RouteTrigger, error) {
	s := rt.sock
	if rt.sessionUp && !s.closed() {
		detached, _ := json.Marshal(map[string]any{"method": "Target.detachedFromTarget", "params": map[string]string{"sessionId": rt.session, "targetId": rt.target}})
		destroyed, _ := json.Marshal(map[string]any{"method": "Target.targetDestroyed", "params": map[string]string{"targetId": rt.target}})
		// Uncharged: two small frames per route end, bounded by the routes.
		s.queue = append(s.queue, item{msg: detached}, item{msg: destroyed})
	}
	return "", nil
}

// event queues one event of the route for the Conn, within the route's
// bound and the server's byte budget; past either the route turns lossy.
// It never fails the peer.
func (rt *route) event(m *wire.Message, size int) error {
	s := rt.sock
	s.mu.Lock()
	defer s.mu.Unlock()
	if !rt.sessionUp || s.closed() || rt.state() != RouteOpen {
		return nil // not attached by the Conn yet, ended, or lossy: discarded
	}
	if m.Method == wire.DiscardedMethod {
		// The extension replaced an event above 64 KiB: count it lost on
		// the page, as an oversized message from a browser is.
		var p struct {
			Method string `json:"method"`
		}
		json.Unmarshal(m.Params, &p)
		s.queueMarkerLocked(rt, p.Method)
		return nil
	}
	msg := cdpEvent(m.Method, m.Params, rt.session)
	if rt.queued >= s.s.opts.MaxRouteEvents || !s.s.budget.take(len(msg)) {
		rt.lost = m.Method
		if _, err := rt.fire(RouteOverflow); err != nil {
			s.s.logf("bridge: route %d: %v", rt.ch, err) // open (checked above) takes an overflow
		}
		return nil
	}
	s.queue = append(s.queue, item{msg: msg, charged: len(msg), rt: rt})
	rt.queued++
	s.signal()
	return nil
}

// cdpEvent is the event as the Conn reads it. It is assembled rather than
// re-encoded: the method matched the wire's method pattern and the params
// passed the strict I-JSON check, so neither needs escaping again (and a
// 64 KiB event is not validated twice).
func cdpEvent(method string, params json.RawMessage, session string) []byte {
	b := make([]byte, 0, len(method)+len(params)+len(session)+48)
	b = append(b, `{"method":"`...)
	b = append(b, method...)
	b = append(b, '"')
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	b = append(b, `,"sessionId":"`...)
	b = append(b, session...)
	return append(b, `"}`...)
}

// queueMarkerLocked queues a loss marker for rt's session: the Conn counts
// it as a dropped event of that session (cdp.InboundTooLargeError), so the
// page's diagnostics report diagnostic_events_discarded until cleared.
// Markers are a few bytes and one per loss: not charged to the budget.
func (s *Socket) queueMarkerLocked(rt *route, method string) {
	if !methodName(method) {
		method = wire.DiscardedMethod
	}
	marker := &cdp.InboundTooLargeError{
		Limit: wire.MaxEvent,
		Head:  []byte(`{"method":"` + method + `"`),
		Tail:  []byte(`,"sessionId":"` + rt.session + `"}`),
	}
	s.queue = append(s.queue, item{marker: marker, rt: rt})
	rt.queued++
	s.signal()
}

func methodName(m string) bool {
	_, err := wire.Decode([]byte(`{"t":"ev","ch":1,"method":"`+m+`"}`), wire.FromExtension)
	return m != "" && len(m) < 100 && err == nil
}

func (s *Socket) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pushLocal queues an answer the socket made itself (tiny; charged).
func (s *Socket) pushLocal(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed() {
		return nil
	}
	if !s.s.budget.take(len(msg)) {
		return errors.New("bridge: response queue exhausted")
	}
	s.queue = append(s.queue, item{msg: msg, charged: len(msg)})
	s.signal()
	return nil
}

// respond queues a CDP response to command id.
func (s *Socket) respond(id int64, result any, cdpErr *wire.Error) error {
	var msg []byte
	var err error
	if cdpErr != nil {
		msg, err = json.Marshal(struct {
			ID    int64       `json:"id"`
			Error *wire.Error `json:"error"`
		}{id, cdpErr})
	} else {
		raw, ok := result.(json.RawMessage)
		if !ok {
			if raw, err = json.Marshal(result); err != nil {
				return err
			}
		}
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		msg, err = json.Marshal(struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
		}{id, raw})
	}
	if err != nil {
		return err
	}
	return s.pushLocal(msg)
}

// ReadMessage returns the next queued message: responses and events in
// the order they arrived, or a loss marker as an *cdp.InboundTooLargeError
// (the socket stays usable). Once every route has ended it returns the
// rest of the queue, then an error wrapping cdp.ErrClosed.
func (s *Socket) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		st := s.state()
		if len(s.queue) > 0 && st != SocketClosed {
			it := s.queue[0]
			s.queue[0] = item{}
			s.queue = s.queue[1:]
			if it.rt != nil {
				it.rt.queued--
				if it.rt.queued == 0 && it.rt.state() == RouteLossy {
					if _, err := it.rt.fire(RouteDrained); err != nil {
						s.s.logf("bridge: route %d: %v", it.rt.ch, err)
					}
				}
			}
			s.mu.Unlock()
			s.s.budget.give(it.charged)
			if it.marker != nil {
				return nil, it.marker
			}
			return it.msg, nil
		}
		switch st {
		case SocketClosed:
			s.mu.Unlock()
			return nil, fmt.Errorf("bridge: read: %w", cdp.ErrClosed)
		case SocketEnded:
			reason := s.endReason
			s.mu.Unlock()
			return nil, fmt.Errorf("bridge: the shared tab ended (%s): %w", reason, cdp.ErrClosed)
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("bridge: read: %w", ctx.Err())
		case <-s.lifeCtx.Done():
		}
	}
}

// outbound is a command from the Conn.
type outbound struct {
	ID        int64           `json:"id"`
	SessionID string          `json:"sessionId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
}

// WriteMessage takes one command from the Conn. Browser-level commands are
// answered here; a page session's allowed commands go to the extension.
// Answers arrive through ReadMessage.
func (s *Socket) WriteMessage(ctx context.Context, msg []byte) error {
	if len(msg) > wire.MaxCommand {
		return &cdp.TooLargeError{Size: len(msg), Limit: wire.MaxCommand}
	}
	var c outbound
	if err := json.Unmarshal(msg, &c); err != nil || c.ID <= 0 || c.Method == "" {
		return fmt.Errorf("bridge: write: %w: not a CDP command", wire.ErrMalformed)
	}
	s.mu.Lock()
	if s.state() != SocketOpen {
		s.mu.Unlock()
		return fmt.Errorf("bridge: write: %w", cdp.ErrClosed)
	}
	var rt *route
	if c.SessionID != "" {
		for _, r := range s.routes {
			if r.sessionUp && r.session == c.SessionID {
				rt = r
			}
		}
	}
	s.mu.Unlock()
	if c.SessionID == "" {
		return s.browserCommand(c)
	}
	if rt == nil {
		return s.respond(c.ID, nil, &wire.Error{Code: -32001, Message: "Session with given id not found."})
	}
	if c.Method == "Target.setAutoAttach" {
		return s.respond(c.ID, struct{}{}, nil) // child targets are never attached through the bridge
	}
	if err := checkCommand(c.Method, c.Params); err != nil {
		return s.respond(c.ID, nil, &wire.Error{Code: -32000, Message: err.Error()})
	}
	params := c.Params
	if len(params) == 0 || string(params) == "null" {
		params = nil
	}
	cdpID := c.ID
	err := s.peer.start(ctx, &wire.Message{T: wire.KindCommand, Ch: rt.ch, Method: c.Method, Params: params}, func(res *wire.Message, err error) error {
		if err != nil {
			return nil // the peer closed: its routes end, and the Conn with them
		}
		return s.respond(cdpID, res.Result, res.Error)
	})
	if errors.Is(err, wire.ErrFrameTooLarge) {
		return &cdp.TooLargeError{Size: len(msg), Limit: wire.MaxCommand}
	}
	if err != nil {
		return fmt.Errorf("bridge: write: %w: %w", cdp.ErrClosed, err)
	}
	return nil
}

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Attached bool   `json:"attached"`
}

// browserCommand answers a browser-level command from the closed bridge
// controls; nothing else reaches the person's browser.
func (s *Socket) browserCommand(c outbound) error {
	var p struct {
		TargetID  string `json:"targetId"`
		SessionID string `json:"sessionId"`
	}
	if len(c.Params) > 0 {
		json.Unmarshal(c.Params, &p)
	}
	switch c.Method {
	case "Target.setDiscoverTargets":
		return s.respond(c.ID, struct{}{}, nil)
	case "Browser.getVersion":
		return s.respond(c.ID, map[string]string{"protocolVersion": "1.3", "product": "webcodex-extension-bridge"}, nil)
	case "Target.attachToTarget":
		s.mu.Lock()
		rt := s.routeByTargetLocked(p.TargetID)
		var session string
		var cerr *wire.Error
		switch {
		case rt == nil:
			cerr = &wire.Error{Code: -32602, Message: "No target with given id found"}
		case rt.sessionUp:
			cerr = &wire.Error{Code: -32000, Message: "the shared tab has one session through the bridge"}
		default:
			rt.sessionUp, session = true, rt.session
		}
		s.mu.Unlock()
		if cerr != nil {
			return s.respond(c.ID, nil, cerr)
		}
		return s.respond(c.ID, map[string]string{"sessionId": session}, nil)
	case "Target.getTargets", "Target.getTargetInfo":
		s.async(func(ctx context.Context) error {
			infos := s.targetInfos(ctx, p.TargetID)
			if c.Method == "Target.getTargets" {
				return s.respond(c.ID, map[string]any{"targetInfos": infos}, nil)
			}
			if len(infos) == 0 {
				return s.respond(c.ID, nil, &wire.Error{Code: -32602, Message: "No target with given id found"})
			}
			return s.respond(c.ID, map[string]any{"targetInfo": infos[0]}, nil)
		})
		return nil
	case "Target.detachFromTarget":
		s.mu.Lock()
		var rt *route
		for _, r := range s.routes {
			if r.sessionUp && r.session == p.SessionID {
				rt = r
			}
		}
		s.mu.Unlock()
		if rt == nil {
			return s.respond(c.ID, nil, &wire.Error{Code: -32602, Message: "No session with given id"})
		}
		s.async(func(ctx context.Context) error {
			s.detachRoute(ctx, rt)
			return s.respond(c.ID, struct{}{}, nil)
		})
		return nil
	case "Target.createTarget":
		s.async(func(ctx context.Context) error { return s.newPage(ctx, c.ID) })
		return nil
	case "Target.closeTarget":
		s.mu.Lock()
		rt := s.routeByTargetLocked(p.TargetID)
		s.mu.Unlock()
		if rt == nil || !rt.child {
			return s.respond(c.ID, nil, &wire.Error{Code: -32000, Message: "only a tab opened through the bridge may be closed"})
		}
		s.async(func(ctx context.Context) error {
			res, err := s.peer.call(ctx, &wire.Message{T: wire.KindControl, Op: wire.OpClosePage, Ch: rt.ch})
			if err == nil && res.Error != nil {
				return s.respond(c.ID, nil, res.Error)
			}
			if err != nil {
				return s.respond(c.ID, nil, &wire.Error{Code: -32000, Message: "the extension did not answer"})
			}
			rt.end(ReasonRunnerDetached)
			return s.respond(c.ID, map[string]bool{"success": true}, nil)
		})
		return nil
	case "Browser.close":
		return s.respond(c.ID, nil, &wire.Error{Code: -32000, Message: "Browser.close is never forwarded through the extension bridge"})
	}
	return s.respond(c.ID, nil, &wire.Error{Code: -32601, Message: fmt.Sprintf("%.100s is not available through the extension bridge", c.Method)})
}

func (s *Socket) routeByTargetLocked(target string) *route {
	for _, r := range s.routes {
		if r.target != "" && r.target == target && r.state() != RouteClosed {
			return r
		}
	}
	return nil
}

// async runs fn off the Conn's write path, owned by the socket: Close
// cancels its context and waits for it. An error it returns (a response
// that found the queue full) closes the peer.
func (s *Socket) async(fn func(ctx context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(s.lifeCtx); err != nil {
			s.peer.close("response queue exhausted")
		}
	}()
}

// targetInfos asks the extension for the live URL and title of each
// route's tab (only target, when set).
func (s *Socket) targetInfos(ctx context.Context, only string) []targetInfo {
	s.mu.Lock()
	var rts []*route
	for _, r := range s.routes {
		if r.target != "" && (only == "" || r.target == only) && r.state() != RouteAttaching && r.state() != RouteClosed {
			rts = append(rts, r)
		}
	}
	s.mu.Unlock()
	infos := []targetInfo{}
	for _, r := range rts {
		res, err := s.peer.call(ctx, &wire.Message{T: wire.KindControl, Op: wire.OpTargets, Ch: r.ch})
		if err != nil || res.Error != nil {
			continue
		}
		var out struct {
			TargetInfos []targetInfo `json:"targetInfos"`
		}
		if decodeResult(res.Result, &out) != nil {
			continue
		}
		for _, ti := range out.TargetInfos {
			if ti.TargetID == r.target {
				ti.Type, ti.Attached = "page", true
				infos = append(infos, ti)
			}
		}
	}
	return infos
}

// newPage opens a tab for this lease through new_page and announces it as
// a new page target.
func (s *Socket) newPage(ctx context.Context, id int64) error {
	s.mu.Lock()
	var lead *route
	for _, r := range s.routes {
		if !r.child && r.state() != RouteClosed && r.state() != RouteAttaching {
			lead = r
		}
	}
	s.mu.Unlock()
	if lead == nil {
		return s.respond(id, nil, &wire.Error{Code: -32000, Message: "the shared tab is gone"})
	}
	rt, err := s.s.newRoute(s, 0)
	if err != nil {
		return s.respond(id, nil, &wire.Error{Code: -32000, Message: err.Error()})
	}
	res, err := s.peer.call(ctx, &wire.Message{T: wire.KindControl, Op: wire.OpNewPage, Ch: rt.ch, Tab: lead.tab})
	var out struct {
		TargetID string `json:"targetId"`
		Tab      int64  `json:"tab"`
	}
	if err == nil && res.Error == nil {
		err = decodeResult(res.Result, &out)
	}
	if err != nil || res.Error != nil || out.TargetID == "" || out.Tab <= 0 {
		rt.attachFailed()
		s.s.dropRoute(rt)
		s.mu.Lock()
		delete(s.routes, rt.ch)
		s.mu.Unlock()
		return s.respond(id, nil, &wire.Error{Code: -32000, Message: "the extension could not open a tab"})
	}
	s.mu.Lock()
	rt.tab = out.Tab
	s.mu.Unlock()
	if err := rt.attached(out.TargetID); err != nil {
		return s.respond(id, nil, &wire.Error{Code: -32000, Message: "the shared tab is gone"})
	}
	ev, _ := json.Marshal(map[string]any{"method": "Target.targetCreated", "params": map[string]any{
		"targetInfo": targetInfo{TargetID: out.TargetID, Type: "page", URL: "about:blank"}}})
	if err := s.pushLocal(ev); err != nil {
		return err
	}
	return s.respond(id, map[string]string{"targetId": out.TargetID}, nil)
}

// detachRoute asks the extension to detach rt's tab, then ends the route.
func (s *Socket) detachRoute(ctx context.Context, rt *route) {
	if rt.state() != RouteClosed {
		dctx, cancel := context.WithTimeout(ctx, detachTimeout)
		s.peer.call(dctx, &wire.Message{T: wire.KindControl, Op: wire.OpDetach, Ch: rt.ch})
		cancel()
	}
	rt.end(ReasonRunnerDetached)
}

// end ends the route once: its page session ends (the Conn hears
// Target.detachedFromTarget and Target.targetDestroyed), and the socket
// ends with its last route. Nothing re-attaches.
func (rt *route) end(reason string) {
	s := rt.sock
	s.mu.Lock()
	// end_session runs under s.mu, so its frames queue in order.
	if _, err := rt.fire(RouteEnd); err != nil {
		s.mu.Unlock()
		return // ended already
	}
	delete(s.routes, rt.ch)
	if s.endReason == "" && !rt.child {
		s.endReason = reason
	}
	if len(s.routes) == 0 {
		if s.endReason == "" {
			s.endReason = reason
		}
		s.routesEndedLocked()
	}
	s.signal()
	s.mu.Unlock()
	s.s.dropRoute(rt)
}

// routesEndedLocked ends an open socket whose last route ended. A socket
// the Runner is closing detaches its routes itself, so a refusal there is
// expected; the caller holds s.mu.
func (s *Socket) routesEndedLocked() {
	if _, err := s.life.Fire(context.Background(), SocketRoutesEnded); err != nil && s.state() == SocketOpen {
		s.s.logf("bridge: socket: %v", err)
	}
}

// finish ends a socket that never had a live route (a failed attach).
func (s *Socket) finish(reason string) {
	s.mu.Lock()
	if s.endReason == "" {
		s.endReason = reason
	}
	s.routesEndedLocked()
	s.signal()
	s.mu.Unlock()
	s.Close()
}

// Close detaches every route still attached (never closing a tab), fails
// blocked reads and waits for the socket's async controls: the machine's
// close, once. Idempotent.
func (s *Socket) Close() error {
	if _, err := s.life.Fire(context.Background(), SocketClose); err != nil {
		s.wg.Wait() // closing or closed already
		return nil
	}
	return nil
}

// detachRoutes is detach_routes: every route still live is detached (the
// extension detaches the debugger; the tab stays open).
func (s *Socket) detachRoutes(context.Context, fsm.Step[SocketState, SocketTrigger]) (SocketTrigger, error) {
	s.mu.Lock()
	var live []*route
	for _, r := range s.routes {
		live = append(live, r)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, rt := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.detachRoute(context.Background(), rt)
		}()
	}
	wg.Wait()
	return SocketDetached, nil
}

// releaseQueue is release_queue: the machine is closed, so nothing queues
// any more; what was queued goes back to the budget, blocked reads fail and
// the async controls end.
func (s *Socket) releaseQueue(context.Context, fsm.Step[SocketState, SocketTrigger]) (SocketTrigger, error) {
	s.mu.Lock()
	queue := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, it := range queue {
		s.s.budget.give(it.charged)
	}
	s.cancel()
	s.wg.Wait()
	return "", nil
}

var _ cdp.Socket = (*Socket)(nil)

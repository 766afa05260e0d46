package cdp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// evalString evaluates expr by value and returns the string it yields.
func evalString(ctx context.Context, s *cdp.Session, expr string) (string, error) {
	res, err := cdproto.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true)})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("exception: %s", res.ExceptionDetails.Text)
	}
	var v string
	if err := jsonv2.Unmarshal(res.Result.Value, &v); err != nil {
		return "", fmt.Errorf("result %s: %w", res.Result.Value, err)
	}
	return v, nil
}

// pending evaluates a promise that settles after 5 s.
func pending(ctx context.Context, s *cdp.Session) error {
	_, err := cdproto.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "new Promise(r => setTimeout(r, 5000))", AwaitPromise: new(true)})
	return err
}

func TestAttachNavigateEvaluate(t *testing.T) {
	base := chromiumtest.ServeHTML(t, `<!doctype html><title>hello webcodex</title><p id=p>text</p>`)
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)
	if s.ID() == "" {
		t.Fatal("page session has an empty id")
	}
	if got, ok := c.Session(s.ID()); !ok || got != s {
		t.Fatalf("Session(%q) = %v, %v; want the attached session", s.ID(), got, ok)
	}
	exceptions, cancelExc := s.Subscribe(cdpruntime.ExceptionThrown.Method)
	defer cancelExc()
	if _, err := cdproto.Call(ctx, s, cdpruntime.Enable, cdproto.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cdproto.Call(ctx, s, page.Enable, page.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	loads, cancelLoads := s.Subscribe(page.LoadEventFired.Method)
	defer cancelLoads()
	nav, err := cdproto.Call(ctx, s, page.Navigate, page.NavigateParams{URL: base + "/page"})
	if err != nil {
		t.Fatal(err)
	}
	if nav.ErrorText != "" {
		t.Fatalf("navigate: %s", nav.ErrorText)
	}
	select {
	case <-loads:
	case <-ctx.Done():
		t.Fatal("no Page.loadEventFired")
	}
	title, err := evalString(ctx, s, "document.title + '/' + document.getElementById('p').textContent")
	if err != nil {
		t.Fatal(err)
	}
	if title != "hello webcodex/text" {
		t.Errorf("evaluate = %q, want %q", title, "hello webcodex/text")
	}
	select {
	case ev := <-exceptions:
		t.Errorf("Runtime.exceptionThrown: %s", ev)
	default:
	}
}

func TestProtocolError(t *testing.T) {
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	err := c.Browser().Call(testContext(t), "Nope.nothing", nil, nil)
	pe, ok := errors.AsType[*cdp.ProtocolError](err)
	if !ok {
		t.Fatalf("Call(Nope.nothing) = %v, want a *ProtocolError", err)
	}
	if pe.Code != -32601 {
		t.Errorf("code = %d, want -32601 (method not found)", pe.Code)
	}
	if _, err := cdproto.Call(testContext(t), c.Browser(), browserGetVersion, cdproto.Empty{}); err != nil {
		t.Errorf("connection unusable after a protocol error: %v", err)
	}
}

func TestCallContextDeadline(t *testing.T) {
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := pending(ctx, s)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("pending call = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline of 200ms honoured after %v", d)
	}
	if got, err := evalString(testContext(t), s, "'still ' + 'ok'"); err != nil || got != "still ok" {
		t.Errorf("after a deadline: %q, %v", got, err)
	}
}

func TestCutSocketFailsInFlightCall(t *testing.T) {
	var cut cuttable
	c := dial(t, cdp.DialOptions{NetDialContext: cut.dial}, cdp.ConnOptions{})
	s := newPage(t, c)
	sub, cancelSub := s.Subscribe("Runtime.consoleAPICalled")
	defer cancelSub()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	before := cut.writes.Load()
	errc := make(chan error, 1)
	go func() { errc <- pending(ctx, s) }()
	waitfor.Until(t, 2*time.Second, "the pending call is written", func() bool { return cut.writes.Load() > before })
	cut.cut()

	select {
	case err := <-errc:
		if !errors.Is(err, cdp.ErrClosed) {
			t.Fatalf("in-flight call = %v, want ErrClosed", err)
		}
		if strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("error leaks the address: %q", err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("in-flight call still blocked after the socket was cut")
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after the socket was cut")
	}
	if !errors.Is(c.Err(), cdp.ErrClosed) {
		t.Errorf("Err() = %v, want ErrClosed", c.Err())
	}
	if _, ok := <-sub; ok {
		t.Error("subscription channel still open after the connection ended")
	}
	if err := pending(testContext(t), s); !errors.Is(err, cdp.ErrClosed) {
		t.Errorf("call after the cut = %v, want ErrClosed", err)
	}
	if !errors.Is(s.Err(), cdp.ErrClosed) {
		t.Errorf("session Err() = %v, want ErrClosed", s.Err())
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after the cut = %v", err)
	}
}

func TestOversizeRefusedBeforeSend(t *testing.T) {
	const limit = 16 << 10
	var cut cuttable
	c := dial(t, cdp.DialOptions{NetDialContext: cut.dial, MaxWriteSize: limit}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)

	before := cut.written.Load()
	big := "'" + strings.Repeat("a", limit) + "'"
	_, err := evalString(ctx, s, big)
	if !errors.Is(err, cdp.ErrMessageTooLarge) {
		t.Fatalf("oversize call = %v, want ErrMessageTooLarge", err)
	}
	if tl, ok := errors.AsType[*cdp.TooLargeError](err); !ok || tl.Limit != limit || tl.Size <= limit {
		t.Errorf("error = %#v, want a TooLargeError with limit %d", tl, limit)
	}
	if n := cut.written.Load() - before; n != 0 {
		t.Errorf("%d bytes written for a refused message", n)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
	// A message just below the limit still goes through.
	fits := "'" + strings.Repeat("b", limit-300) + "'.length + ''"
	if got, err := evalString(ctx, s, fits); err != nil || got != fmt.Sprint(limit-300) {
		t.Errorf("call after the refusal = %q, %v", got, err)
	}
}

// TestInboundAboveLimitCostsOneMessage: a reply above the read limit fails
// only its own call, naming the command and the limit, and an event above
// it is counted as dropped on its session; the connection, the session and
// the next call and event go on.
func TestInboundAboveLimitCostsOneMessage(t *testing.T) {
	const limit = 16 << 10
	c := dial(t, cdp.DialOptions{MaxMessageSize: limit}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)
	_, err := evalString(ctx, s, fmt.Sprintf("'x'.repeat(%d)", 2*limit))
	tl, ok := errors.AsType[*cdp.InboundTooLargeError](err)
	if !ok || tl.Method != cdpruntime.CommandEvaluate || tl.Limit != limit || tl.Size <= limit {
		t.Fatalf("call with an oversize answer = %v, want an InboundTooLargeError for %s", err, cdpruntime.CommandEvaluate)
	}
	if len(tl.Head)+len(tl.Tail) != 0 {
		t.Error("the caller's error carries message content")
	}
	if c.Err() != nil || s.Err() != nil {
		t.Fatalf("the connection or session ended: %v, %v", c.Err(), s.Err())
	}
	if got, err := evalString(ctx, s, "'still' + ' here'"); err != nil || got != "still here" {
		t.Fatalf("call after the oversize answer = %q, %v", got, err)
	}

	console, stop := s.Subscribe(cdpruntime.ConsoleAPICalled.Method)
	defer stop()
	if _, err := cdproto.Call(ctx, s, cdpruntime.Enable, cdproto.Empty{}); err != nil {
		t.Fatal(err)
	}
	before := s.Dropped()
	if _, err := evalString(ctx, s, fmt.Sprintf("console.log('y'.repeat(%d)), console.log('small'), 'ok'", 2*limit)); err != nil {
		t.Fatal(err)
	}
	select {
	case raw := <-console:
		if !strings.Contains(string(raw), "small") {
			t.Fatalf("first console event delivered = %.200s, want the small one", raw)
		}
	case <-ctx.Done():
		t.Fatal("the event after the oversize one never arrived")
	}
	if got := s.Dropped() - before; got != 1 {
		t.Errorf("session dropped %d events, want 1 (the oversize one)", got)
	}
	if n := c.Oversized(); n != 2 {
		t.Errorf("Oversized() = %d, want 2", n)
	}
}

func TestLargeMessageRoundTrip(t *testing.T) {
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(t, c)
	want := strings.Repeat("0123456789abcdef", 100<<10/16) // 100 KiB out and back
	got, err := evalString(testContext(t), s, "'"+want+"'")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("round trip of %d bytes returned %d bytes", len(want), len(got))
	}
}

func TestConcurrentCallsCorrelate(t *testing.T) {
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprintf("v%d", i)
			got, err := evalString(ctx, s, fmt.Sprintf("'v' + %d", i))
			if err != nil {
				errs <- err
			} else if got != want {
				errs <- fmt.Errorf("call %d got %q", i, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEventQueueOverflowCounted(t *testing.T) {
	const queue, logs = 4, 50
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{EventQueue: queue})
	s := newPage(t, c)
	ctx := testContext(t)
	events, cancel := s.Subscribe(cdpruntime.ConsoleAPICalled.Method)
	defer cancel()
	if _, err := cdproto.Call(ctx, s, cdpruntime.Enable, cdproto.Empty{}); err != nil {
		t.Fatal(err)
	}
	// The events precede the response on the socket, so they have all been
	// routed by the time the call returns.
	if _, err := evalString(ctx, s, fmt.Sprintf("for (let i = 0; i < %d; i++) console.log(i); 'done'", logs)); err != nil {
		t.Fatal(err)
	}
	if got := len(events); got != queue {
		t.Errorf("queued events = %d, want %d", got, queue)
	}
	if got := s.Dropped(); got != logs-queue {
		t.Errorf("Session.Dropped() = %d, want %d", got, logs-queue)
	}
	if got := c.Dropped(); got != logs-queue {
		t.Errorf("Conn.Dropped() = %d, want %d", got, logs-queue)
	}
	// The first events are the ones kept, in order.
	for i := range queue {
		var ev cdpruntime.EventConsoleAPICalled
		if err := jsonv2.Unmarshal(<-events, &ev); err != nil {
			t.Fatal(err)
		}
		if len(ev.Args) != 1 || string(ev.Args[0].Value) != fmt.Sprint(i) {
			t.Errorf("queued event %d has args %v", i, ev.Args)
		}
	}
}

func TestDetachEndsSession(t *testing.T) {
	var cut cuttable
	c := dial(t, cdp.DialOptions{NetDialContext: cut.dial}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)
	events, _ := s.Subscribe(cdpruntime.ConsoleAPICalled.Method)
	before := cut.writes.Load()
	errc := make(chan error, 1)
	go func() { errc <- pending(ctx, s) }()
	waitfor.Until(t, 5*time.Second, "the pending call is written", func() bool { return cut.writes.Load() > before })
	if err := s.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, cdp.ErrDetached) {
			t.Errorf("in-flight call = %v, want ErrDetached", err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("in-flight call still blocked after detach")
	}
	if _, ok := <-events; ok {
		t.Error("subscription open after detach")
	}
	if !errors.Is(s.Err(), cdp.ErrDetached) {
		t.Errorf("Err() = %v, want ErrDetached", s.Err())
	}
	if err := pending(ctx, s); !errors.Is(err, cdp.ErrDetached) {
		t.Errorf("call after detach = %v, want ErrDetached", err)
	}
	if _, ok := c.Session(s.ID()); ok {
		t.Error("detached session still listed")
	}
	if _, err := cdproto.Call(ctx, c.Browser(), browserGetVersion, cdproto.Empty{}); err != nil {
		t.Errorf("browser session after a detach: %v", err)
	}
	if c.Err() != nil {
		t.Errorf("connection ended by a detach: %v", c.Err())
	}
}

func TestCloseTwice(t *testing.T) {
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	if err := c.Close(); err != nil {
		t.Errorf("first Close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := c.Browser().Call(testContext(t), "Browser.getVersion", nil, nil); !errors.Is(err, cdp.ErrClosed) {
		t.Errorf("call after Close = %v, want ErrClosed", err)
	}
	ch, cancel := c.Browser().Subscribe("Target.targetCreated")
	cancel()
	if _, ok := <-ch; ok {
		t.Error("Subscribe after Close returned an open channel")
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	chromiumtest.Shared(t)
	base := runtime.NumGoroutine()
	for range 3 {
		c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
		s := newPage(t, c)
		_, cancel := s.Subscribe(cdpruntime.ConsoleAPICalled.Method)
		if _, err := evalString(testContext(t), s, "'x'"); err != nil {
			t.Fatal(err)
		}
		cancel()
		c.Close()
	}
	waitfor.Until(t, 5*time.Second, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= base })
}

func TestDialErrorsHideAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	_, err = cdp.DialWebSocket(testContext(t), "ws://"+addr+"/devtools/browser/secret-id", cdp.DialOptions{})
	if err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, port) || strings.Contains(msg, "secret-id") {
		t.Errorf("dial error leaks the address: %q", msg)
	}
}

func TestDialCancelEndsHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { // accepts and never answers the handshake
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cdp.DialWebSocket(ctx, "ws://"+ln.Addr().String()+"/devtools/browser/x", cdp.DialOptions{})
		errc <- err
	}()
	var server net.Conn
	select {
	case server = <-accepted:
		defer server.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("no connection")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("dial = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled handshake still blocked")
	}
}

var browserGetVersion = cdproto.Command[cdproto.Empty, struct {
	Product string `json:"product"`
}]{Method: "Browser.getVersion"}

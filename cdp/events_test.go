package cdp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp"
)

// scriptedSocketFake is a Socket that reads a fixed list of messages and
// then blocks until closed: it fixes the exact interleaving of events that
// a real browser produces only by chance.
type scriptedSocketFake struct {
	mu     sync.Mutex
	msgs   [][]byte
	closed chan struct{}
}

func (f *scriptedSocketFake) ReadMessage(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	if len(f.msgs) > 0 {
		m := f.msgs[0]
		f.msgs = f.msgs[1:]
		f.mu.Unlock()
		return m, nil
	}
	f.mu.Unlock()
	select {
	case <-f.closed:
		return nil, cdp.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *scriptedSocketFake) WriteMessage(ctx context.Context, msg []byte) error { return nil }

func (f *scriptedSocketFake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.closed:
	default:
		close(f.closed)
	}
	return nil
}

// eventSeq returns the number an event of the scripted stream carries, and
// its method.
func eventSeq(t *testing.T, v any) string {
	t.Helper()
	switch ev := v.(type) {
	case *cdpruntime.EventExecutionContextCreated:
		return fmt.Sprintf("%s/%d", cdpruntime.ExecutionContextCreated.Method, ev.Context.ID)
	case *cdpruntime.EventConsoleAPICalled:
		return fmt.Sprintf("%s/%d", cdpruntime.ConsoleAPICalled.Method, ev.ExecutionContextID)
	case *cdpruntime.EventExecutionContextDestroyed:
		return fmt.Sprintf("%s/%s", cdpruntime.ExecutionContextDestroyed.Method, ev.ExecutionContextUniqueID)
	}
	t.Fatalf("event of type %T", v)
	return ""
}

// scriptedEvent is the i-th event of method, carrying i in its params.
func scriptedEvent(method string, i int) []byte {
	var params string
	switch method {
	case cdpruntime.ExecutionContextCreated.Method:
		params = fmt.Sprintf(`{"context":{"id":%d,"origin":"","name":"","uniqueId":"u"}}`, i)
	case cdpruntime.ConsoleAPICalled.Method:
		params = fmt.Sprintf(`{"type":"log","args":[],"executionContextId":%d,"timestamp":1}`, i)
	case cdpruntime.ExecutionContextDestroyed.Method:
		params = fmt.Sprintf(`{"executionContextUniqueId":"%d"}`, i)
	default:
		params = fmt.Sprintf(`{"requestId":"%d"}`, i)
	}
	return fmt.Appendf(nil, `{"method":%q,"params":%s}`, method, params)
}

// Events delivers several methods on one channel in the order they were
// read, decoded to cdproto's types, each once even when listed twice; other
// methods do not reach it; ending the connection closes it once.
func TestEventsKeepWireOrder(t *testing.T) {
	methods := []string{cdpruntime.ExecutionContextCreated.Method, cdpruntime.ConsoleAPICalled.Method, cdpruntime.ExecutionContextDestroyed.Method}
	var script [][]byte
	var want []string
	wantSingle := 0
	for i := range 300 {
		m := methods[(i*7)%len(methods)]
		if i%10 == 0 {
			m = network.RequestWillBeSent.Method // not subscribed
		} else {
			want = append(want, fmt.Sprintf("%s/%d", m, i))
			if m == methods[1] {
				wantSingle++
			}
		}
		script = append(script, scriptedEvent(m, i))
	}
	sock := &scriptedSocketFake{closed: make(chan struct{})}
	// The reader starts with NewConn: subscribe before it reads anything.
	sock.mu.Lock()
	c := cdp.NewConn(sock, cdp.ConnOptions{EventQueue: 1024})
	defer c.Close()
	ch, cancel := c.Browser().Events(append(methods, methods[1])...)
	defer cancel()
	single, cancelSingle := c.Browser().Subscribe(methods[1])
	defer cancelSingle()
	sock.msgs = script
	sock.mu.Unlock()

	for i, w := range want {
		ev, ok := <-ch
		if !ok {
			t.Fatalf("channel closed after %d events", i)
		}
		if got := eventSeq(t, ev); got != w {
			t.Fatalf("event %d = %s, want %s", i, got, w)
		}
	}
	c.Close()
	for range ch { // drains, then closes (once: a double close would panic)
	}
	cancel() // after the end: no panic, no double close
	// A raw subscription to one of the methods still gets its own.
	n := 0
	for range single {
		n++
	}
	if n != wantSingle {
		t.Fatalf("single-method subscription got %d events, want %d", n, wantSingle)
	}
}

// An event is decoded once and every typed subscriber receives that value;
// one whose params do not decode reaches no typed subscriber and is counted
// as dropped (a raw subscriber still gets it); Page.downloadWillBegin, which
// cdproto no longer lists, decodes to cdp's own type.
func TestEventsDecodeOnceAndCountFailures(t *testing.T) {
	lifecycle := `{"method":"Page.lifecycleEvent","params":{"frameId":"F1","loaderId":"L1","name":"load","timestamp":1}}`
	broken := `{"method":"Page.lifecycleEvent","params":{"frameId":7}}`
	download := `{"method":"Page.downloadWillBegin","params":{"frameId":"F1","guid":"g1","url":"http://127.0.0.1/f","suggestedFilename":"f.txt"}}`
	sock := &scriptedSocketFake{closed: make(chan struct{})}
	sock.mu.Lock()
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	a, cancelA := c.Browser().Events(page.LifecycleEvent.Method, cdp.PageDownloadWillBegin.Method)
	defer cancelA()
	b, cancelB := c.Browser().Events(page.LifecycleEvent.Method)
	defer cancelB()
	raw, cancelRaw := c.Browser().Subscribe(page.LifecycleEvent.Method)
	defer cancelRaw()
	sock.msgs = [][]byte{[]byte(broken), []byte(lifecycle), []byte(download)}
	sock.mu.Unlock()

	va, vb := <-a, <-b
	lc, ok := va.(*page.EventLifecycleEvent)
	if !ok || lc.Name != "load" || lc.FrameID != "F1" {
		t.Fatalf("first typed event = %#v, want *page.EventLifecycleEvent{Name: load} (the broken one is not delivered)", va)
	}
	if vb != va {
		t.Fatal("the second subscriber got another decoding of the same event")
	}
	dl, ok := (<-a).(*cdp.EventPageDownloadWillBegin)
	if !ok || dl.GUID != "g1" || dl.SuggestedFilename != "f.txt" {
		t.Fatalf("Page.downloadWillBegin = %#v", dl)
	}
	if n := c.Browser().Dropped(); n != 2 {
		t.Fatalf("Dropped = %d, want 2: the broken event, once per typed subscriber", n)
	}
	if got := string(<-raw); got != `{"frameId":7}` {
		t.Fatalf("raw subscriber got %s, want the broken params", got)
	}
}

// Events refuses, by panicking, a method that has no cdproto type: a typo
// in a list of methods would otherwise be a subscription nothing reaches.
func TestEventsRefusesUnknownMethod(t *testing.T) {
	c := cdp.NewConn(&scriptedSocketFake{closed: make(chan struct{})}, cdp.ConnOptions{})
	defer c.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("Events accepted Nope.nothing")
		}
	}()
	c.Browser().Events(page.LifecycleEvent.Method, "Nope.nothing")
}

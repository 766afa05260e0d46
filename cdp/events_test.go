package cdp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

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

// SubscribeEvents delivers several methods on one channel in the order they
// were read, each once even when listed twice; other methods do not reach
// it; ending the connection closes it once.
func TestSubscribeEventsKeepsWireOrder(t *testing.T) {
	methods := []string{"Runtime.executionContextCreated", "Runtime.consoleAPICalled", "Runtime.executionContextsCleared"}
	var script [][]byte
	var want []string
	wantSingle := 0
	for i := range 300 {
		m := methods[(i*7)%len(methods)]
		if i%10 == 0 {
			m = "Network.requestWillBeSent" // not subscribed
		} else {
			want = append(want, fmt.Sprintf("%s/%d", m, i))
			if m == methods[1] {
				wantSingle++
			}
		}
		script = append(script, fmt.Appendf(nil, `{"method":%q,"params":{"n":%d}}`, m, i))
	}
	sock := &scriptedSocketFake{closed: make(chan struct{})}
	// The reader starts with NewConn: subscribe before it reads anything.
	sock.mu.Lock()
	c := cdp.NewConn(sock, cdp.ConnOptions{EventQueue: 1024})
	defer c.Close()
	ch, cancel := c.Browser().SubscribeEvents(append(methods, methods[1])...)
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
		var p struct {
			N int `json:"n"`
		}
		if err := jsonv2.Unmarshal(ev.Params, &p); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s/%d", ev.Method, p.N); got != w {
			t.Fatalf("event %d = %s, want %s", i, got, w)
		}
	}
	c.Close()
	for range ch { // drains, then closes (once: a double close would panic)
	}
	cancel() // after the end: no panic, no double close
	// A plain subscription to one of the methods still gets its own.
	n := 0
	for range single {
		n++
	}
	if n != wantSingle {
		t.Fatalf("single-method subscription got %d events, want %d", n, wantSingle)
	}
}

// Decode turns an event into cdproto's own type; an unknown method is an
// error, not a silent nil.
func TestEventDecodeIsCdprotoTyped(t *testing.T) {
	ev := cdp.Event{Method: "Page.lifecycleEvent", Params: jsonv2.Value(`{"frameId":"F1","loaderId":"L1","name":"load","timestamp":1}`)}
	v, err := ev.Decode()
	if err != nil {
		t.Fatal(err)
	}
	lc, ok := v.(*page.EventLifecycleEvent)
	if !ok || lc.Name != "load" || lc.FrameID != "F1" {
		t.Fatalf("Decode = %#v, want *page.EventLifecycleEvent{Name: load}", v)
	}
	if _, err := (cdp.Event{Method: "Nope.nothing", Params: jsonv2.Value(`{}`)}).Decode(); err == nil {
		t.Fatal("Decode accepted an unknown method")
	}
}

package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitIdleBusyWhileBrowserOrClient: the Runner is not idle while it
// has a browser or a client connection, and is once both are gone for the
// whole period.
func TestWaitIdleBusyWhileBrowserOrClient(t *testing.T) {
	t.Parallel()
	r := newRunner(Options{})
	const period = 50 * time.Millisecond
	var conns atomic.Int64
	open := conns.Load

	// Idle from the start: it ends within a few periods.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if !r.waitIdle(ctx, period, open) {
		t.Fatal("an idle Runner was not reported idle")
	}
	cancel()

	// A browser keeps it busy for as long as we look (20 periods).
	r.browsers["b-1"] = &Browser{}
	ctx, cancel = context.WithTimeout(context.Background(), 20*period)
	if r.waitIdle(ctx, period, open) {
		t.Fatal("a Runner with a browser was reported idle")
	}
	cancel()
	delete(r.browsers, "b-1")

	// So does an open client connection.
	conns.Store(1)
	ctx, cancel = context.WithTimeout(context.Background(), 20*period)
	if r.waitIdle(ctx, period, open) {
		t.Fatal("a Runner with a client connected was reported idle")
	}
	cancel()

	// Once the client leaves, the full period must pass again.
	done := make(chan bool, 1)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	go func() { done <- r.waitIdle(ctx, period, open) }()
	conns.Store(0)
	if !<-done {
		t.Fatal("the Runner was not idle after its client left")
	}
	if d := time.Since(start); d < period {
		t.Fatalf("reported idle after %v, before a whole period of %v", d, period)
	}
}

package lease

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// designOfferTTL is the offer lifetime the design gives, written out so a
// changed constant fails the tests.
const designOfferTTL = 10 * time.Minute

// TestOfferExpiryInstant: an offer is consumable one nanosecond before its
// expiry and not at it.
func TestOfferExpiryInstant(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	o := NewOffers()
	o.Now = func() time.Time { return now }
	early, _ := o.Offer(1)
	late, _ := o.Offer(2)
	now = start.Add(designOfferTTL - time.Nanosecond)
	if !o.Live(early) {
		t.Fatal("an offer 1ns before its expiry is not live")
	}
	if tab, err := o.Consume(early); err != nil || tab != 1 {
		t.Fatalf("consume 1ns before expiry = %d, %v", tab, err)
	}
	now = start.Add(designOfferTTL)
	if o.Live(late) {
		t.Fatal("an offer at its expiry is live")
	}
	if _, err := o.Consume(late); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("consume at expiry = %v, want %s", err, fsm.NotFound)
	}
}

func TestOfferLimitsPinned(t *testing.T) {
	if OfferTTL != designOfferTTL || MaxLiveOffers != 16 {
		t.Fatalf("offers: %v each, %d live; the design says %v and 16", OfferTTL, MaxLiveOffers, designOfferTTL)
	}
}

// TestReopenWhileDrainingKeepsOneHolder: a reconnect that closes and
// reopens the gates while a mutation still holds one does not let a second
// holder in; the gate opens when the first holder releases.
func TestReopenWhileDrainingKeepsOneHolder(t *testing.T) {
	g := NewGates()
	k := GateKey{"b", "t"}
	first, err := g.Acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	g.CloseBrowser("b")
	g.ReopenBrowser("b")
	if g.State(k) != GateDraining {
		t.Fatalf("state %s after reopen while held, want draining", g.State(k))
	}
	done, cancel := context.WithCancel(context.Background())
	cancel() // one try, no wait
	if second, err := g.Acquire(done, k); err == nil {
		second.Release()
		t.Fatal("a second holder got the gate while the first drained")
	}
	if err := first.Check(); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("the draining holder may still dispatch: %v", err)
	}
	first.Release()
	if g.State(k) != GateOpen {
		t.Fatalf("state %s after the drained holder released, want open", g.State(k))
	}
	next, err := g.Acquire(done, k)
	if err != nil {
		t.Fatalf("acquire after the drain: %v", err)
	}
	next.Release()
}

// TestGateNeverTwoHoldersUnderReconnects: holders and reconnects race; at
// no time do two holders of one gate overlap. The reconnects go on until
// the holders have held the gate often enough and at least one holder saw
// a reconnect begin under it (its Check refused): under load the
// reconnects alone could finish before any holder ran, and a test that
// raced nothing would prove nothing (it failed "peak holders 0" so).
func TestGateNeverTwoHoldersUnderReconnects(t *testing.T) {
	const (
		minReconnects = 200
		minHolds      = 200
		maxReconnects = 1 << 20 // the bound: a gate no holder gets is a failure, not a hang
	)
	g := NewGates()
	k := GateKey{"b", "t"}
	var holders, peak, holds, overlapped atomic.Int32
	var reconnects int
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // reconnects, each a close and a reopen
		defer wg.Done()
		defer close(stop)
		for reconnects = 1; reconnects <= maxReconnects; reconnects++ {
			g.CloseBrowser("b")
			g.ReopenBrowser("b")
			if reconnects >= minReconnects && holds.Load() >= minHolds && overlapped.Load() > 0 {
				return
			}
			runtime.Gosched()
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				tk, err := g.Acquire(ctx, k)
				cancel()
				if err != nil {
					continue // refused during a reconnect
				}
				n := holders.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				runtime.Gosched() // let a reconnect begin under this holder
				if fsm.IsCode(tk.Check(), fsm.BindingStale) {
					overlapped.Add(1)
				}
				holders.Add(-1)
				holds.Add(1)
				tk.Release()
			}
		}()
	}
	wg.Wait()
	if reconnects > maxReconnects {
		t.Fatalf("after %d reconnects the holders held %d times, %d of them under a reconnect; want %d and 1", maxReconnects, holds.Load(), overlapped.Load(), minHolds)
	}
	if p := peak.Load(); p != 1 {
		t.Fatalf("peak holders %d, want 1 (%d holds, %d under a reconnect)", p, holds.Load(), overlapped.Load())
	}
}

// TestForgottenGateRelease: a holder whose browser was forgotten releases
// nothing of a later gate of the same key.
func TestForgottenGateRelease(t *testing.T) {
	g := NewGates()
	k := GateKey{"b", "t"}
	old, _ := g.Acquire(context.Background(), k)
	g.Forget("b")
	cur, err := g.Acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	old.Release()
	if g.State(k) != GateHeld {
		t.Fatalf("state %s after the forgotten holder released, want held by the new one", g.State(k))
	}
	if err := old.Check(); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("forgotten ticket may dispatch: %v", err)
	}
	cur.Release()
}

// TestFailedTakeoverReleasesTheLock: when clearing a stale lock fails, the
// acquire fails and its flock is dropped.
func TestFailedTakeoverReleasesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lease")
	broken := errors.New("cannot remove")
	if _, err := AcquireProcess(path, LockStale, func() error { return broken }); !errors.Is(err, broken) {
		t.Fatalf("acquire = %v, want the removal's error", err)
	}
	l, err := AcquireProcess(path, LockAbsent, nil)
	if err != nil {
		t.Fatalf("the failed takeover kept the flock: %v", err)
	}
	if err := l.Release(); err != nil || l.State() != ProcessReleased {
		t.Fatalf("release = %v in %s", err, l.State())
	}
}

// TestDrainedGateStaysClosedMidReconnect: a holder that drains while the
// reconnect is still running gives the gate back closed, not open: no one
// acquires it until the reconnect reopens the browser, and then on the new
// generation.
func TestDrainedGateStaysClosedMidReconnect(t *testing.T) {
	g := NewGates()
	k := GateKey{"b", "t"}
	holder, err := g.Acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	g.CloseBrowser("b")
	holder.Release() // drained while the reconnect runs
	if s := g.State(k); s != GateClosed {
		t.Fatalf("state %s after the drained holder released mid-reconnect, want %s", s, GateClosed)
	}
	once, cancel := context.WithCancel(context.Background())
	cancel()
	if tk, err := g.Acquire(once, k); !fsm.IsCode(err, fsm.BindingStale) {
		if tk != nil {
			tk.Release()
		}
		t.Fatalf("acquire mid-reconnect = %v, want %s", err, fsm.BindingStale)
	}
	g.ReopenBrowser("b")
	tk, err := g.Acquire(once, k)
	if err != nil {
		t.Fatalf("acquire after the reopen: %v", err)
	}
	if err := tk.Check(); err != nil {
		t.Fatalf("the ticket on the new generation may not dispatch: %v", err)
	}
	tk.Release()
}

package lease

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestProcessLeaseProperties(t *testing.T)       { fsmtest.Check(t, ProcessSpec) }
func TestGateProperties(t *testing.T)               { fsmtest.Check(t, GateSpec) }
func TestBrowserGatesProperties(t *testing.T)       { fsmtest.Check(t, BrowserGatesSpec) }
func TestOfferProperties(t *testing.T)              { fsmtest.Check(t, OfferSpec) }
func TestOwnedAttachmentProperties(t *testing.T)    { fsmtest.Check(t, OwnedAttachmentSpec) }
func TestExternalAttachmentProperties(t *testing.T) { fsmtest.Check(t, ExternalAttachmentSpec) }
func TestLedgerProperties(t *testing.T)             { fsmtest.Check(t, LedgerSpec) }

// TestExternalTeardownCannotCloseOrKill checks the external declaration has
// no edge that closes the browser or kills a process, and that Validate
// would reject one.
func TestExternalTeardownCannotCloseOrKill(t *testing.T) {
	for _, e := range ExternalAttachmentSpec.Edges {
		if e.Effect == EffectCloseBrowser || e.Effect == EffectReap {
			t.Fatalf("external edge %s --%s--> %s carries %s", e.From, e.On, e.To, e.Effect)
		}
	}
	broken := *ExternalAttachmentSpec
	broken.Edges = append([]attachEdge(nil), broken.Edges...)
	broken.Edges[len(broken.Edges)-1].Effect = EffectReap // lost --close--> detached / reap_process_tree
	if err := broken.Validate(); err == nil {
		t.Fatal("Validate accepted reap_process_tree on an external attachment")
	}
}

func TestProcessLease(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lease")
	first, err := AcquireProcess(path, LockAbsent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireProcess(path, LockAbsent, nil); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Fatalf("second acquire while held = %v, want %s", err, fsm.LeaseHeld)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	first.Release() // twice is fine
	for _, c := range []struct {
		lock    LockState
		refused bool
	}{{LockLive, true}, {LockForeign, true}, {LockStale, false}, {LockAbsent, false}} {
		removed := false
		l, err := AcquireProcess(path, c.lock, func() error { removed = true; return nil })
		if c.refused != fsm.IsCode(err, fsm.LeaseHeld) {
			t.Fatalf("lock %d: err %v, refused want %v", c.lock, err, c.refused)
		}
		if removed != (c.lock == LockStale) {
			t.Fatalf("lock %d: removeStale called = %v", c.lock, removed)
		}
		if l != nil {
			if l.State() != ProcessHeld {
				t.Fatalf("state %s", l.State())
			}
			l.Release()
		}
	}
}

func TestGateSerializesOneTargetAndNotOthers(t *testing.T) {
	g := NewGates()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a := GateKey{"b1", "t1"}
	var inside atomic.Int32
	var maxInside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, err := g.Acquire(ctx, a)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			inside.Add(-1)
			tk.Release()
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Fatalf("%d mutations ran at once on one target", maxInside.Load())
	}
	held, _ := g.Acquire(ctx, a)
	other, err := g.Acquire(ctx, GateKey{"b1", "t2"})
	if err != nil {
		t.Fatalf("another target waited for a held gate: %v", err)
	}
	other.Release()
	held.Release()
}

func TestGateWaitIsBounded(t *testing.T) {
	g := NewGates()
	k := GateKey{"b", "t"}
	held, _ := g.Acquire(context.Background(), k)
	defer held.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, k); err == nil {
		t.Fatal("acquire of a held gate succeeded")
	}
}

func TestReconnectRefusesUndispatchedHolder(t *testing.T) {
	g := NewGates()
	k := GateKey{"b", "t"}
	ctx := context.Background()
	tk, _ := g.Acquire(ctx, k)
	g.CloseBrowser("b")
	if g.State(k) != GateDraining {
		t.Fatalf("state %s, want draining", g.State(k))
	}
	if err := tk.Check(); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("holder check during reconnect = %v", err)
	}
	// A new acquire waits through the reconnect, then runs on the new generation.
	got := make(chan *Ticket)
	go func() { t2, _ := g.Acquire(ctx, k); got <- t2 }()
	tk.Release()
	g.ReopenBrowser("b")
	t2 := <-got
	if err := t2.Check(); err != nil {
		t.Fatalf("ticket on the new generation refused: %v", err)
	}
	if err := tk.Check(); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("old ticket accepted on the new generation: %v", err)
	}
	t2.Release()
	if g.State(k) != GateOpen {
		t.Fatalf("state %s after reconnect, want open", g.State(k))
	}
}

func TestClosedGateRefusesAtDeadline(t *testing.T) {
	g := NewGates()
	g.CloseBrowser("b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, GateKey{"b", "t"}); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("acquire during reconnect = %v, want %s", err, fsm.BindingStale)
	}
}

func TestOffersBoundedAndSingleUse(t *testing.T) {
	o := NewOffers()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return now }
	var ids []string
	for i := 0; i < MaxLiveOffers; i++ {
		id, err := o.Offer(i)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := o.Offer(99); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("17th offer = %v", err)
	}
	if tab, err := o.Consume(ids[3]); err != nil || tab != 3 {
		t.Fatalf("consume = %d, %v", tab, err)
	}
	if _, err := o.Consume(ids[3]); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("second consume = %v", err)
	}
	now = now.Add(OfferTTL)
	if _, err := o.Consume(ids[4]); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("consume after 10 minutes = %v", err)
	}
	if _, err := o.Offer(1); err != nil {
		t.Fatalf("offer after expiry freed room: %v", err)
	}
}

func TestOffersSweepReportsExpired(t *testing.T) {
	o := NewOffers()
	now := time.Now()
	o.Now = func() time.Time { return now }
	a, _ := o.Offer(1)
	now = now.Add(OfferTTL / 2)
	b, _ := o.Offer(2)
	if !o.Live(a) || !o.Live(b) {
		t.Fatal("fresh offers are not live")
	}
	now = now.Add(OfferTTL / 2)
	if got := o.Sweep(); len(got) != 1 || got[0] != a {
		t.Fatalf("Sweep = %v, want only the first offer", got)
	}
	if o.Live(a) || !o.Live(b) {
		t.Fatal("Live disagrees with Sweep")
	}
	if got := o.Sweep(); len(got) != 0 {
		t.Fatalf("a second Sweep = %v", got)
	}
}

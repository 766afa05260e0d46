package lease

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// sender counts its dispatches and answers with settle.
type sender struct {
	n      atomic.Int32
	result []byte
	settle EffectTrigger
}

func (s *sender) send(context.Context) (Outcome, EffectTrigger) {
	s.n.Add(1)
	return Outcome{Result: s.result}, s.settle
}

func TestLedgerNeverReplays(t *testing.T) {
	l := NewLedger()
	s := &sender{settle: EffectAckLost}
	e, fresh, err := l.Claim("click-1", "")
	if err != nil || !fresh {
		t.Fatalf("Claim = %v, fresh %v", err, fresh)
	}
	if _, err := e.Dispatch(context.Background(), s.send); err != nil {
		t.Fatal(err)
	}
	if e.State() != EffectUnknown || !fsm.IsCode(e.Outcome().Err, fsm.OutcomeUnknown) {
		t.Fatalf("after a lost ack: %s, %v", e.State(), e.Outcome().Err)
	}
	if _, err := e.Dispatch(context.Background(), s.send); err == nil {
		t.Fatal("an unknown outcome was dispatched again")
	}
	again, fresh, err := l.Claim("click-1", "")
	if err != nil || fresh || again != e {
		t.Fatalf("Claim of a dispatched key = %v, fresh %v", err, fresh)
	}
	if _, err := again.Replay(context.Background()); !fsm.IsCode(err, fsm.OutcomeUnknown) {
		t.Fatalf("Replay of an unknown outcome = %v, want %s", err, fsm.OutcomeUnknown)
	}
	if _, err := l.Begin("click-1"); !fsm.IsCode(err, fsm.OutcomeUnknown) {
		t.Fatalf("Begin of a dispatched id = %v", err)
	}
	if err := e.Observe(true, []byte(`{"ok":true}`)); err != nil || e.State() != EffectReconciledYes {
		t.Fatalf("observe = %v, state %s", err, e.State())
	}
	if o, err := again.Replay(context.Background()); err != nil || string(o.Result) != `{"ok":true}` {
		t.Fatalf("Replay after the observation = %s, %v", o.Result, err)
	}
	if n := s.n.Load(); n != 1 {
		t.Fatalf("sent %d times, want 1", n)
	}
}

func TestLedgerRepeatedKeyGetsTheRecordedOutcome(t *testing.T) {
	l := NewLedger()
	s := &sender{settle: EffectAck, result: []byte(`{"clicked":1}`)}
	e, _, _ := l.Claim("k", "click#1")
	if o, err := e.Dispatch(context.Background(), s.send); err != nil || string(o.Result) != `{"clicked":1}` {
		t.Fatalf("Dispatch = %s, %v", o.Result, err)
	}
	for range 3 {
		e, fresh, err := l.Claim("k", "click#1")
		if err != nil || fresh {
			t.Fatalf("repeat Claim = %v, fresh %v", err, fresh)
		}
		if o, err := e.Replay(context.Background()); err != nil || string(o.Result) != `{"clicked":1}` {
			t.Fatalf("Replay = %s, %v", o.Result, err)
		}
	}
	if _, _, err := l.Claim("k", "type#2"); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("the key for another request = %v, want %s", err, fsm.InvalidArgument)
	}
	if n := s.n.Load(); n != 1 {
		t.Fatalf("sent %d times, want 1", n)
	}
}

func TestLedgerRetriesWhatDidNotHappen(t *testing.T) {
	l := NewLedger()
	e, _, _ := l.Claim("c", "d")
	if err := e.Cancel(fsm.Refuse(fsm.BindingStale, "stale")); err != nil || e.State() != EffectCancelled {
		t.Fatalf("Cancel = %v, %s", err, e.State())
	}
	if _, err := e.Dispatch(context.Background(), (&sender{settle: EffectAck}).send); err == nil {
		t.Fatal("a cancelled effect was dispatched")
	}
	e2, fresh, err := l.Claim("c", "d")
	if err != nil || !fresh || e2 == e {
		t.Fatalf("Claim after a cancel = %v, fresh %v", err, fresh)
	}
	if _, err := e2.Dispatch(context.Background(), (&sender{settle: EffectFail}).send); err != nil || e2.State() != EffectFailed {
		t.Fatalf("failed dispatch: %v, %s", err, e2.State())
	}
	if _, fresh, _ := l.Claim("c", "d"); !fresh {
		t.Fatal("an effect the browser said did not happen is not claimed afresh")
	}
}

// TestLedgerTrimNeverForgetsAnUnknownOutcome fills the ledger past its
// bound: the settled entries go, oldest first; the outcome_unknown one
// stays, so its key can never be dispatched again.
func TestLedgerTrimNeverForgetsAnUnknownOutcome(t *testing.T) {
	l := NewLedger()
	unknown, _, _ := l.Claim("unknown", "d")
	unknown.Dispatch(context.Background(), (&sender{settle: EffectAckLost}).send)
	for i := range MaxLedgerEntries + 100 {
		e, fresh, err := l.Claim(fmt.Sprint(i), "d")
		if err != nil || !fresh {
			t.Fatal(err)
		}
		e.Dispatch(context.Background(), (&sender{settle: EffectAck}).send)
	}
	if l.Len() != MaxLedgerEntries {
		t.Fatalf("ledger holds %d entries, bound %d", l.Len(), MaxLedgerEntries)
	}
	e, fresh, err := l.Claim("unknown", "d")
	if err != nil || fresh || e != unknown {
		t.Fatalf("the outcome_unknown key after a trim: fresh %v, %v", fresh, err)
	}
	if _, ok := l.Lookup("0"); ok {
		t.Fatal("the oldest settled entry was kept over the bound")
	}
	// Only live entries: none is forgotten, past the bound.
	live := NewLedger()
	for i := range MaxLedgerEntries + 10 {
		e, _, _ := live.Claim(fmt.Sprint(i), "d")
		e.Dispatch(context.Background(), (&sender{settle: EffectAckLost}).send)
	}
	if live.Len() != MaxLedgerEntries+10 {
		t.Fatalf("a ledger of unknown outcomes holds %d, want every one (%d)", live.Len(), MaxLedgerEntries+10)
	}
}

func TestLedgerBoundsRecordedResults(t *testing.T) {
	l := NewLedger()
	big := make([]byte, MaxOutcomeBytes+1)
	e, _, _ := l.Claim("big", "d")
	if o, _ := e.Dispatch(context.Background(), (&sender{settle: EffectAck, result: big}).send); len(o.Result) != len(big) {
		t.Fatalf("the dispatching caller got %d bytes of its own answer, want all %d", len(o.Result), len(big))
	}
	if o := e.Outcome(); !o.Dropped || o.Result != nil {
		t.Fatalf("a result over MaxOutcomeBytes was kept (%d bytes)", len(o.Result))
	}
	chunk := make([]byte, MaxOutcomeBytes)
	n := 2*MaxLedgerBytes/MaxOutcomeBytes + 1
	for i := range n {
		e, _, _ := l.Claim(fmt.Sprint(i), "d")
		e.Dispatch(context.Background(), (&sender{settle: EffectAck, result: chunk}).send)
	}
	l.mu.Lock()
	bytes := l.bytes
	l.mu.Unlock()
	if bytes > MaxLedgerBytes || bytes < MaxLedgerBytes-MaxOutcomeBytes {
		t.Fatalf("results held %d bytes, want at most %d and near it", bytes, MaxLedgerBytes)
	}
	if _, ok := l.Lookup(fmt.Sprint(n - 1)); !ok {
		t.Fatal("the newest entry was trimmed")
	}
}

// TestLedgerOneDispatchUnderConcurrentRepeats: callers racing with one key
// dispatch it once; the others wait for its outcome, within their bound.
func TestLedgerOneDispatchUnderConcurrentRepeats(t *testing.T) {
	l := NewLedger()
	release := make(chan struct{})
	var sent atomic.Int32
	send := func(context.Context) (Outcome, EffectTrigger) {
		sent.Add(1)
		<-release
		return Outcome{Result: []byte(`1`)}, EffectAck
	}
	first, _, _ := l.Claim("k", "d")
	go first.Dispatch(context.Background(), send)
	// A repeat whose bound ends while the effect is in flight is told so.
	e, fresh, _ := l.Claim("k", "d")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := e.Replay(ctx)
	cancel()
	if fresh || !fsm.IsCode(err, fsm.Timeout) {
		t.Fatalf("repeat in flight: fresh %v, %v; want %s", fresh, err, fsm.Timeout)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, fresh, err := l.Claim("k", "d")
			if err != nil || fresh {
				t.Errorf("Claim = %v, fresh %v", err, fresh)
				return
			}
			if o, err := e.Replay(context.Background()); err != nil || string(o.Result) != "1" {
				t.Errorf("Replay = %s, %v", o.Result, err)
			}
		}()
	}
	close(release)
	wg.Wait()
	if n := sent.Load(); n != 1 {
		t.Fatalf("sent %d times, want 1", n)
	}
}

// TestLedgerEmptySettlementIsUnknown: a send that answers with no
// settlement at all is not an acknowledgement: the effect is
// outcome_unknown, answered with that refusal, and never sent again.
func TestLedgerEmptySettlementIsUnknown(t *testing.T) {
	l := NewLedger()
	e, _, _ := l.Claim("k", "d")
	s := &sender{settle: ""}
	if _, err := e.Dispatch(context.Background(), s.send); err != nil {
		t.Fatal(err)
	}
	if e.State() != EffectUnknown {
		t.Fatalf("state %s after a settlement naming nothing, want %s", e.State(), EffectUnknown)
	}
	if _, err := e.Replay(context.Background()); !fsm.IsCode(err, fsm.OutcomeUnknown) {
		t.Fatalf("replay = %v, want %s", err, fsm.OutcomeUnknown)
	}
	if again, fresh, _ := l.Claim("k", "d"); fresh || again != e {
		t.Fatal("an effect of unknown outcome was claimed afresh")
	}
	if s.n.Load() != 1 {
		t.Fatalf("sent %d times, want 1", s.n.Load())
	}
}

// TestLedgerRetriesAfterObservedNotDone: an unknown outcome observed not
// to have happened is claimed afresh and sent again (its first time); one
// observed to have happened is answered from the record, never re-sent.
func TestLedgerRetriesAfterObservedNotDone(t *testing.T) {
	l := NewLedger()
	s := &sender{settle: EffectAckLost}
	e, _, _ := l.Claim("no", "d")
	e.Dispatch(context.Background(), s.send)
	if err := e.Observe(false, nil); err != nil || e.State() != EffectReconciledNo {
		t.Fatalf("observe not done = %v, %s", err, e.State())
	}
	retry, fresh, err := l.Claim("no", "d")
	if err != nil || !fresh || retry == e {
		t.Fatalf("claim after observed not done = %v, fresh %v: it must be sent afresh", err, fresh)
	}
	if _, err := retry.Dispatch(context.Background(), (&sender{settle: EffectAck, result: []byte("ok")}).send); err != nil || retry.State() != EffectAcked {
		t.Fatalf("the retry: %v, %s", err, retry.State())
	}

	yes, _, _ := l.Claim("yes", "d")
	yes.Dispatch(context.Background(), s.send)
	if err := yes.Observe(true, []byte("seen")); err != nil {
		t.Fatal(err)
	}
	if again, fresh, _ := l.Claim("yes", "d"); fresh || again != yes {
		t.Fatal("an effect observed done was claimed afresh")
	}
	if o, err := yes.Replay(context.Background()); err != nil || string(o.Result) != "seen" {
		t.Fatalf("replay of an observed effect = %q, %v", o.Result, err)
	}
	if s.n.Load() != 2 {
		t.Fatalf("sent %d times, want once per key", s.n.Load())
	}
}

// TestLedgerCancelWhileSendInFlight: a cancel that arrives while the send
// runs is refused by the machine; the send's own answer settles the effect
// and is what a repeat of the key gets.
func TestLedgerCancelWhileSendInFlight(t *testing.T) {
	l := NewLedger()
	e, _, _ := l.Claim("k", "d")
	inFlight, finish := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := e.Dispatch(context.Background(), func(context.Context) (Outcome, EffectTrigger) {
			close(inFlight)
			<-finish
			return Outcome{Result: []byte("clicked")}, EffectAck
		})
		done <- err
	}()
	<-inFlight
	if err := e.Cancel(fsm.Refuse(fsm.BindingStale, "stale")); !fsm.IsCode(err, fsm.TransitionRefused) {
		t.Fatalf("cancel while the send is in flight = %v, want %s", err, fsm.TransitionRefused)
	}
	if e.State() != EffectDispatched {
		t.Fatalf("state %s while the send runs, want %s", e.State(), EffectDispatched)
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if o, err := e.Replay(context.Background()); err != nil || string(o.Result) != "clicked" || e.State() != EffectAcked {
		t.Fatalf("after the send: %q, %v in %s; want the send's own acknowledgement", o.Result, err, e.State())
	}
}

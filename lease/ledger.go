package lease

import (
	"context"
	"slices"
	"sync"

	"github.com/webcodex/webcodex/fsm"
)

// EffectState is a state of one effect in the ledger.
type EffectState string

// Effect ledger states. Their exits are rendered from the declared edges (spec/).
const (
	EffectPending       EffectState = "pending"             // recorded, not sent.
	EffectDispatched    EffectState = "dispatched"          // sent once.
	EffectAcked         EffectState = "acked"               // the browser acknowledged it.
	EffectFailed        EffectState = "failed"              // the browser said it did not happen.
	EffectUnknown       EffectState = "outcome_unknown"     // the acknowledgement was lost; settled only by observation.
	EffectReconciledYes EffectState = "reconciled_done"     // an observation showed it happened.
	EffectReconciledNo  EffectState = "reconciled_not_done" // an observation showed it did not happen.
	EffectCancelled     EffectState = "cancelled"           // refused before dispatch.
)

// EffectTrigger is an event on one effect.
type EffectTrigger string

// Effect ledger triggers.
const (
	EffectDispatch EffectTrigger = "dispatch"
	EffectAck      EffectTrigger = "ack"
	EffectFail     EffectTrigger = "fail"
	EffectAckLost  EffectTrigger = "ack_lost"
	EffectObserve  EffectTrigger = "observe"
	EffectCancel   EffectTrigger = "cancel"
)

// EffectFacts are read by the ledger's guards.
type EffectFacts struct{ Happened bool }

var happened = &fsm.Guard[EffectFacts]{Name: "observed_happened", OK: func(e fsm.Env[EffectFacts]) bool { return e.Facts.Happened }}

// LedgerSpec is one effect's life in the ledger: dispatched at most once;
// a lost acknowledgement is outcome_unknown, and only an observation, never
// a re-dispatch, settles it.
var LedgerSpec = (&fsm.Spec[EffectState, EffectTrigger, EffectFacts]{
	Name:  "effect_ledger",
	Title: "Effect ledger",
	Guards: "Every side effect (a click, a keystroke batch, a navigation, a consent press, a process kill) has an ID and is " +
		"dispatched at most once. When its acknowledgement is lost (socket drop, document replaced mid-action) it is " +
		"outcome_unknown; there is no edge back to dispatch, so only an observation can settle it.",
	Initial: EffectPending,
	States: []fsm.StateDoc[EffectState]{
		fsm.Doc(EffectPending, "Recorded, not sent."),
		fsm.Doc(EffectDispatched, "Sent once."),
		fsm.Doc(EffectAcked, "The browser acknowledged it."),
		fsm.Doc(EffectFailed, "The browser answered that it did not happen."),
		fsm.Doc(EffectUnknown, "The acknowledgement was lost; only an observation settles it, and it is never re-dispatched."),
		fsm.Doc(EffectReconciledYes, "An observation showed it happened."),
		fsm.Doc(EffectReconciledNo, "An observation showed it did not happen."),
		fsm.Doc(EffectCancelled, "Refused before dispatch (stale binding, closed gate)."),
	},
	Triggers: []EffectTrigger{EffectDispatch, EffectAck, EffectFail, EffectAckLost, EffectObserve, EffectCancel},
	Edges: []fsm.Edge[EffectState, EffectTrigger, EffectFacts]{
		{From: EffectPending, On: EffectDispatch, To: EffectDispatched, Effect: EffectDispatchCDP},
		{From: EffectPending, On: EffectCancel, To: EffectCancelled},
		{From: EffectDispatched, On: EffectAck, To: EffectAcked},
		{From: EffectDispatched, On: EffectFail, To: EffectFailed},
		{From: EffectDispatched, On: EffectAckLost, To: EffectUnknown},
		{From: EffectUnknown, On: EffectObserve, To: EffectReconciledYes, Guard: happened},
		{From: EffectUnknown, On: EffectObserve, To: EffectReconciledNo, Guard: fsm.Not(happened)},
	},
	Effects:      []fsm.Effect{EffectDispatchCDP},
	Stable:       []EffectState{EffectPending, EffectUnknown},
	Terminal:     []EffectState{EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled},
	MaxTransient: 1,
	DrawFacts:    func(d fsm.Drawer) EffectFacts { return EffectFacts{Happened: d.Bool("happened")} },
}).MustValidate()

// EffectDispatchCDP is the ledger's one effect: sending the command.
const EffectDispatchCDP fsm.Effect = "dispatch_cdp"

// Bounds of the ledger.
const (
	// MaxLedgerEntries bounds the entries kept; the oldest settled ones go
	// first, and an entry whose outcome is not settled is never forgotten.
	MaxLedgerEntries = 4096
	// MaxOutcomeBytes bounds one recorded result; a larger one is not kept
	// (a repeat is told the effect happened, without its answer).
	MaxOutcomeBytes = 256 << 10
	// MaxLedgerBytes bounds the recorded results together; the oldest
	// settled entries go first.
	MaxLedgerBytes = 16 << 20
)

// Outcome is what an effect answered, kept so a repeated idempotency key
// gets it instead of a second dispatch.
type Outcome struct {
	Result []byte // the answer as the caller returned it (JSON); nil with Err
	Err    error  // the refusal or failure the caller returned
	// Dropped: the answer was larger than MaxOutcomeBytes and was not kept.
	Dropped bool
}

// errKeyReused is the refusal for an idempotency key already used for a
// different request.
func errKeyReused() error {
	return fsm.Refuse(fsm.InvalidArgument, "this idempotency key was used for a different request; use a new key")
}

// Ledger records effects by idempotency key. Safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	entries map[string]*Entry
	order   []string // keys, oldest first
	bytes   int      // recorded results together
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{entries: map[string]*Entry{}} }

// Entry is one effect's record; its life is LedgerSpec, driven by an
// fsm.Owner whose one effect is the send the caller hands to Dispatch.
type Entry struct {
	Key    string
	digest string // what the request was, so a reused key is told apart
	l      *Ledger
	m      *fsm.Owner[EffectState, EffectTrigger, EffectFacts]
	done   chan struct{} // closed when the effect left pending/dispatched

	mu      sync.Mutex // guards outcome
	outcome Outcome
}

// sending is one Dispatch's input to dispatch_cdp: the caller's send, and
// what it answered, whole (the ledger keeps it bounded).
type sending struct {
	send func(context.Context) (Outcome, EffectTrigger)
	sent Outcome
}

// Claim records key's effect, or finds the one recorded under it. fresh
// means the caller dispatches it (Dispatch, or Cancel when it is refused
// before). Otherwise the caller answers with [Entry.Replay]: the recorded
// outcome, never a second dispatch. An effect known not to have happened
// (cancelled, failed, observed not done) is claimed afresh: dispatching it
// now is its first time. digest names the request; a key reused for a
// different request is refused.
func (l *Ledger) Claim(key, digest string) (e *Entry, fresh bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.entries[key]; ok {
		if old.digest != digest {
			return nil, false, errKeyReused()
		}
		switch old.State() {
		case EffectCancelled, EffectFailed, EffectReconciledNo:
			l.forgetLocked(key)
		default:
			return old, false, nil
		}
	}
	e = &Entry{Key: key, digest: digest, l: l, done: make(chan struct{})}
	e.m = fsm.NewOwner(LedgerSpec, fsm.Effects[EffectState, EffectTrigger]{
		EffectDispatchCDP: fsm.Takes(e.dispatch),
	})
	l.entries[key] = e
	l.order = append(l.order, key)
	l.trimLocked()
	return e, true, nil
}

// Begin records a new effect under id; an id already recorded is refused
// (outcome_unknown when it may have run), so a caller can never replay it.
func (l *Ledger) Begin(id string) (*Entry, error) {
	e, fresh, err := l.Claim(id, "")
	if err != nil {
		return nil, err
	}
	if !fresh {
		if st := e.State(); st == EffectDispatched || st == EffectUnknown || st == EffectPending {
			return nil, fsm.Refuse(fsm.OutcomeUnknown, "this effect was already dispatched; observe the page instead of retrying")
		}
		return nil, fsm.Refuse(fsm.InvalidArgument, "this effect id was already used")
	}
	return e, nil
}

func (l *Ledger) forgetLocked(key string) {
	if e := l.entries[key]; e != nil {
		l.bytes -= e.size()
	}
	delete(l.entries, key)
	if i := slices.Index(l.order, key); i >= 0 {
		l.order = slices.Delete(l.order, i, i+1)
	}
}

// trimLocked drops the oldest settled entries while the ledger is over
// either bound. An entry not settled (pending, dispatched, outcome_unknown)
// is never dropped: forgetting an outcome_unknown would let its key be
// dispatched again.
func (l *Ledger) trimLocked() {
	for len(l.order) > MaxLedgerEntries || l.bytes > MaxLedgerBytes {
		victim := ""
		for _, key := range l.order {
			if e := l.entries[key]; e == nil || e.settled() {
				victim = key
				break
			}
		}
		if victim == "" {
			return // every entry is live: keep them all rather than forget one
		}
		l.forgetLocked(victim)
	}
}

// Len returns the number of entries kept.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Lookup returns the entry recorded under key, if it is kept.
func (l *Ledger) Lookup(key string) (*Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	return e, ok
}

func (e *Entry) settled() bool {
	switch e.State() {
	case EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled:
		return true
	}
	return false
}

func (e *Entry) size() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.outcome.Result)
}

// State returns the effect's state.
func (e *Entry) State() EffectState { return e.m.State() }

// Trace returns the effect machine's transitions.
func (e *Entry) Trace() []fsm.Record { return e.m.Trace() }

// record keeps o as the effect's outcome (its result bounded). An effect
// that left pending with this step (from) wakes the callers waiting on it;
// one settled from outcome_unknown woke them when it became unknown.
func (e *Entry) record(o Outcome, from EffectState) {
	if len(o.Result) > MaxOutcomeBytes {
		o.Result, o.Dropped = nil, true
	}
	e.mu.Lock()
	old := len(e.outcome.Result)
	e.outcome = o
	e.mu.Unlock()
	if from == EffectPending {
		close(e.done)
	}
	e.l.mu.Lock()
	if e.l.entries[e.Key] == e {
		e.l.bytes += len(o.Result) - old
		e.l.trimLocked()
	}
	e.l.mu.Unlock()
}

// Dispatch sends the effect once: the machine moves to dispatched and runs
// dispatch_cdp, which is send; send's answer (ack, fail or ack_lost) settles
// it, and its outcome is recorded. A second Dispatch is refused by the
// machine and sends nothing.
//
// The outcome returned is send's own, whole; the ledger keeps it bounded.
func (e *Entry) Dispatch(ctx context.Context, send func(context.Context) (Outcome, EffectTrigger)) (Outcome, error) {
	call := &sending{send: send}
	if _, err := fsm.FireWith(ctx, e.m, EffectDispatch, call); err != nil {
		return Outcome{}, err
	}
	if call.sent.Err == nil && call.sent.Result == nil {
		return e.Outcome(), nil // ack_lost without an answer: the refusal recorded
	}
	return call.sent, nil
}

// dispatch is dispatch_cdp, reachable only through the entry's owner: it
// runs the send Dispatch was handed, once.
func (e *Entry) dispatch(ctx context.Context, step fsm.Step[EffectState, EffectTrigger], call *sending) (EffectTrigger, error) {
	o, settle := call.send(ctx)
	call.sent = o
	switch settle {
	case EffectAck, EffectFail, EffectAckLost:
	default:
		settle = EffectAckLost // an answer that says nothing is not an acknowledgement
	}
	if settle == EffectAckLost && o.Err == nil {
		o.Err = fsm.Refuse(fsm.OutcomeUnknown, "the action was dispatched but its acknowledgement was lost; it will not be replayed")
	}
	e.record(o, step.From)
	return settle, nil
}

// Cancel records that the effect was refused before dispatch; err is what
// the caller answered. A repeat of the key may dispatch it.
func (e *Entry) Cancel(err error) error {
	step, ferr := e.m.Fire(context.Background(), EffectCancel)
	if ferr != nil {
		return ferr
	}
	e.record(Outcome{Err: err}, step.From)
	return nil
}

// Observe settles an unknown outcome from an observation of the page:
// happened, with the answer the observation gives, or not. Only an
// outcome_unknown effect accepts it.
func (e *Entry) Observe(happenedNow bool, result []byte) error {
	e.m.SetFacts(func(f *EffectFacts) { f.Happened = happenedNow })
	step, err := e.m.Fire(context.Background(), EffectObserve)
	if err != nil {
		return err
	}
	if happenedNow {
		e.record(Outcome{Result: result}, step.From)
	} else {
		e.record(Outcome{Err: fsm.Refuse(fsm.OutcomeUnknown, "an observation showed the effect did not happen")}, step.From)
	}
	return nil
}

// Outcome returns what is recorded now.
func (e *Entry) Outcome() Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.outcome
}

// Replay answers a repeated key: it waits (within ctx) for an effect still
// in flight, then returns the recorded outcome. An outcome_unknown effect
// stays unknown: the answer is the outcome_unknown refusal until an
// observation settles it.
func (e *Entry) Replay(ctx context.Context) (Outcome, error) {
	select {
	case <-e.done:
	case <-ctx.Done():
		return Outcome{}, fsm.Refuse(fsm.Timeout, "the effect under this idempotency key is still in flight; ask again").WithCause(ctx.Err())
	}
	o := e.Outcome()
	if e.State() == EffectUnknown {
		return o, fsm.Refuse(fsm.OutcomeUnknown, "the effect under this idempotency key was dispatched once and its outcome is unknown; it is never dispatched again: observe the page").WithCause(o.Err)
	}
	return o, nil
}

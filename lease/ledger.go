package lease

import (
	"context"
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
		{From: EffectPending, On: EffectDispatch, To: EffectDispatched, Effect: "dispatch_cdp"},
		{From: EffectPending, On: EffectCancel, To: EffectCancelled},
		{From: EffectDispatched, On: EffectAck, To: EffectAcked},
		{From: EffectDispatched, On: EffectFail, To: EffectFailed},
		{From: EffectDispatched, On: EffectAckLost, To: EffectUnknown},
		{From: EffectUnknown, On: EffectObserve, To: EffectReconciledYes, Guard: happened},
		{From: EffectUnknown, On: EffectObserve, To: EffectReconciledNo, Guard: fsm.Not(happened)},
	},
	Effects:      []fsm.Effect{"dispatch_cdp"},
	Stable:       []EffectState{EffectPending, EffectUnknown},
	Terminal:     []EffectState{EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled},
	MaxTransient: 1,
	DrawFacts:    func(d fsm.Drawer) EffectFacts { return EffectFacts{Happened: d.Bool("happened")} },
}).MustValidate()

// MaxLedgerEntries bounds the ledger; the oldest settled entries go first.
const MaxLedgerEntries = 4096

// Ledger records effects by ID. Safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	entries map[string]*Entry
	order   []string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{entries: map[string]*Entry{}} }

// Entry is one effect's record.
type Entry struct {
	ID    string
	mu    sync.Mutex
	facts EffectFacts
	m     *fsm.Machine[EffectState, EffectTrigger, EffectFacts]
}

// Begin records a new effect. An ID already in the ledger is refused with
// outcome_unknown when it may have run, so a caller can never replay it.
func (l *Ledger) Begin(id string) (*Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[id]; ok {
		if st := e.State(); st == EffectDispatched || st == EffectUnknown {
			return nil, fsm.Refuse(fsm.OutcomeUnknown, "this effect was already dispatched; observe the page instead of retrying")
		}
		return nil, fsm.Refuse(fsm.InvalidArgument, "this effect id was already used")
	}
	e := &Entry{ID: id}
	e.m = LedgerSpec.Build(func() EffectFacts { return e.facts })
	l.entries[id] = e
	l.order = append(l.order, id)
	l.trimLocked()
	return e, nil
}

func (l *Ledger) trimLocked() {
	for len(l.order) > MaxLedgerEntries {
		victim := -1
		for i, id := range l.order {
			if e := l.entries[id]; e == nil || e.settled() {
				victim = i
				break
			}
		}
		if victim < 0 {
			return // every entry is live: keep them all rather than forget one
		}
		delete(l.entries, l.order[victim])
		l.order = append(l.order[:victim], l.order[victim+1:]...)
	}
}

// Len returns the number of entries kept.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

func (e *Entry) settled() bool {
	switch e.State() {
	case EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled:
		return true
	}
	return false
}

func (e *Entry) fire(t EffectTrigger) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.m.Fire(context.Background(), t)
	return err
}

// State returns the effect's state.
func (e *Entry) State() EffectState { return e.m.State() }

// Dispatch marks the effect sent. It fails if it was sent before.
func (e *Entry) Dispatch() error { return e.fire(EffectDispatch) }

// Ack records the acknowledgement.
func (e *Entry) Ack() error { return e.fire(EffectAck) }

// Fail records that the browser refused it.
func (e *Entry) Fail() error { return e.fire(EffectFail) }

// Cancel records a refusal before dispatch.
func (e *Entry) Cancel() error { return e.fire(EffectCancel) }

// AckLost records a lost acknowledgement and returns the outcome_unknown
// refusal to report.
func (e *Entry) AckLost() error {
	e.fire(EffectAckLost)
	return fsm.Refuse(fsm.OutcomeUnknown, "the action was dispatched but its acknowledgement was lost; it will not be replayed")
}

// Observe settles an unknown outcome from an observation.
func (e *Entry) Observe(happenedNow bool) error {
	e.mu.Lock()
	e.facts = EffectFacts{Happened: happenedNow}
	e.mu.Unlock()
	return e.fire(EffectObserve)
}

package netguard

import (
	"context"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestDownloadProperties(t *testing.T) { fsmtest.Check(t, DownloadSpec) }

// TestDownloadTable: each (state, trigger, facts) of a download and what it
// leads to: the state, the effect the jail runs, or a refusal that changes
// nothing (a late or repeated report).
func TestDownloadTable(t *testing.T) {
	path := map[DownloadState][]DownloadTrigger{
		DownloadInProgress: nil,
		DownloadCancelling: {DownloadOverBound},
		DownloadCompleted:  {DownloadFinished},
		DownloadCanceled:   {DownloadCancelled},
		DownloadSaved:      {DownloadFinished, DownloadMoved},
	}
	for _, c := range []struct {
		name   string
		from   DownloadState
		on     DownloadTrigger
		within bool
		to     DownloadState
		effect fsm.Effect
		refuse bool
	}{
		{"finished within its bound", DownloadInProgress, DownloadFinished, true, DownloadCompleted, fsm.NoEffect, false},
		{"finished past its bound between two reports", DownloadInProgress, DownloadFinished, false, DownloadCanceled, EffectRemoveFile, false},
		{"over a bound", DownloadInProgress, DownloadOverBound, true, DownloadCancelling, EffectCancelDownload, false},
		{"the browser cancels it", DownloadInProgress, DownloadCancelled, true, DownloadCanceled, EffectRemoveFile, false},
		{"the cancel is accepted", DownloadCancelling, DownloadCancelled, true, DownloadCanceled, EffectRemoveFile, false},
		{"finished while cancelling: removed all the same", DownloadCancelling, DownloadFinished, true, DownloadCanceled, EffectRemoveFile, false},
		{"saved", DownloadCompleted, DownloadMoved, true, DownloadSaved, fsm.NoEffect, false},
		{"its file went missing", DownloadCompleted, DownloadFileGone, true, DownloadCanceled, fsm.NoEffect, false},
		{"cancelled twice", DownloadCancelling, DownloadOverBound, true, DownloadCancelling, fsm.NoEffect, true},
		{"a completed one is not over a bound", DownloadCompleted, DownloadOverBound, true, DownloadCompleted, fsm.NoEffect, true},
		{"a completed one is not cancelled", DownloadCompleted, DownloadCancelled, true, DownloadCompleted, fsm.NoEffect, true},
		{"saved once", DownloadSaved, DownloadMoved, true, DownloadSaved, fsm.NoEffect, true},
		{"only a completed one is saved", DownloadInProgress, DownloadMoved, true, DownloadInProgress, fsm.NoEffect, true},
		{"a cancelling one is not saved", DownloadCancelling, DownloadMoved, true, DownloadCancelling, fsm.NoEffect, true},
		{"a late report after the end", DownloadCanceled, DownloadFinished, true, DownloadCanceled, fsm.NoEffect, true},
		{"a late cancel after the save", DownloadSaved, DownloadCancelled, true, DownloadSaved, fsm.NoEffect, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			facts := DownloadFacts{WithinBound: true}
			m := DownloadSpec.Build(func() DownloadFacts { return facts })
			for _, tr := range path[c.from] {
				if _, err := m.Fire(context.Background(), tr); err != nil {
					t.Fatalf("reaching %s: %v", c.from, err)
				}
			}
			if m.State() != c.from {
				t.Fatalf("the path reached %s, not %s", m.State(), c.from)
			}
			facts.WithinBound = c.within
			step, err := m.Fire(context.Background(), c.on)
			if c.refuse {
				if !fsm.IsCode(err, fsm.TransitionRefused) || m.State() != c.from {
					t.Fatalf("%s in %s = %v (now %s), want transition_refused", c.on, c.from, err, m.State())
				}
				return
			}
			if err != nil || step.To != c.to || step.Effect != c.effect {
				t.Fatalf("%s in %s = %+v, %v; want %s with %q", c.on, c.from, step, err, c.to, c.effect)
			}
		})
	}
}

// TestListedState: a listing names cancelling as in_progress (its file is
// there until the browser confirms); every other state by its own name.
func TestListedState(t *testing.T) {
	for st, want := range map[DownloadState]DownloadState{
		DownloadInProgress: DownloadInProgress,
		DownloadCancelling: DownloadInProgress,
		DownloadCompleted:  DownloadCompleted,
		DownloadCanceled:   DownloadCanceled,
		DownloadSaved:      DownloadSaved,
	} {
		if got := listedState(st); got != want {
			t.Errorf("listedState(%s) = %s, want %s", st, got, want)
		}
	}
}

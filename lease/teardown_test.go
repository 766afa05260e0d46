package lease

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

// teardownCase is one attachment declaration with the teardown its owner
// runs.
type teardownCase struct {
	spec *fsm.Spec[AttachState, AttachTrigger, struct{}]
	next map[AttachState]AttachTrigger
}

var teardownCases = []teardownCase{
	{OwnedAttachmentSpec, OwnedTeardown},
	{ExternalAttachmentSpec, DetachTeardown},
	{SharedTabSpec, DetachTeardown},
}

// countingOwner is an owner of spec whose effects count their runs. Each
// effect answers as an owner may: nothing (the teardown's Run fires the
// next trigger) or the teardown's next trigger from where the edge went
// (the owner chains it itself); start_reconnect answers with a drawn
// outcome, as the reconnect machine would.
func countingOwner(rt *rapid.T, c teardownCase) (*fsm.Owner[AttachState, AttachTrigger, struct{}], map[fsm.Effect]int) {
	runs := map[fsm.Effect]int{}
	effects := fsm.Effects[AttachState, AttachTrigger]{}
	for _, ef := range c.spec.EffectNames() {
		effects[ef] = func(_ context.Context, step fsm.Step[AttachState, AttachTrigger]) (AttachTrigger, error) {
			runs[step.Effect]++
			if step.Effect == EffectReconnect {
				return rapid.SampledFrom([]AttachTrigger{AttachReconnected, AttachGiveUp}).Draw(rt, "reconnect outcome"), nil
			}
			if rapid.Bool().Draw(rt, "effect chains the teardown") {
				return c.next[step.To], nil
			}
			return "", nil
		}
	}
	return fsm.NewOwner(c.spec, effects), runs
}

func tearDown(o *fsm.Owner[AttachState, AttachTrigger, struct{}], next map[AttachState]AttachTrigger) error {
	_, err := o.Run(context.Background(), next, func(error) AttachTrigger { return "" })
	return err
}

// TestTeardownRunsOnceFromEveryRest: whatever outside events an attachment
// took first (launch or attach, losses, reconnects, a close), its teardown
// brings it to the terminal state having run release_attachment exactly
// once (never zero, never twice), every other uncounted effect at most
// once; and release has not run while the machine is anywhere else. A
// second teardown fires nothing.
func TestTeardownRunsOnceFromEveryRest(t *testing.T) {
	defer fsmtest.AtLeastMinChecks()()
	for _, c := range teardownCases {
		t.Run(c.spec.Name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				o, runs := countingOwner(rt, c)
				for range rapid.IntRange(0, 12).Draw(rt, "events") {
					_, _ = o.Fire(context.Background(), rapid.SampledFrom(c.spec.Triggers).Draw(rt, "event")) // a refusal ran nothing
					if terminal := c.spec.IsTerminal(o.State()); terminal != (runs[EffectRelease] == 1) || runs[EffectRelease] > 1 {
						rt.Fatalf("in %s release_attachment ran %d times", o.State(), runs[EffectRelease])
					}
				}
				if err := tearDown(o, c.next); err != nil {
					rt.Fatalf("teardown from %s: %v", o.State(), err)
				}
				if !c.spec.IsTerminal(o.State()) || runs[EffectRelease] != 1 {
					rt.Fatalf("teardown rested in %s with release_attachment run %d times; want terminal, once", o.State(), runs[EffectRelease])
				}
				for ef, n := range runs {
					if ef != EffectReconnect && n > 1 {
						rt.Fatalf("%s ran %d times", ef, n)
					}
				}
				before := len(o.Trace())
				if err := tearDown(o, c.next); err != nil || len(o.Trace()) != before || runs[EffectRelease] != 1 {
					rt.Fatalf("a second teardown moved the machine (%v) or released again (%d)", err, runs[EffectRelease])
				}
			})
		})
	}
}

// TestTeardownMapsCoverEveryRest: the teardown maps name a permitted
// trigger for every state but the terminal one and reconnecting (which the
// reconnect effect's answer always leaves before the owner rests), and
// nothing for the terminal state, so a teardown never stops half-way and
// never runs twice.
func TestTeardownMapsCoverEveryRest(t *testing.T) {
	for _, c := range teardownCases {
		for _, st := range c.spec.StateNames() {
			tr, ok := c.next[st]
			switch {
			case c.spec.IsTerminal(st) && ok:
				t.Errorf("%s: teardown fires %s in the terminal state %s", c.spec.Name, tr, st)
			case c.spec.IsTerminal(st) || st == AttachReconnecting:
			case !ok:
				t.Errorf("%s: teardown names no trigger in %s: it would stop there with nothing released", c.spec.Name, st)
			default:
				if _, found := c.spec.Next(st, tr, fsm.Env[struct{}]{}); !found {
					t.Errorf("%s: teardown fires %s in %s, which the machine refuses", c.spec.Name, tr, st)
				}
			}
		}
	}
}

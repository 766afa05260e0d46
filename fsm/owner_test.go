package fsm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

type collect struct {
	mu   sync.Mutex
	recs []Record
}

func (c *collect) Record(r Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
}

func TestOwnerRunsOnlyTheEffectTheMachineReturned(t *testing.T) {
	var ran []string
	facts := toyFacts{OK: true}
	var o *Owner[toyState, toyTrigger, toyFacts]
	o = NewOwner(goodToy(), func() toyFacts { return facts }, Effects[toyState, toyTrigger]{
		"lead": func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) {
			ran = append(ran, "lead")
			return "dialed", nil // chained: the leader dials at once
		},
		"dial": func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) {
			ran = append(ran, "dial")
			return "", nil
		},
		"invalidate": func(_ context.Context, s Step[toyState, toyTrigger]) (toyTrigger, error) {
			ran = append(ran, "invalidate#"+s.EffectID)
			return "", nil
		},
	})
	ctx := context.Background()
	step, err := o.Fire(ctx, "lost")
	if err != nil || step.To != "invalidating" {
		t.Fatalf("Fire(lost) = %+v, %v; want a chain ending in invalidating", step, err)
	}
	if _, err := o.Fire(ctx, "lost"); !IsCode(err, TransitionRefused) {
		t.Fatalf("Fire(lost) in invalidating = %v, want transition_refused", err)
	}
	if _, err := o.Fire(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, ","); got != "lead,invalidate#invalidate#invalidations=1" {
		t.Fatalf("effects run = %s", got)
	}
}

func TestOwnerStopsOnEffectError(t *testing.T) {
	boom := errors.New("boom")
	o := NewOwner(goodToy(), nil, Effects[toyState, toyTrigger]{
		"lead":       func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", boom },
		"dial":       func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
		"invalidate": func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
	})
	step, err := o.Fire(context.Background(), "lost")
	if !errors.Is(err, boom) || step.To != "dialing" || o.State() != "dialing" {
		t.Fatalf("Fire = %+v, %v, state %s", step, err, o.State())
	}
}

func TestOwnerPanicsOnEffectTableMismatch(t *testing.T) {
	for name, table := range map[string]Effects[toyState, toyTrigger]{
		"missing": {"lead": nil, "dial": nil},
		"extra": {
			"lead":           func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
			"dial":           func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
			"invalidate":     func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
			"press_anything": func(context.Context, Step[toyState, toyTrigger]) (toyTrigger, error) { return "", nil },
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("NewOwner accepted a mismatched effect table")
				}
			}()
			NewOwner(goodToy(), nil, table)
		})
	}
}

func TestTraceConformsAndCatchesForeignPaths(t *testing.T) {
	rec := &collect{}
	old := SetRecorder(rec)
	defer SetRecorder(old)
	facts := toyFacts{OK: true}
	m := goodToy().Build(func() toyFacts { return facts })
	ctx := context.Background()
	for _, tr := range []toyTrigger{"lost", "retry", "dialed", "done", "lost"} {
		if _, err := m.Fire(ctx, tr); err != nil {
			t.Fatalf("Fire(%s): %v", tr, err)
		}
	}
	var mine []Record
	for _, r := range rec.recs {
		if r.Instance == m.instance {
			mine = append(mine, r)
		}
	}
	if len(mine) != 5 || len(m.Trace()) != 5 {
		t.Fatalf("recorded %d, traced %d transitions, want 5", len(mine), len(m.Trace()))
	}
	c, ok := LookupConformer("toy")
	if !ok {
		t.Fatal("toy declaration not registered")
	}
	if err := c.Conform(mine); err != nil {
		t.Fatalf("a real run does not conform: %v", err)
	}
	for name, mutate := range map[string]func([]Record) []Record{
		"undeclared edge": func(r []Record) []Record { r[1].To = "ready"; r[2].From = "ready"; return r },
		"wrong effect":    func(r []Record) []Record { r[1].Effect = "press_anything"; return r },
		"replayed id":     func(r []Record) []Record { r[4].EffectID = r[0].EffectID; return r },
		"gap":             func(r []Record) []Record { return append(r[:2:2], r[3:]...) },
		"not initial":     func(r []Record) []Record { r[0].From = "dialing"; return r },
	} {
		if err := c.Conform(mutate(append([]Record(nil), mine...))); err == nil {
			t.Errorf("%s: Conform accepted a trace that is not a path of the declaration", name)
		}
	}
}

func TestTraceIsBounded(t *testing.T) {
	var tr trace
	for i := 0; i < MaxTrace+10; i++ {
		tr.add(Record{On: "x"}, false)
	}
	if len(tr.buf) != MaxTrace || tr.buf[0].Seq != 10 || tr.buf[MaxTrace-1].Seq != MaxTrace+9 {
		t.Fatalf("trace kept %d records from seq %d", len(tr.buf), tr.buf[0].Seq)
	}
}

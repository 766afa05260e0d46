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
	var o *Owner[toyState, toyTrigger, toyFacts]
	o = NewOwner(goodToy(), Effects[toyState, toyTrigger]{
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
	o.SetFacts(func(f *toyFacts) { f.OK = true })
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
	o := NewOwner(goodToy(), Effects[toyState, toyTrigger]{
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
			NewOwner(goodToy(), table)
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

// toyOwner is the toy's owner with every effect answering what answer says
// and recording what ran.
func toyOwner(answer map[Effect]func() (toyTrigger, error)) (*Owner[toyState, toyTrigger, toyFacts], *[]string) {
	var ran []string
	effects := Effects[toyState, toyTrigger]{}
	for _, ef := range []Effect{"lead", "dial", "invalidate"} {
		effects[ef] = func(_ context.Context, s Step[toyState, toyTrigger]) (toyTrigger, error) {
			ran = append(ran, s.EffectID)
			if a := answer[ef]; a != nil {
				return a()
			}
			return "", nil
		}
	}
	o := NewOwner(goodToy(), effects)
	o.SetFacts(func(f *toyFacts) { f.OK = true })
	return o, &ran
}

// TestOwnerChainedRefusal: an effect answers with a trigger the machine
// refuses; the refusal is returned, typed, with the step whose effect
// answered, and nothing more runs.
func TestOwnerChainedRefusal(t *testing.T) {
	o, ran := toyOwner(map[Effect]func() (toyTrigger, error){
		"lead": func() (toyTrigger, error) { return "done", nil }, // dialing does not take done
	})
	step, err := o.Fire(context.Background(), "lost")
	if !IsCode(err, TransitionRefused) {
		t.Fatalf("Fire = %v, want the chained trigger's transition_refused", err)
	}
	if step.From != "ready" || step.On != "lost" || step.To != "dialing" || step.EffectID != "lead#losses=1" {
		t.Fatalf("step %+v, want the lost step whose effect answered", step)
	}
	if o.State() != "dialing" || strings.Join(*ran, ",") != "lead#losses=1" {
		t.Fatalf("state %s, ran %v", o.State(), *ran)
	}
}

// TestOwnerErrorBesideNextTrigger: an effect that fails and still names a
// next trigger stops the chain: the error is returned, the trigger is not
// fired.
func TestOwnerErrorBesideNextTrigger(t *testing.T) {
	boom := errors.New("boom")
	o, ran := toyOwner(map[Effect]func() (toyTrigger, error){
		"lead": func() (toyTrigger, error) { return "retry", boom },
	})
	step, err := o.Fire(context.Background(), "lost")
	if !errors.Is(err, boom) || step.To != "dialing" || o.State() != "dialing" || o.Counter("attempts") != 0 {
		t.Fatalf("Fire = %+v, %v; state %s, attempts %d: the trigger beside the error was fired", step, err, o.State(), o.Counter("attempts"))
	}
	if len(*ran) != 1 {
		t.Fatalf("effects ran %v, want only the failing one", *ran)
	}
}

// TestOwnerChainRunsEachEffectOnce: a chain of three effects, each answering
// the next trigger, runs each exactly once, in order, with its own ID, and
// returns the last step.
func TestOwnerChainRunsEachEffectOnce(t *testing.T) {
	n := 0
	o, ran := toyOwner(map[Effect]func() (toyTrigger, error){
		"lead": func() (toyTrigger, error) { return "retry", nil },
		"dial": func() (toyTrigger, error) {
			if n++; n < 2 {
				return "retry", nil
			}
			return "dialed", nil
		},
	})
	step, err := o.Fire(context.Background(), "lost")
	if err != nil || step.From != "dialing" || step.On != "dialed" || step.To != "invalidating" {
		t.Fatalf("Fire = %+v, %v; want the chain to end on dialed", step, err)
	}
	if got := strings.Join(*ran, ","); got != "lead#losses=1,dial#attempts=1,losses=1,dial#attempts=2,losses=1" {
		t.Fatalf("effects ran %s", got)
	}
}

// TestOwnerChainBound: a chain that never comes to rest stops after every
// edge once plus one, with an error naming the machine, not a hang.
func TestOwnerChainBound(t *testing.T) {
	type st = toyState
	s := &Spec[st, toyTrigger, toyFacts]{
		Name: "spinner", Title: "Spinner", Guards: "nothing", Initial: "a",
		States:   []StateDoc[st]{{"a", "A."}, {"b", "B."}},
		Triggers: []toyTrigger{"go"},
		Edges: []Edge[st, toyTrigger, toyFacts]{
			{From: "a", On: "go", To: "b", Effect: "spin", Count: "spins"},
			{From: "b", On: "go", To: "a", Effect: "spin", Count: "spins"},
		},
		Effects: []Effect{"spin"}, Stable: []st{"a", "b"}, MaxTransient: 1,
	}
	runs := 0
	o := NewOwner(s, Effects[st, toyTrigger]{"spin": func(context.Context, Step[st, toyTrigger]) (toyTrigger, error) {
		runs++
		return "go", nil
	}})
	_, err := o.Fire(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), "spinner: effect chain") {
		t.Fatalf("Fire = %v, want the chain bound's error", err)
	}
	if want := len(s.Edges) + 1; runs != want {
		t.Fatalf("the chain ran %d effects before stopping, want %d", runs, want)
	}
}

// TestOwnerRefusalOfTheFirstTrigger: a trigger the machine refuses runs
// nothing and returns the zero step.
func TestOwnerRefusalOfTheFirstTrigger(t *testing.T) {
	o, ran := toyOwner(nil)
	step, err := o.Fire(context.Background(), "done")
	if !IsCode(err, TransitionRefused) || step != (Step[toyState, toyTrigger]{}) || len(*ran) != 0 || o.State() != "ready" {
		t.Fatalf("Fire(done) in ready = %+v, %v; ran %v", step, err, *ran)
	}
}

package tracecheck

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestCheckCatchesATraceThatLeftTheDeclaration(t *testing.T) {
	Track(t)
	// A real machine's run conforms.
	e, err := lease.NewLedger().Begin("trace-check-effect")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Dispatch(context.Background(), func(context.Context) (lease.Outcome, lease.EffectTrigger) {
		return lease.Outcome{}, lease.EffectAck
	}); err != nil {
		t.Fatal(err)
	}
	if err := Check(); err != nil {
		t.Fatalf("a real run does not conform: %v", err)
	}
	// A record no declaration allows is caught, and named.
	rec.Record(fsm.Record{Machine: lease.LedgerSpec.Name, Instance: 1 << 62, Seq: 0, From: "pending", On: "ack", To: "acked"})
	err = Check()
	rec.mu.Lock()
	delete(rec.instances, 1<<62)
	rec.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "pending --ack--> acked is not declared") {
		t.Fatalf("Check = %v, want the undeclared edge named", err)
	}
	rec.mu.Lock()
	who := rec.taken[lease.LedgerSpec.Name][fsm.EdgeKey("pending", "dispatch", "dispatched")]
	rec.mu.Unlock()
	if len(who) == 0 || who[0] != t.Name() {
		t.Fatalf("edge taken by %v, want %s", who, t.Name())
	}
}

// TestCompareRecording: an edge the committed recording credits to the
// package but the run did not take is missing (naming who the recording
// says took it); an edge the run took beyond the recording is extra.
func TestCompareRecording(t *testing.T) {
	recorded := Coverage{
		"gate":   {"open --acquire--> held": {"TestA"}, "held --release--> open": {"TestA", "TestB"}},
		"ledger": {"pending --dispatch--> dispatched": {"TestC"}},
	}
	taken := Coverage{
		"gate":    {"open --acquire--> held": {"TestA"}, "held --close--> draining": {"TestD"}},
		"ledger":  {"pending --dispatch--> dispatched": {"TestE"}},
		"offered": {"offered --consume--> consumed": {"TestF"}},
	}
	missing, extra := compareRecording(recorded, taken)
	if want := []string{"gate: held --release--> open (recorded for TestA, TestB)"}; !slices.Equal(missing, want) {
		t.Errorf("missing = %q, want %q", missing, want)
	}
	if want := []string{"gate: held --close--> draining", "offered: offered --consume--> consumed"}; !slices.Equal(extra, want) {
		t.Errorf("extra = %q, want %q", extra, want)
	}
	if m, e := compareRecording(recorded, recorded); len(m)+len(e) != 0 {
		t.Errorf("a run equal to its recording: missing %q, extra %q", m, e)
	}
}

func TestPackageName(t *testing.T) {
	wd, _ := os.Getwd()
	if got := packageName(wd); got != "internal_tracecheck" {
		t.Fatalf("packageName = %q, want internal_tracecheck", got)
	}
}

// TestUnmovedMachines: a machine the recording credits that the run never
// moved is named; one the run moved, even by other edges, is not.
func TestUnmovedMachines(t *testing.T) {
	recorded := Coverage{
		"gate":   {"open --acquire--> held": {"TestA"}, "held --close--> draining": {"TestB"}},
		"ledger": {"pending --dispatch--> dispatched": {"TestC"}},
	}
	taken := Coverage{"gate": {"open --acquire--> held": {"TestA"}}}
	if got := unmovedMachines(recorded, taken); !slices.Equal(got, []string{"ledger"}) {
		t.Errorf("unmovedMachines = %q, want [ledger]", got)
	}
	taken["ledger"] = map[string][]string{"dispatched --ack--> acked": {"TestC"}}
	if got := unmovedMachines(recorded, taken); len(got) != 0 {
		t.Errorf("every machine moved: unmovedMachines = %q, want none", got)
	}
}

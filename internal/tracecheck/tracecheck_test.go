package tracecheck

import (
	"context"
	"os"
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

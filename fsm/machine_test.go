package fsm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFireUnhandledIsTypedRefusal(t *testing.T) {
	m := goodToy().Build(nil)
	_, err := m.Fire(context.Background(), "done")
	if !IsCode(err, TransitionRefused) {
		t.Fatalf("Fire(done) in ready = %v, want %s", err, TransitionRefused)
	}
	if m.State() != "ready" {
		t.Fatalf("state after refusal = %s, want ready", m.State())
	}
}

func TestFireReturnsEffectKeyedByCounter(t *testing.T) {
	facts := toyFacts{OK: true}
	m := goodToy().Build(func() toyFacts { return facts })
	ctx := context.Background()
	steps := []toyTrigger{"lost", "retry", "retry"}
	var ids []string
	for _, tr := range steps {
		st, err := m.Fire(ctx, tr)
		if err != nil {
			t.Fatalf("Fire(%s): %v", tr, err)
		}
		ids = append(ids, st.EffectID)
	}
	want := []string{"lead#losses=1", "dial#attempts=1,losses=1", "dial#attempts=2,losses=1"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("effect ids = %v, want %v", ids, want)
	}
	m.Fire(ctx, "retry")
	if _, err := m.Fire(ctx, "retry"); err != nil {
		t.Fatal(err)
	}
	if m.State() != "failed" {
		t.Fatalf("after budget state = %s, want failed", m.State())
	}
}

func TestMermaidIsDeterministicAndSorted(t *testing.T) {
	a, b := goodToy().Mermaid(), goodToy().Mermaid()
	if a != b {
		t.Fatal("Mermaid output differs between calls")
	}
	if !strings.HasPrefix(a, "stateDiagram-v2\n    [*] --> ready\n") {
		t.Fatalf("unexpected header:\n%s", a)
	}
	if !strings.Contains(a, "dialing --> dialing: retry [attempts_below_3] / dial\n") {
		t.Fatalf("missing labelled edge:\n%s", a)
	}
	if strings.Index(a, "dialing --> failed") > strings.Index(a, "ready --> dialing") {
		t.Fatal("edges not sorted by source state")
	}
}

func TestTableJSONRoundTrips(t *testing.T) {
	tab := goodToy().Table()
	var back Table
	if err := json.Unmarshal(tab.JSON(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Edges) != len(tab.Edges) || back.Initial != "ready" || back.Edges[1].Guard != "attempts_below_3" {
		t.Fatalf("round trip lost data: %+v", back)
	}
}

func TestExitsAreRenderedFromEdges(t *testing.T) {
	tab := goodToy().Table()
	if got, want := tab.Exits("dialing"), "stays on `retry` [attempts_below_3] / dial; `failed` on `retry` [attempts_at_least_3]; `invalidating` on `dialed` [ok]; `failed` on `dialed` [!ok]; `revoked` on `revoke`"; got != want {
		t.Fatalf("Exits(dialing) = %s, want %s", got, want)
	}
	if got := tab.Exits("failed"); got != "none" {
		t.Fatalf("Exits(failed) = %s, want none", got)
	}
	if md := tab.Markdown(); !strings.Contains(md, "| `ready` | stable | Connected. | `dialing` on `lost` / lead |") {
		t.Fatalf("markdown lacks the rendered exits:\n%s", md)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1 second", 2 * time.Second: "2 seconds", 30 * time.Minute: "30 minutes",
		8 * time.Hour: "8 hours", 90 * time.Second: "90 seconds", 1500 * time.Millisecond: "1500 milliseconds",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

package mcp

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/mcpsession"
)

// TestSessionLifetime: a server is open until it serves, serves one client
// once, and runs its end — every step, newest first, once — when the client
// goes; a second Run is refused and runs nothing again.
func TestSessionLifetime(t *testing.T) {
	tracecheck.Track(t)
	srv := NewServer(Options{Runner: (&fakeBackend{}).routes(), Scopes: allScopes(t), Session: "mcp-test"})
	var ran []string
	srv.AtEnd(func(ctx context.Context) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("an end step has no deadline")
		}
		ran = append(ran, "runner")
	})
	srv.AtEnd(func(context.Context) { ran = append(ran, "approvals") })
	if st := srv.SessionState(); st != mcpsession.Open {
		t.Fatalf("a new server is %s, want open", st)
	}
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fake", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "browser_status"}); err != nil {
		t.Fatal(err)
	}
	if st := srv.SessionState(); st != mcpsession.Serving || len(ran) != 0 {
		t.Fatalf("while a client is served: %s, end steps run %v", st, ran)
	}
	cs.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the client closed")
	}
	if st := srv.SessionState(); st != mcpsession.Closed || !slices.Equal(ran, []string{"approvals", "runner"}) {
		t.Fatalf("after the client went: %s, end steps run %v (want approvals, then runner)", st, ran)
	}
	_, st2 := sdk.NewInMemoryTransports()
	if err := srv.Run(context.Background(), st2); !fsm.IsCode(err, fsm.TransitionRefused) {
		t.Fatalf("a second Run = %v, want transition_refused", err)
	}
	srv.End()
	if len(ran) != 2 {
		t.Fatalf("the end ran again: %v", ran)
	}
}

// TestSessionEndUnserved: a server dropped before it serves still runs its
// end, once.
func TestSessionEndUnserved(t *testing.T) {
	tracecheck.Track(t)
	srv := NewServer(Options{Runner: (&fakeBackend{}).routes(), Scopes: allScopes(t), Session: "mcp-test"})
	n := 0
	srv.AtEnd(func(context.Context) { n++ })
	srv.End()
	srv.End()
	if st := srv.SessionState(); st != mcpsession.Closed || n != 1 {
		t.Fatalf("an unserved server's end: %s, ran %d times", st, n)
	}
}

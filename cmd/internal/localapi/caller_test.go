package localapi

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// TestRunnerAnswersBeforeTheClientDeadline: the client's deadline reaches
// the handler shortened, so a handler that runs out of time answers with
// its own refusal, which arrives, instead of the client giving up; the
// caller it declared reaches the handler too.
func TestRunnerAnswersBeforeTheClientDeadline(t *testing.T) {
	dir := t.TempDir()
	rt := &Routes{}
	var seen Caller
	slow := Route[struct{}, struct{}]{Name: "slow"}
	Serve(rt, Ping, func(context.Context, struct{}) (PingResult, error) { return PingResult{OK: true}, nil })
	Serve(rt, slow, func(ctx context.Context, _ struct{}) (struct{}, error) {
		seen, _ = CallerFrom(ctx)
		if _, ok := ctx.Deadline(); !ok {
			return struct{}{}, errors.New("no deadline reached the handler")
		}
		<-ctx.Done()
		return struct{}{}, fsm.Refuse(fsm.Timeout, "the handler's own deadline")
	})
	startServer(t, dir, &Server{Routes: rt})
	c := NewClient(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ctx = WithCaller(ctx, Caller{Session: "mcp-0123456789ab", Tool: "browser_snapshot"})
	_, err := slow.Call(ctx, c, struct{}{})
	if ref, ok := fsm.AsRefusal(err); !ok || ref.Code != fsm.Timeout || ref.Detail != "the handler's own deadline" {
		t.Fatalf("call = %v, want the handler's timeout refusal", err)
	}
	if ctx.Err() != nil {
		t.Error("the answer came only after the client's deadline")
	}
	if seen.Session != "mcp-0123456789ab" || seen.Tool != "browser_snapshot" {
		t.Errorf("the handler saw caller %+v", seen)
	}
	for _, bad := range []string{`{"session":"a b"}`, `{"session":""}`, `not json`} {
		code := rawRequest(t, filepath.Join(dir, SocketName), func(r *http.Request) { r.Header.Set(CallerHeader, bad) })
		if code != fsm.InvalidArgument.HTTPStatus() {
			t.Errorf("caller header %q: status %d, want %d", bad, code, fsm.InvalidArgument.HTTPStatus())
		}
	}
}

// dropAfterRead is a socket that reads each request whole, then closes the
// connection without answering: a Runner killed with the call in flight.
func dropAfterRead(t *testing.T, dir string, answer bool) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil || answer {
					c.Read(make([]byte, 1)) // hold the call until the client gives up
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
}

// TestLostRunnerAfterAnEffect: a client that loses the Runner after
// sending an effect says outcome_unknown (a caller must not retry it), a
// read says the Runner went away, and nothing sent is unreachable; a
// client deadline that passes is outcome_unknown for an effect and a
// timeout for a read, never a bare context error.
func TestLostRunnerAfterAnEffect(t *testing.T) {
	ctx := context.Background()
	act := Route[struct{}, struct{}]{Name: "act", Effect: true}
	look := Route[struct{}, struct{}]{Name: "look"}
	none := NewClient(t.TempDir())
	if _, err := act.Call(ctx, none, struct{}{}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("act with no Runner = %v, want ErrUnreachable", err)
	}

	dir := t.TempDir()
	dropAfterRead(t, dir, false)
	c := NewClient(dir)
	if _, err := act.Call(ctx, c, struct{}{}); !fsm.IsCode(err, fsm.OutcomeUnknown) {
		t.Errorf("act whose Runner was lost = %v, want %s", err, fsm.OutcomeUnknown)
	}
	if _, err := look.Call(ctx, c, struct{}{}); !errors.Is(err, ErrUnreachable) || fsm.IsCode(err, fsm.OutcomeUnknown) {
		t.Errorf("a read whose Runner was lost = %v, want ErrUnreachable", err)
	}

	held := t.TempDir()
	dropAfterRead(t, held, true)
	hc := NewClient(held)
	for rt, want := range map[Route[struct{}, struct{}]]fsm.Code{act: fsm.OutcomeUnknown, look: fsm.Timeout} {
		dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := rt.Call(dctx, hc, struct{}{})
		cancel()
		if !fsm.IsCode(err, want) {
			t.Errorf("%s past the client's deadline = %v, want %s", rt.Name, err, want)
		}
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// fakeBackend stands in for the Runner where the bounds of the server
// itself are tested: its route table serves only status, snapshot and
// wait, so any other call is refused as unavailable and fails the test.
type fakeBackend struct {
	snapshot string // the outline text
	calls    int
}

func (f *fakeBackend) routes() *localapi.Routes {
	rt := &localapi.Routes{}
	localapi.Serve(rt, localapi.GetStatus, func(context.Context, struct{}) (localapi.Status, error) {
		return localapi.Status{Browsers: []localapi.BrowserInfo{{ID: "b-1", Mode: localapi.ModeEphemeral, Pages: []localapi.PageInfo{{ID: "p-1", Browser: "b-1"}}}}}, nil
	})
	localapi.Serve(rt, localapi.Of(op.TakeSnapshot), func(_ context.Context, req op.SnapshotIn) (op.SnapshotResult, error) {
		f.calls++
		res := localapi.SnapshotResult{Page: req.Page}
		res.Text = f.snapshot
		return res, nil
	})
	localapi.Serve(rt, localapi.Of(op.Wait), func(_ context.Context, req op.WaitIn) (op.WaitResult, error) {
		f.calls++
		res := localapi.WaitResult{Page: req.Page}
		res.Found, res.Condition = true, req.Condition
		return res, nil
	})
	return rt
}

// fakeSession connects an in-process client to a server over fb.
func fakeSession(t *testing.T, fb *fakeBackend, scopes string) *server {
	t.Helper()
	sc, err := ParseScopes(scopes)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Options{Runner: fb.routes(), Scopes: sc, Caps: Caps{CapDevtools: true, CapPDF: true, CapVision: true}, Session: "mcp-test"})
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fake", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &server{t: t, cs: cs}
}

// TestFakeBackendArgumentBounds: the schemas' bounds refuse out-of-range
// arguments before anything reaches the Runner.
func TestFakeBackendArgumentBounds(t *testing.T) {
	fb := &fakeBackend{}
	s := fakeSession(t, fb, DefaultScopes)
	fields := make([]any, maxFormFields+1)
	for i := range fields {
		fields[i] = map[string]any{"target": map[string]any{"label": "x"}, "type": "textbox", "value": "v"}
	}
	for name, args := range map[string]map[string]any{
		"browser_fill_form":        {"fields": fields},
		"browser_wait_for":         {"timeout": maxWaitSeconds + 1, "text": "x"},
		"browser_wait_for ":        {"time": maxTimeWait + 1},
		"browser_snapshot":         {"maxChars": 200001},
		"browser_tabs":             {"action": "rename"},
		"browser_navigate":         {},
		"browser_navigate ":        {"url": "http://x/", "extra": 1},
		"browser_select_option":    {"target": map[string]any{"label": "x"}, "values": []string{}},
		"browser_file_upload":      {"target": map[string]any{"label": "x"}, "files": make([]string, 21)},
		"browser_fill_form ":       {"fields": []any{map[string]any{"type": "slider", "value": "1"}}},
		"browser_click":            {"ref": "e1", "target": map[string]any{"css": "a"}},
		"browser_evaluate":         {"expression": "1", "function": "() => 1"},
		"browser_cdp":              {"params": map[string]any{}},
		"browser_take_screenshot ": {"target": 42},
	} {
		s.refused(strings.TrimSpace(name), args, fsm.InvalidArgument)
	}
	if fb.calls != 0 {
		t.Fatalf("%d refused calls reached the Runner", fb.calls)
	}
}

// TestCancelledWaitIsRefusedTimeout: a browser_wait_for {time} whose call
// is cancelled (or runs out) before the time passed answers the refusal
// set's timeout, not a bare context error.
func TestCancelledWaitIsRefusedTimeout(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "deadline": expired} {
		_, err := (&Server{}).waitFor(ctx, nil, waitIn{Time: 5})
		if !fsm.IsCode(err, fsm.Timeout) || !errors.Is(err, ctx.Err()) {
			t.Errorf("%s wait: %v; want a timeout refusal wrapping %v", name, err, ctx.Err())
		}
	}
}

// TestFailureResultHasNoPackagePrefix: a failure that is not a refusal
// reaches the agent without Go package prefixes.
func TestFailureResultHasNoPackagePrefix(t *testing.T) {
	res := errorResult(fmt.Errorf("runner: %w", errors.New("platform: the browser exited during start-up")))
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || text != "error: the browser exited during start-up" {
		t.Fatalf("failure result %q (isError %v): want the plain message", text, res.IsError)
	}
}

// TestFakeBackendResultBound: a result larger than MaxResultBytes is a
// limit_exceeded refusal, never a truncated or unbounded payload.
func TestFakeBackendResultBound(t *testing.T) {
	fb := &fakeBackend{snapshot: strings.Repeat("x", MaxResultBytes)}
	s := fakeSession(t, fb, DefaultScopes)
	s.refused("browser_snapshot", nil, fsm.LimitExceeded)
	fb.snapshot = "small"
	if got := s.ok("browser_snapshot", nil); str(got, "page") != "p-1" {
		t.Fatalf("snapshot = %v", got)
	}
}

// TestOpenQuestionsBounded: at most maxAsks approval questions are open;
// expired ones are swept; a token is used once.
func TestOpenQuestionsBounded(t *testing.T) {
	s := &Server{asks: map[string]pendingAsk{}}
	exp := time.Now().Add(time.Minute)
	var tokens []string
	for i := 0; i < maxAsks; i++ {
		tok, err := s.ask("req", "args", exp)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	if _, err := s.ask("req", "args", exp); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("question %d = %v, want %s", maxAsks+1, err, fsm.LimitExceeded)
	}
	s.mu.Lock()
	for _, tok := range tokens[:2] {
		a := s.asks[tok]
		a.expires = time.Now().Add(-time.Second)
		s.asks[tok] = a
	}
	s.mu.Unlock()
	if _, err := s.ask("req", "args", exp); err != nil {
		t.Fatalf("after two expired: %v", err)
	}
	if len(tokens[0]) != 32 || tokens[0] == tokens[1] {
		t.Fatalf("tokens %q %q", tokens[0], tokens[1])
	}
}

func TestParseScopes(t *testing.T) {
	for in, want := range map[string]string{
		"":                                "",
		"browser:read":                    "browser:read",
		" browser:control , browser:read": "browser:read,browser:control",
		DefaultScopes:                     DefaultScopes,
	} {
		got, err := ParseScopes(in)
		if err != nil || strings.Join(got.List(), ",") != want {
			t.Errorf("ParseScopes(%q) = %v, %v; want %q", in, got.List(), err, want)
		}
	}
	for _, bad := range []string{"browser:*", "read", "browser:read,admin"} {
		if _, err := ParseScopes(bad); err == nil {
			t.Errorf("ParseScopes(%q) accepted", bad)
		}
	}
}

// TestParseCaps: --caps takes the known groups or all; an unknown group is
// an error naming the known ones.
func TestParseCaps(t *testing.T) {
	c, err := ParseCaps("vision, pdf")
	if err != nil || !c[CapVision] || !c[CapPDF] || c[CapDevtools] {
		t.Fatalf("ParseCaps(vision, pdf) = %v, %v", c, err)
	}
	if c, err := ParseCaps("all"); err != nil || len(c.List()) != len(AllCaps) {
		t.Fatalf("ParseCaps(all) = %v, %v", c, err)
	}
	if c, err := ParseCaps(""); err != nil || len(c) != 0 {
		t.Fatalf("ParseCaps(\"\") = %v, %v", c, err)
	}
	if _, err := ParseCaps("vision,storage"); err == nil || !strings.Contains(err.Error(), "vision, pdf, devtools") {
		t.Fatalf("ParseCaps(storage) = %v, want an error naming the known groups", err)
	}
}

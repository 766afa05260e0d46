package runner

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/platform"
)

// TestOwnedPipeLossTearsDown: an owned browser whose DevTools pipe drops
// while its process lives (here: stopped, so it cannot notice) is wedged.
// It is not reconnected — nothing listens to dial — but moves to lost with
// reason connection_lost and its whole group is reaped; Reconnect refuses
// it with a typed refusal, and closing it ends it.
func TestOwnedPipeLossTearsDown(t *testing.T) {
	t.Parallel() // its own Runner and browser
	r := boundedRunner(t, 0)
	ctx := context.Background()
	bi, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.browser(bi.ID)
	proc := procOf(b)
	if err := syscall.Kill(-proc.PGID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b.c().Close() // the pipe drops; the stopped browser lives on
	eventuallyT(t, 30*time.Second, "the wedged browser is lost", func() bool {
		return browserState(t, r, bi.ID).State == string(lease.AttachLost)
	})
	if st := browserState(t, r, bi.ID); st.LostReason != "connection_lost" {
		t.Errorf("lost browser: %+v, want lostReason connection_lost", st)
	}
	eventuallyT(t, 20*time.Second, "the wedged browser's group is reaped", func() bool { return !platform.GroupAlive(proc.PGID()) })
	if _, err := r.Reconnect(ctx, localapi.BrowserRequest{Browser: bi.ID}); !fsm.IsCode(err, fsm.RouteUnavailable) {
		t.Errorf("Reconnect of an owned browser = %v, want %s", err, fsm.RouteUnavailable)
	}
	res, err := r.Close(ctx, localapi.BrowserRequest{Browser: bi.ID})
	if err != nil || res.Teardown != "closed" {
		t.Fatalf("close the lost browser = %+v, %v", res, err)
	}
	if got := b.state(); got != lease.AttachClosed {
		t.Fatalf("after close: %s, want %s", got, lease.AttachClosed)
	}
}

// TestFakeBrokenChromiumLaunchFails: a browser binary that starts and dies
// before its DevTools pipe answers (a shell script standing in for a broken
// Chromium: a real one cannot be made to fail on cue) ends the launch with
// an error, and what the launch made is gone: nothing is listed, no orphan
// record is left.
func TestFakeBrokenChromiumLaunchFails(t *testing.T) {
	t.Parallel()
	tracecheck.Track(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'broken build' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{StateDir: filepath.Join(dir, "state"), Chrome: exe})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	if _, err := r.Launch(context.Background(), localapi.LaunchRequest{}); err == nil {
		t.Fatal("a launch of a binary that dies at once succeeded")
	}
	st, err := r.Status(context.Background())
	if err != nil || len(st.Browsers) != 0 {
		t.Fatalf("after the failed launch: %+v, %v; want no browser", st.Browsers, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(r.recordDir(), "*.json")); len(recs) != 0 {
		t.Fatalf("the failed launch left orphan records %v", recs)
	}
}

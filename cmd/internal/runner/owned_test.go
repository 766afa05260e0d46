package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
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
	waitfor.Until(t, 30*time.Second, "the wedged browser is lost", func() bool {
		return browserState(t, r, bi.ID).State == string(lease.AttachLost)
	})
	if st := browserState(t, r, bi.ID); st.LostReason != "connection_lost" {
		t.Errorf("lost browser: %+v, want lostReason connection_lost", st)
	}
	waitfor.Until(t, 20*time.Second, "the wedged browser's group is reaped", func() bool { return !platform.GroupAlive(proc.PGID()) })
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
	// Chromium's own words when its socket path is too long.
	fatal := "[1:1:1202/013816.483727:FATAL:chrome/browser/process_singleton_posix.cc:315] Socket path too long: $TMPDIR/org.chromium.Chromium.RbXASo/SingletonSocket."
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'broken build' >&2\necho \""+fatal+"\" >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{StateDir: filepath.Join(dir, "state"), Chrome: exe, LogWhere: "runner.log in the test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	_, err = r.Launch(context.Background(), localapi.LaunchRequest{})
	if err == nil {
		t.Fatal("a launch of a binary that dies at once succeeded")
	}
	// One line: which binary, why (the browser's reason, without its path)
	// and where the rest is; no Go package prefix.
	msg := err.Error()
	if !strings.HasPrefix(msg, "launching "+exe+" failed: ") || !strings.Contains(msg, `the browser says "Socket path too long"`) || !strings.Contains(msg, "runner.log in the test") ||
		strings.Contains(msg, "\n") || strings.Contains(strings.ReplaceAll(msg, exe, ""), "/") || strings.Contains(msg, "broken build") ||
		strings.Contains(msg, "platform: ") || strings.Contains(msg, "runner: ") {
		t.Fatalf("launch error = %q: want one line naming the binary, the browser's reason and where its output is, no other path, no package prefix", msg)
	}
	if !errors.Is(err, platform.ErrExitedEarly) {
		t.Fatalf("launch error %v does not wrap platform.ErrExitedEarly", err)
	}
	st, err := r.Status(context.Background())
	if err != nil || len(st.Browsers) != 0 {
		t.Fatalf("after the failed launch: %+v, %v; want no browser", st.Browsers, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(r.recordDir(), "*.json")); len(recs) != 0 {
		t.Fatalf("the failed launch left orphan records %v", recs)
	}
}

// TestLaunchWithLongTMPDIR: an owned browser starts and reads a page with a
// TMPDIR of 100+ bytes, which Chromium alone cannot start under ("Socket
// path too long": platform's TestLaunchWithLongTMPDIR shows it): what the
// launch makes lives where the browser's sockets fit, and goes with it.
func TestLaunchWithLongTMPDIR(t *testing.T) {
	// Not parallel: it sets TMPDIR for the whole test binary.
	r := boundedRunner(t, 0)
	long := t.TempDir()
	for len(long) < 110 {
		long = filepath.Join(long, "nested-temporary-directory")
	}
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>long</title><p>started under a long TMPDIR</p>")
	}))
	defer srv.Close()
	ctx := context.Background()
	bi, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatalf("launch with a %d-byte TMPDIR: %v", len(long), err)
	}
	b, _ := r.browser(bi.ID)
	launchDir := b.life.(*ownedBrowser).launchDir
	if strings.HasPrefix(launchDir, long) || len(launchDir)+platform.TempParentRoom > platform.SocketPathMax {
		t.Fatalf("the launch directory %s leaves no room for the browser's sockets", launchDir)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := runOp(ctx, r, op.ReadText, readIn(p.ID))
	if err != nil || !strings.Contains(rd.Text, "started under a long TMPDIR") {
		t.Fatalf("read = %+v, %v", rd, err)
	}
	if _, err := r.Close(ctx, localapi.BrowserRequest{Browser: bi.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(launchDir); !os.IsNotExist(err) {
		t.Fatalf("the launch directory outlived its browser (%v)", err)
	}
}

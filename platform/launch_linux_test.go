package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
)

// pipeConn wraps p's DevTools pipe in a cdp.Conn, as the Runner does. The
// Conn owns the pipe from then on; Process.Close closes it too.
func pipeConn(t *testing.T, p *Process) *cdp.Conn {
	t.Helper()
	from, to := p.Pipe()
	if from == nil || to == nil {
		t.Fatal("the browser has no DevTools pipe")
	}
	c := cdp.NewConn(cdp.NewPipeSocket(from, to, cdp.PipeOptions{}), cdp.ConnOptions{})
	t.Cleanup(func() { c.Close() })
	return c
}

// browserClose sends CDP Browser.close on c, as the Runner's teardown does.
func browserClose(c *cdp.Conn, calls *atomic.Int32) func(context.Context) error {
	return func(ctx context.Context) error {
		calls.Add(1)
		_, err := cdproto.Call(ctx, c.Browser(), browser.Close, cdproto.Empty{})
		return err // the reply, or the drop as the browser exits
	}
}

// assertLoadsPage opens an httptest page through c and waits for its title:
// the launch flags must leave the network service working (as of Chromium
// 156, --disable-crashpad-for-testing does not).
func assertLoadsPage(t *testing.T, c *cdp.Conn) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<!doctype html><title>webcodex-loaded</title><p>ok</p>")
	}))
	defer srv.Close()
	if title := openAndTitle(t, c, srv.URL+"/", "webcodex-loaded"); title != "webcodex-loaded" || hits.Load() == 0 {
		t.Errorf("page title %q, server hits %d; want webcodex-loaded from the test server", title, hits.Load())
	}
}

// openAndTitle opens url in a new tab through c and waits up to 15 s for
// the tab's title to become want; it returns the last title seen.
func openAndTitle(t *testing.T, c *cdp.Conn, url, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	created, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: url})
	if err != nil {
		t.Fatalf("Target.createTarget: %v", err)
	}
	var title string
	poll(15*time.Second, func() bool {
		res, err := cdproto.Call(ctx, c.Browser(), target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			return false
		}
		for _, ti := range res.TargetInfos {
			if ti.TargetID == created.TargetID {
				title = ti.Title
			}
		}
		return title == want
	})
	return title
}

// assertGone checks that Close left nothing: no group member, no TMPDIR,
// the profile removed or kept as asked, both goroutines stopped.
func assertGone(t *testing.T, p *Process, fp Fingerprint, udd string, keepProfile bool) {
	t.Helper()
	if m := GroupMembers(p.PGID()); len(m) != 0 {
		t.Errorf("group members after Close: %v", m)
	}
	if fp.Alive() {
		t.Error("browser fingerprint still Alive after Close")
	}
	if left := taggedProcesses(p.TmpDir()); len(left) != 0 {
		t.Errorf("processes carrying the browser's TMPDIR after Close: %v", left)
	}
	if _, err := os.Stat(p.TmpDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("private TMPDIR survived Close (%v)", err)
	}
	_, err := os.Stat(udd)
	if keepProfile && err != nil {
		t.Errorf("persistent profile removed: %v", err)
	}
	if !keepProfile && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ephemeral profile survived Close (%v)", err)
	}
	for name, ch := range map[string]<-chan struct{}{"exited": p.exited, "drained": p.drained} {
		select {
		case <-ch:
		default:
			t.Errorf("goroutine %s still running after Close", name)
		}
	}
}

func TestLaunchAndClose(t *testing.T) {
	exe := needChromium(t)
	udd := filepath.Join(t.TempDir(), "profiles", "eph")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })

	c := pipeConn(t, p)
	if p.WebSocketURL() != "" {
		t.Error("a pipe browser has a WebSocket URL")
	}
	if _, _, err := ReadDevToolsActivePort(udd); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDevToolsActivePort on a pipe browser's profile = %v, want no file", err)
	}
	fp := p.Fingerprint()
	if fp.PID != p.PID() || !fp.Alive() || Product(fp.Exe) != "chromium" {
		t.Errorf("Fingerprint = %+v (Alive %v, Product %q), want the live chromium", fp, fp.Alive(), Product(fp.Exe))
	}
	if p.PGID() != p.PID() {
		t.Errorf("PGID %d != PID %d", p.PGID(), p.PID())
	}
	members := GroupMembers(p.PGID())
	if len(members) < 2 || members[0] != p.PID() {
		t.Errorf("GroupMembers = %v, want the browser %d and its children", members, p.PID())
	}
	if fi, err := os.Stat(p.TmpDir()); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(p.TmpDir()) != filepath.Clean(os.TempDir()) {
		t.Errorf("TmpDir: %v, mode %v; want a 0700 directory under os.TempDir", err, fi.Mode().Perm())
	}
	if st, err := InspectSingletonLock(udd); err != nil || st != LockLive {
		t.Errorf("InspectSingletonLock(running profile) = %q, %v; want %q", st, err, LockLive)
	}
	// A second launch on the live profile is refused before anything starts,
	// and leaves the first browser alone.
	if _, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true}); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Errorf("second Launch on a live profile = %v, want %s", err, fsm.LeaseHeld)
	}
	if err := RemoveStaleLock(udd); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Errorf("RemoveStaleLock(live) = %v, want %s", err, fsm.LeaseHeld)
	}
	assertLoadsPage(t, c)

	// No browserClose: our ends of the pipe close, then SIGTERM if needed.
	start := time.Now()
	if err := p.Close(ctx, nil); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close (pipe closed, no Browser.close) took %v", time.Since(start).Round(time.Millisecond))
	select {
	case <-c.Done():
	default:
		t.Error("the Conn over the pipe is still open after Close")
	}
	assertGone(t, p, fp, udd, false)
	if err := p.Close(ctx, nil); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

// TestLaunchDebuggingPort: the port mode, kept for a browser that stands in
// for a person's own Chrome, publishes a loopback port the browser itself
// listens on, and has no pipe.
func TestLaunchDebuggingPort(t *testing.T) {
	exe := needChromium(t)
	udd := filepath.Join(t.TempDir(), "users")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true, DebuggingPort: true})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })
	if from, to := p.Pipe(); from != nil || to != nil {
		t.Error("a port browser has a DevTools pipe")
	}
	port, path, err := ReadDevToolsActivePort(udd)
	if err != nil {
		t.Fatalf("ReadDevToolsActivePort: %v", err)
	}
	if p.WebSocketURL() != "ws://127.0.0.1:"+strconv.Itoa(port)+path {
		t.Error("WebSocketURL does not match DevToolsActivePort") // never print the URL
	}
	if owner, err := ListenerOwner(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))); err != nil || owner != p.PID() {
		t.Errorf("ListenerOwner(DevTools port) = %d, %v; want the browser %d", owner, err, p.PID())
	}
	sock, err := cdp.DialWebSocket(ctx, p.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		t.Fatal("dial browser socket failed") // no URL in test output
	}
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	assertLoadsPage(t, c)
	if strings.Contains(string(p.Output()), strconv.Itoa(port)+path) {
		t.Error("Output() holds the endpoint unredacted")
	}
}

func TestCloseWithBrowserClose(t *testing.T) {
	exe := needChromium(t)
	udd := filepath.Join(t.TempDir(), "managed")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	fp := p.Fingerprint()
	var calls atomic.Int32
	bc := browserClose(pipeConn(t, p), &calls)
	// Concurrent Close calls: one teardown, the same result for both.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Close(ctx, bc) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("Close = %v, %v", errs[0], errs[1])
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("browserClose called %d times, want 1", n)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d, want 0 (Browser.close, not a signal)", code)
	}
	assertGone(t, p, fp, udd, true)
	if st, err := InspectSingletonLock(udd); err != nil || st != LockNone {
		t.Errorf("lock after Browser.close = %q, %v; want %q", st, err, LockNone)
	}
}

// fakeBrowser returns options that launch the test binary as a fake
// browser in role, which records its PID and TMPDIR in the returned file.
func fakeBrowser(t *testing.T, role string, env ...string) (LaunchOptions, string) {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "pid")
	udd := filepath.Join(dir, "udd")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	return LaunchOptions{
		Exec:              os.Args[0],
		UserDataDir:       udd,
		Headless:          true,
		RemoveUserDataDir: true,
		Env:               append([]string{helperEnv + "=" + role, "WEBCODEX_PLATFORM_TEST_PIDFILE=" + rec}, env...),
	}, rec
}

// fakeRecord reads the PID and TMPDIR a fake browser recorded.
func fakeRecord(t *testing.T, rec string) (int, string) {
	t.Helper()
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatalf("fake browser left no record: %v", err)
	}
	var pid int
	var tmp string
	if _, err := fmt.Sscan(string(data), &pid, &tmp); err != nil {
		t.Fatal(err)
	}
	return pid, tmp
}

// helperStart is how long this test binary takes to start as a helper
// and exit, measured once. A start-up bound a fake browser must outlive
// scales with it: a race build on a loaded two-core machine takes over a
// second to reach its first line, where an idle one takes 50 ms.
var helperStart = sync.OnceValue(func() time.Duration {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=exit", "WEBCODEX_PLATFORM_TEST_CODE=0")
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 10 * time.Second // cannot measure: assume a very slow machine
	}
	return time.Since(start)
})

// fakeStartBound is a start-up bound a fake browser reaches with room to
// spare on this machine, now: 300 ms plus four measured helper starts.
func fakeStartBound() time.Duration { return slow.Scale(300*time.Millisecond + 4*helperStart()) }

func TestLaunchStartTimeoutFake(t *testing.T) {
	t.Parallel()
	opts, rec := fakeBrowser(t, "hang")
	opts.StartTimeout = fakeStartBound()
	start := time.Now()
	_, err := Launch(context.Background(), opts)
	if !errors.Is(err, ErrStartTimeout) {
		t.Fatalf("Launch = %v, want ErrStartTimeout", err)
	}
	if d := time.Since(start); d > opts.StartTimeout+10*time.Second {
		t.Errorf("Launch took %v to give up after a %v bound", d, opts.StartTimeout)
	}
	var lerr *LaunchError
	if !errors.As(err, &lerr) || lerr.ExitCode != -1 {
		t.Errorf("err = %#v, want a *LaunchError with ExitCode -1", err)
	}
	pid, tmp := fakeRecord(t, rec)
	if GroupAlive(pid) {
		t.Errorf("fake browser's group survives a failed launch: %v", GroupMembers(pid))
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("private TMPDIR survives a failed launch (%v)", err)
	}
	if _, err := os.Stat(opts.UserDataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ephemeral profile survives a failed launch (%v)", err)
	}
}

func TestLaunchContextCancelFake(t *testing.T) {
	t.Parallel()
	opts, rec := fakeBrowser(t, "hang")
	// Cancelled once the fake browser runs (it has written its record),
	// however long it took to start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waited sync.WaitGroup
	waited.Add(1)
	go func() {
		defer waited.Done()
		defer cancel()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if data, err := os.ReadFile(rec); err == nil && strings.HasSuffix(string(data), "\n") {
				return
			}
			time.Sleep(10 * time.Millisecond) // a file has no event to wait on here
		}
	}()
	_, err := Launch(ctx, opts)
	cancel()
	waited.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Launch = %v, want context.Canceled", err)
	}
	if pid, _ := fakeRecord(t, rec); GroupAlive(pid) {
		t.Errorf("fake browser's group survives a cancelled launch")
	}
}

func TestLaunchExitEarlyFake(t *testing.T) {
	t.Parallel()
	opts, _ := fakeBrowser(t, "exit", "WEBCODEX_PLATFORM_TEST_CODE=3")
	_, err := Launch(context.Background(), opts)
	var lerr *LaunchError
	if !errors.As(err, &lerr) || !errors.Is(err, ErrExitedEarly) || lerr.ExitCode != 3 {
		t.Fatalf("Launch = %v, want a *LaunchError ErrExitedEarly status 3", err)
	}
	out := string(lerr.Output)
	if !strings.Contains(out, "fake browser: boom") || strings.Contains(out, "secret-id") {
		t.Errorf("Output = %q, want the stderr tail with the endpoint redacted", out)
	}
	if strings.Contains(err.Error(), "boom") {
		t.Errorf("error text %q carries browser output", err)
	}
}

func TestLaunchProfileInUseFake(t *testing.T) {
	t.Parallel()
	opts, _ := fakeBrowser(t, "exit", "WEBCODEX_PLATFORM_TEST_CODE=21")
	_, err := Launch(context.Background(), opts)
	if !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Fatalf("Launch = %v, want %s", err, fsm.LeaseHeld)
	}
	if _, err := os.Stat(opts.UserDataDir); err != nil {
		t.Errorf("a profile in use was removed: %v", err)
	}
}

func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	foreign := lockDir(t, "elsewhere.invalid-1")
	missingExe := filepath.Join(dir, "no-such-browser")
	tests := []struct {
		name string
		opts LaunchOptions
		code fsm.Code
	}{
		{"no profile", LaunchOptions{Exec: missingExe}, fsm.InvalidArgument},
		{"profile flag", LaunchOptions{Exec: missingExe, UserDataDir: dir, ExtraArgs: []string{"--user-data-dir=/elsewhere"}}, fsm.InvalidArgument},
		{"port flag", LaunchOptions{Exec: missingExe, UserDataDir: dir, ExtraArgs: []string{"--remote-debugging-port=9222"}}, fsm.InvalidArgument},
		{"pipe flag", LaunchOptions{Exec: missingExe, UserDataDir: dir, ExtraArgs: []string{"--remote-debugging-pipe"}}, fsm.InvalidArgument},
		{"pipe fds flag", LaunchOptions{Exec: missingExe, UserDataDir: dir, ExtraArgs: []string{"--remote-debugging-io-pipes=5,6"}}, fsm.InvalidArgument},
		{"foreign lock", LaunchOptions{Exec: missingExe, UserDataDir: foreign}, fsm.LeaseHeld},
	}
	for _, tt := range tests {
		if _, err := Launch(context.Background(), tt.opts); !fsm.IsCode(err, tt.code) {
			t.Errorf("%s: Launch = %v, want %s", tt.name, err, tt.code)
		}
	}
	if _, err := os.Lstat(filepath.Join(foreign, singletonLock)); err != nil {
		t.Errorf("refused launch touched the foreign lock: %v", err)
	}
	// Past the checks, a missing executable is a plain failure.
	if _, err := Launch(context.Background(), LaunchOptions{Exec: missingExe, UserDataDir: dir}); err == nil || errors.Is(err, ErrStartTimeout) {
		t.Errorf("missing executable: Launch = %v, want a start error", err)
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	head := chromiumArgs(LaunchOptions{Headless: true, ExtraArgs: []string{"--lang=en"}}, "/p", false)
	want := "--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --headless=new --user-data-dir=/p --remote-debugging-pipe --lang=en about:blank"
	if got := strings.Join(head, " "); got != want {
		t.Errorf("headless args = %s\nwant %s", got, want)
	}
	headed := strings.Join(chromiumArgs(LaunchOptions{}, "/p", true), " ")
	if strings.Contains(headed, "--no-sandbox") || strings.Contains(headed, "--headless") || strings.Contains(headed, "--remote-debugging-port") || !strings.HasSuffix(headed, "--remote-debugging-pipe about:blank") {
		t.Errorf("headed args = %s", headed)
	}
	port := strings.Join(chromiumArgs(LaunchOptions{DebuggingPort: true}, "/p", true), " ")
	if strings.Contains(port, "--remote-debugging-pipe") || !strings.HasSuffix(port, "--remote-debugging-port=0 about:blank") {
		t.Errorf("DebuggingPort args = %s", port)
	}
}

// TestPdeathsig kills the program that launched a browser and expects the
// browser's whole group to end: a crashed Runner leaves no orphans.
func TestPdeathsig(t *testing.T) {
	needChromium(t)
	udd := filepath.Join(t.TempDir(), "orphan")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=launch", "WEBCODEX_PLATFORM_TEST_UDD="+udd)
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })

	line := make(chan string, 1)
	go func() { // ends at the helper's exit, which Cleanup guarantees
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(45 * time.Second):
		t.Fatal("helper did not report a launched browser within 45 s")
	}
	var pid int
	var tmp string
	if _, err := fmt.Sscan(l, &pid, &tmp); err != nil {
		t.Fatalf("helper said %q: %v", l, err)
	}
	t.Cleanup(func() {
		if GroupAlive(pid) {
			KillGroup(pid)
		}
		os.RemoveAll(tmp)
	})
	if !GroupAlive(pid) {
		t.Fatal("browser group not running before the helper is killed")
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	start := time.Now()
	if !poll(10*time.Second, func() bool { return !GroupAlive(pid) }) {
		t.Fatalf("browser group still has %v 10 s after its launcher died", GroupMembers(pid))
	}
	t.Logf("browser group gone %v after the launcher died", time.Since(start).Round(time.Millisecond))
	if !poll(10*time.Second, func() bool { return len(taggedProcesses(tmp)) == 0 }) {
		t.Errorf("helpers outside the group (crashpad) outlive the browser: %v", taggedProcesses(tmp))
	}
}

// TestReapTaggedKillsStragglersFake hits reapTagged's bound: a process that
// carries a launch's TMPDIR and never exits is killed after the grace.
func TestReapTaggedKillsStragglersFake(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cmd := startHelper(t, "hang", "TMPDIR="+tmp)
	if !poll(5*time.Second, func() bool { return len(taggedProcesses(tmp)) == 1 }) {
		t.Fatalf("taggedProcesses = %v, want the helper %d", taggedProcesses(tmp), cmd.Process.Pid)
	}
	start := time.Now()
	if err := reapTagged(tmp); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < escapeeGrace || d > escapeeGrace+forcedWait {
		t.Errorf("reapTagged took %v, want the %v grace then a kill", d, escapeeGrace)
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("helper ended with %v, want SIGKILL", err)
	}
}

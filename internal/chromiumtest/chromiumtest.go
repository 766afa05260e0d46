// Package chromiumtest launches real headless Chromium for tests and serves
// test pages on loopback.
//
// A browser runs in its own process group with a fresh profile, HOME and
// TMPDIR under a temporary directory, so teardown (SIGTERM to the browser,
// then SIGKILL to its group) leaves nothing behind. Chromium is found through
// WEBCODEX_CHROME or /usr/bin/chromium; when neither exists a test fails with
// the install command. Under go test -short (make check) every test that
// needs Chromium is skipped.
//
// Errors and test messages from this package never contain the WebSocket URL,
// the port or the profile path.
package chromiumtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/platform"
)

// InstallHint is the message a test fails with when Chromium is missing.
const InstallHint = "install Chromium: apt-get install -y chromium"

// LaunchTimeout bounds how long Start waits for DevToolsActivePort, on an
// idle machine (stretched with the load: internal/slow). On a
// loaded two-core machine the file appears in 0.4–0.5 s (Chromium 156); the
// bound is generous because other test binaries share the cores.
const LaunchTimeout = 30 * time.Second

// launchBound is LaunchTimeout stretched with the machine's load.
func launchBound() time.Duration { return slow.Scale(LaunchTimeout) }

// stopTimeout bounds how long teardown waits for the browser to exit after
// SIGTERM before it SIGKILLs the whole group.
const stopTimeout = 5 * time.Second

// Flags are the command-line flags every test browser gets, besides
// --user-data-dir. --disable-crashpad-for-testing is
// deliberately absent: in Chromium 156 (Debian) it makes the network service
// crash at start ("Crashing due to FD ownership violation"), so every
// navigation fails with net::ERR_ABORTED. The two crashpad handlers it would
// have stopped run outside the browser's process group, keep their database
// under our temporary HOME, and exit once the browser has; Close waits for
// them.
var Flags = []string{
	"--headless=new",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--remote-debugging-port=0",
}

// Browser is a running headless Chromium. Its methods are safe for
// concurrent use.
type Browser struct {
	// WebSocketURL is the browser-level DevTools endpoint
	// (ws://127.0.0.1:PORT/devtools/browser/ID). Never log it.
	WebSocketURL string
	// PID is the browser's process id, which is also its process group id.
	PID int
	// Port is the fixed debugging port of a browser from [StartOnPort]
	// (0 otherwise). Never log it.
	Port int

	dir      string // holds profile, HOME and TMPDIR; named on helpers' command lines
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd.Wait returns
	waitErr  error         // set before exited closes
	stopOnce sync.Once
	tree     *platform.ProcessTree // the browser's process group or job
}

// ChromePath returns the Chromium binary to launch: $WEBCODEX_CHROME when set,
// else /usr/bin/chromium. It fails when the file does not exist.
func ChromePath() (string, error) {
	p := os.Getenv("WEBCODEX_CHROME")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("chromiumtest: no Chromium at %s: %s", p, InstallHint)
	}
	return p, nil
}

// Start launches a new browser for tb and registers a cleanup that stops it.
// The profile lives in tb.TempDir(). Start fails tb when Chromium is missing
// (skips under -short) or does not come up within LaunchTimeout.
func Start(tb testing.TB) *Browser {
	tb.Helper()
	bin := chromePath(tb)
	dir := tb.TempDir()
	b, err := launch(bin, dir)
	if err != nil {
		tb.Fatal(err)
	}
	// Registered after TempDir, so it runs before the directory is removed.
	tb.Cleanup(func() { b.Close() })
	return b
}

func chromePath(tb testing.TB) string {
	tb.Helper()
	SkipShort(tb)
	bin, err := ChromePath()
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// SkipShort skips a test that needs Chromium under go test -short, the
// fast inner loop (make check); make test never passes -short, so there
// every such test runs, and fails when Chromium is missing.
func SkipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs Chromium: skipped under -short (make check); make test runs it")
	}
}

// launch starts Chromium with its profile, HOME and TMPDIR under dir and
// waits for DevToolsActivePort.
func launch(bin, dir string) (*Browser, error) { return launchOn(bin, dir, 0, "about:blank") }

// StartOnPort launches a browser the way people start a debuggable Chrome,
// with a fixed --remote-debugging-port (a free loopback port this call
// picks) and --user-data-dir, opening url; Chromium writes no
// DevToolsActivePort then. It waits until the browser process itself
// listens on the port, and stops the browser in tb.Cleanup.
func StartOnPort(tb testing.TB, url string) *Browser {
	tb.Helper()
	bin := chromePath(tb)
	var err error
	for try := 0; try < 3; try++ { // the port is free when picked, not reserved
		var port int
		if port, err = freePort(); err != nil {
			break
		}
		var b *Browser
		if b, err = launchOn(bin, tb.TempDir(), port, url); err == nil {
			tb.Cleanup(func() { b.Close() })
			return b
		}
	}
	tb.Fatal(err)
	return nil
}

// freePort returns a loopback port nothing listened on a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("chromiumtest: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// UserDataDir is the browser's profile directory.
func (b *Browser) UserDataDir() string { return filepath.Join(b.dir, "profile") }

// launchOn is launch with --remote-debugging-port=port (0: a port the
// browser picks, published in DevToolsActivePort) and a first page.
func launchOn(bin, dir string, port int, first string) (*Browser, error) {
	udd := filepath.Join(dir, "profile")
	home := filepath.Join(dir, "home")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{udd, home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("chromiumtest: %w", err)
		}
	}
	args := append([]string{}, Flags...)
	if port != 0 {
		args[slices.Index(args, "--remote-debugging-port=0")] = "--remote-debugging-port=" + strconv.Itoa(port)
	}
	args = append(args, "--user-data-dir="+udd, first)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"TMPDIR="+tmp,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
	)
	// Its own process tree (group or job) so teardown can kill every
	// child; on Linux and Windows it also ends when the test binary dies
	// without cleaning up.
	closeInheritedFDs()
	tree, err := platform.StartTree(cmd)
	if err != nil {
		return nil, fmt.Errorf("chromiumtest: start chromium: %w", err)
	}
	b := &Browser{PID: cmd.Process.Pid, dir: dir, cmd: cmd, tree: tree, exited: make(chan struct{})}
	go func() { // owned by b: ends when the process exits, which Close forces
		b.waitErr = cmd.Wait()
		close(b.exited)
	}()
	if port != 0 {
		if err := waitListening(port, b.PID, b.exited); err != nil {
			b.Close()
			return nil, err
		}
		b.Port = port
		return b, nil
	}
	url, err := waitActivePort(filepath.Join(udd, "DevToolsActivePort"), b.exited)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.WebSocketURL = url
	return b, nil
}

// waitListening polls until the process pid listens on the loopback port,
// for up to LaunchTimeout, or until the browser exits.
func waitListening(port, pid int, exited <-chan struct{}) error {
	deadline := time.NewTimer(LaunchTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
	for {
		owner, err := platform.ListenerOwner(addr)
		if err == nil && owner == pid {
			return nil
		}
		if err == nil {
			return fmt.Errorf("chromiumtest: another process (%d) listens on the picked port", owner)
		}
		select {
		case <-exited:
			return errors.New("chromiumtest: chromium exited before it listened on its port")
		case <-deadline.C:
			return fmt.Errorf("chromiumtest: chromium did not listen on its port within %v", LaunchTimeout)
		case <-tick.C:
		}
	}
}

// waitActivePort polls for DevToolsActivePort (port on line 1, path on line
// 2) until LaunchTimeout, or until the browser exits.
func waitActivePort(path string, exited <-chan struct{}) (string, error) {
	bound := launchBound()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil {
			lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
			if len(lines) == 2 {
				port, perr := strconv.Atoi(string(bytes.TrimSpace(lines[0])))
				p := string(bytes.TrimSpace(lines[1]))
				if perr == nil && port > 0 && len(p) > 0 && p[0] == '/' {
					return "ws://127.0.0.1:" + strconv.Itoa(port) + p, nil
				}
			}
		}
		select {
		case <-exited:
			return "", errors.New("chromiumtest: chromium exited before DevToolsActivePort appeared")
		case <-deadline.C:
			return "", fmt.Errorf("chromiumtest: no DevToolsActivePort within %v", bound)
		case <-tick.C:
		}
	}
}

// Close stops the browser: SIGTERM to the browser process, up to 5 s for it
// to exit, then SIGKILL to its whole process group; it waits for the process
// to be reaped. Close is idempotent and returns nil.
func (b *Browser) Close() error {
	b.stopOnce.Do(func() {
		_ = b.tree.Terminate()
		t := time.NewTimer(stopTimeout)
		select {
		case <-b.exited:
		case <-t.C:
		}
		t.Stop()
		// Reap stragglers (utilities, zygotes) even after a clean exit.
		_ = b.tree.Kill()
		<-b.exited
		b.waitGone()
		b.tree.Release()
	})
	return nil
}

// Exited returns a channel that is closed once the browser process has exited.
func (b *Browser) Exited() <-chan struct{} { return b.exited }

// waitGone polls until none of b's processes is left ([Browser.ours]), for
// up to stopTimeout; then it kills the survivors, which this package
// started. Zombies are ignored: orphans are reaped by PID 1, which may be
// slow to do so in a container.
func (b *Browser) waitGone() {
	deadline := time.NewTimer(stopTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		left := b.ours()
		if len(left) == 0 {
			return
		}
		select {
		case <-deadline.C:
			for _, pid := range left {
				killPID(pid)
			}
			return
		case <-tick.C:
		}
	}
}

var shared struct {
	mu      sync.Mutex
	inMain  bool
	once    sync.Once
	browser *Browser
	dir     string
	err     error
}

// Shared returns the one browser of this test binary, launching it on first
// use. It requires TestMain to call [Main], which stops the browser and
// removes its directory after the tests; Shared fails tb otherwise. Tests
// sharing the browser should each create their own target.
func Shared(tb testing.TB) *Browser {
	tb.Helper()
	shared.mu.Lock()
	inMain := shared.inMain
	shared.mu.Unlock()
	if !inMain {
		tb.Fatal("chromiumtest.Shared needs TestMain to call chromiumtest.Main(m)")
	}
	bin := chromePath(tb)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "chromiumtest-")
		if err != nil {
			shared.err = fmt.Errorf("chromiumtest: %w", err)
			return
		}
		shared.dir = dir
		shared.browser, shared.err = launch(bin, dir)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.browser
}

// Main runs the tests, stops the shared browser if one was started, removes
// its directory, and exits with the tests' status. Call it from TestMain.
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	if shared.browser != nil {
		shared.browser.Close()
	}
	if shared.dir != "" {
		if err := os.RemoveAll(shared.dir); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "chromiumtest: cannot remove the shared browser's directory")
			code = 1
		}
	}
	os.Exit(code)
}

// Serve serves handler on an httptest server bound to 127.0.0.1 and returns
// its base URL (no trailing slash). The server closes when tb ends.
func Serve(tb testing.TB, handler http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(handler)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// ServeHTML serves one HTML document at every path and returns the base URL.
func ServeHTML(tb testing.TB, html string) string {
	tb.Helper()
	return Serve(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(html))
	}))
}

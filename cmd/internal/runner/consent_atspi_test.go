//go:build linux && amd64

package runner

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// The AT-SPI adapter against the real prompt: the person's Chromium runs
// with accessibility on, on a desktop with a session bus, and lets webcodex
// press its "Allow remote debugging?" prompt. A decoy Chromium of another
// profile, in its own network namespace (its own 127.0.0.1:9222), shows its
// own real prompt at the same time, in a window titled like the prompt.

// decoyChrome is the decoy browser.
type decoyChrome struct {
	fp   platform.Fingerprint
	port int
	path string
}

// startDecoyChrome starts a headed Chromium with accessibility on in a new
// network namespace, at the right half of the screen, showing url. It
// skips the test where network namespaces are not permitted.
func startDecoyChrome(t *testing.T, x *xScreen, bus, url string) *decoyChrome {
	t.Helper()
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s required for the decoy browser: apt-get install -y util-linux iproute2 (%v)", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		t.Skipf("the decoy needs a network namespace of its own, not permitted here: %v %s", err, out)
	}
	exe, err := platform.FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	profile, home, tmp := filepath.Join(root, "profile"), filepath.Join(root, "home"), filepath.Join(root, "tmp")
	for _, d := range []string{profile, home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(profile, "Local State"), []byte(`{"devtools":{"remote_debugging":{"user-enabled":true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Loopback is down in a new namespace; the browser's server needs it.
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, exe,
		"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
		fmt.Sprintf("--window-position=%d,0", x.width/2), "--window-size=1200,850", url)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "DISPLAY=" + x.display,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"DBUS_SESSION_BUS_ADDRESS=" + bus, "ACCESSIBILITY_ENABLED=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	logFile, err := os.Create(filepath.Join(root, "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("the decoy's output:\n%s", tail(out, 3000))
		}
		stopGroup(t, cmd.Process.Pid, exited)
		reapByTMPDIR(t, tmp)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if port, path, err := platform.ReadDevToolsActivePort(profile); err == nil {
			fp, err := platform.FingerprintOf(cmd.Process.Pid)
			if err == nil && platform.Product(fp.Exe) != "" {
				return &decoyChrome{fp: fp, port: port, path: path}
			}
		}
		select {
		case <-exited:
			t.Fatal("the decoy Chromium exited during start-up")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the decoy's remote debugging setting started no server within 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling a file another process writes
	}
}

// sysSetns is setns(2) on linux/amd64 (the syscall package does not name
// it; golang.org/x/sys is not a direct dependency).
const sysSetns = 308

// dialInNetns connects to addr inside the network namespace of pid, from
// a locked thread that enters the namespace and returns to its own before
// it is unlocked. The thread must not die: a child started with Pdeathsig
// from it (the person's browser) would get the signal.
func dialInNetns(pid int, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer own.Close()
		target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer target.Close()
		if _, _, errno := syscall.RawSyscall(sysSetns, target.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("setns: %w", errno)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if _, _, errno := syscall.RawSyscall(sysSetns, own.Fd(), syscall.CLONE_NEWNET, 0); errno == 0 {
			runtime.UnlockOSThread() // back home: the thread may serve other goroutines
		} // else the thread stays locked and exits with this goroutine
		ch <- result{c, err}
	}()
	r := <-ch
	return r.conn, r.err
}

// holdHandshake opens a WebSocket handshake to the decoy, which it holds on
// its prompt; the channel gets the HTTP status it ends with.
func (d *decoyChrome) holdHandshake(t *testing.T) <-chan int {
	t.Helper()
	conn, err := dialInNetns(d.fp.PID, fmt.Sprintf("127.0.0.1:%d", d.port))
	if err != nil {
		t.Fatalf("dial the decoy: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", d.path, d.port)
	status := make(chan int, 1)
	go func() { // ends when the decoy answers or the cleanup closes conn
		line, err := bufio.NewReader(conn).ReadString('\n')
		code := -1
		if f := strings.Fields(line); err == nil && len(f) >= 2 {
			code, _ = strconv.Atoi(f[1])
		}
		status <- code
	}()
	return status
}

// provenPrompts returns how many proven prompts of the browser fp the
// platform adapter sees now.
func provenPrompts(t *testing.T, ui *platform.PromptUI, fp platform.Fingerprint) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps, err := ui.Observe(ctx, fp)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	n := 0
	for _, p := range ps {
		if p.Proven {
			n++
		}
	}
	return n
}

// TestATSPIConsentUnderXvfb: with the person's leave (the grant says so),
// webcodex presses the approved browser's prompt once, a second or more
// after it appeared; one socket, and later commands prompt no more. The
// decoy's prompt, up at the same time in a window titled like the prompt,
// is never pressed and its handshake stays pending. When the person
// cancels the prompt before the adapter acts, the grant is revoked and the
// adapter presses nothing, then or after.
func TestATSPIConsentUnderXvfb(t *testing.T) {
	needXTools(t)
	x := startXvfb(t, 2560, 900) // the person's browser on the left half, the decoy's on the right
	bus := startDesktopBus(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>user tab</title><p>the user's logged-in page</p><button>Save</button>`)
	}))
	t.Cleanup(srv.Close)
	c := startHeadedChrome(t, x, srv.URL+"/", headedOptions{bus: bus, a11y: true})
	look := "data:text/html," + url.PathEscape(`<title>Allow remote debugging?</title><p>Allow remote debugging? <button>Allow</button>`)
	decoy := startDecoyChrome(t, x, bus, look)
	env := platform.DesktopEnv{SessionBus: bus, Display: x.display}
	watcher := platform.NewPromptUI(env) // the test's own eyes on the accessibility bus
	t.Cleanup(func() { watcher.Close() })
	decoyStatus := decoy.holdHandshake(t)
	waitfor.Until(t, 20*time.Second, "the decoy's own prompt is up", func() bool { return provenPrompts(t, watcher, decoy.fp) == 1 })

	req := localapi.AttachRequest{ProfileDir: c.profile, Allow: []string{srv.URL}, PressPrompt: true}
	ctx := context.Background()

	// The adapter presses Allow: one socket, one press, a second or more
	// after the prompt was first seen.
	ui := &countingUI{ConsentUI: newATSPIConsentUI(env)}
	h := consentHarness(t, 30*time.Second, ui, 0)
	h.approve(t, x, c, req)
	o := awaitAttach(t, x, c, attachAsync(h, req), 40*time.Second)
	h.record(o.res, o.err)
	if o.err != nil {
		t.Fatalf("attach with the adapter pressing: %v", o.err)
	}
	if n, d, p := handshakesOf(h.r), h.dial.dials.Load(), ui.presses.Load(); n != 1 || d != 1 || p != 1 {
		t.Fatalf("%d handshakes, %d connections, %d presses; want 1, 1 and 1", n, d, p)
	}
	var press *consentUIEvidence
	for _, rec := range auditConsentUI(t, h.r) {
		if rec.Step == "press" {
			press = &rec
		}
	}
	if press == nil || press.Outcome != "taken" || press.ObservedMs < 1000 || len(press.Evidence) != 1 || strings.Contains(press.Evidence[0], "Chromium") {
		t.Fatalf("audit of the press = %+v, want one taken press at least 1000 ms after the prompt was seen, with evidence naming no window", press)
	}
	t.Logf("pressed %d ms after the prompt was first seen; evidence: %s", press.ObservedMs, press.Evidence[0])
	if provenPrompts(t, watcher, c.fp()) != 0 {
		t.Fatal("the person's prompt is still up after the attach")
	}
	select {
	case s := <-decoyStatus:
		t.Fatalf("the decoy's handshake ended with %d: its prompt was answered", s)
	default:
	}
	if provenPrompts(t, watcher, decoy.fp) != 1 {
		t.Fatal("the decoy's prompt is gone")
	}
	tab := pageByURL(t, o.res.Browser.Pages, srv.URL+"/")
	for i := 0; i < 2; i++ {
		rd, err := runOp(ctx, h.r, op.ReadText, readIn(tab))
		h.record(rd, err)
		if err != nil || !strings.Contains(rd.Text, "logged-in page") {
			t.Fatalf("read = %+v, %v", rd, err)
		}
	}
	if n, d := handshakesOf(h.r), h.dial.dials.Load(); n != 1 || d != 1 || provenPrompts(t, watcher, c.fp()) != 0 {
		t.Fatalf("after commands: %d handshakes, %d connections, or a prompt up; want 1, 1 and none", n, d)
	}
	if _, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: o.res.Browser.ID}); err != nil {
		t.Fatal(err)
	}

	// The person cancels before the adapter acts (it waits 10 s here): the
	// grant is revoked, the adapter saw the prompt and pressed nothing.
	ui2 := &countingUI{ConsentUI: newATSPIConsentUI(env)}
	h2 := consentHarness(t, 30*time.Second, ui2, 10*time.Second)
	h2.approve(t, x, c, req)
	pending := attachAsync(h2, req)
	p := waitPrompt(t, x, c, pending, 20*time.Second)
	x.clickAndPark(t, p.cancel)
	o = awaitAttach(t, x, c, pending, 20*time.Second)
	h2.record(o.res, o.err)
	if !fsm.IsCode(o.err, fsm.ConsentRevoked) {
		t.Fatalf("attach after the person's Cancel = %v, want %s", o.err, fsm.ConsentRevoked)
	}
	if ui2.observes.Load() == 0 || ui2.presses.Load() != 0 {
		t.Fatalf("the adapter observed %d times and pressed %d times; want it watching and pressing nothing", ui2.observes.Load(), ui2.presses.Load())
	}
	select {
	case s := <-decoyStatus:
		t.Fatalf("the decoy's handshake ended with %d", s)
	default:
	}
	u := &usersChrome{profile: c.profile, port: c.port}
	h.privacyScan(u)
	h2.privacyScan(u)
}

// fp is the person's browser's fingerprint (zero once it is gone).
func (c *headedChrome) fp() platform.Fingerprint {
	fp, _ := platform.FingerprintOf(c.pid)
	return fp
}

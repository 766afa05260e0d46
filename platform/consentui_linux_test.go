package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/internal/testlock"
)

// The adapter against the real prompt: a headed Chromium under Xvfb, on a
// private session bus (its accessibility bus is activated on demand), whose
// profile has chrome://inspect remote debugging on, so every WebSocket
// handshake waits on its "Allow remote debugging?" prompt.

// startXvfb starts Xvfb on a display it picks itself and returns ":N"; the
// test's cleanup stops it by its PID.
func startXvfb(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Fatalf("Xvfb is required: apt-get install -y xvfb (%v)", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x900x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	num := make(chan string, 1)
	go func() { // ends when Xvfb closes fd 3 or exits
		b, _ := io.ReadAll(io.LimitReader(pr, 64))
		num <- strings.TrimSpace(string(b))
	}()
	select {
	case n := <-num:
		if _, err := strconv.Atoi(n); err != nil {
			t.Fatalf("Xvfb reported no display (%q)", n)
		}
		return ":" + n
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not report its display within 20s")
		return ""
	}
}

// promptBrowser is a headed Chromium whose debugging server waits for its
// prompt.
type promptBrowser struct {
	fp   Fingerprint
	ws   string // the browser endpoint's path
	port int
}

// startPromptBrowser starts the person's Chromium on display with the
// session bus; with a11y it joins the accessibility bus.
func startPromptBrowser(t *testing.T, display, bus string, a11y bool) *promptBrowser {
	t.Helper()
	exe := needChromium(t)
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
	cmd := exec.Command(exe, "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--window-position=0,0", "--window-size=1200,850", "about:blank")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "DISPLAY=" + display,
		"DBUS_SESSION_BUS_ADDRESS=" + bus, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	if a11y {
		cmd.Env = append(cmd.Env, "ACCESSIBILITY_ENABLED=1")
	}

	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if err := reapTagged(tmp); err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if port, path, err := ReadDevToolsActivePort(profile); err == nil {
			pid, err := ListenerOwner(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)))
			if err == nil && pid == cmd.Process.Pid {
				fp, err := FingerprintOf(pid)
				if err != nil {
					t.Fatal(err)
				}
				return &promptBrowser{fp: fp, ws: path, port: port}
			}
		}
		select {
		case <-exited:
			t.Fatal("Chromium exited during start-up")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the profile's remote debugging setting started no server within 30s")
		}
		time.Sleep(50 * time.Millisecond) // polling a file another process writes
	}
}

// holdHandshake opens a WebSocket handshake to the browser, which Chromium
// holds on its prompt; the channel gets the HTTP status it ends with.
func (b *promptBrowser) holdHandshake(t *testing.T) <-chan int {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", b.port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", b.ws, b.port)
	status := make(chan int, 1)
	go func() { // ends when the browser answers or the cleanup closes conn
		line, err := bufio.NewReader(conn).ReadString('\n')
		f := strings.Fields(line)
		code := -1
		if err == nil && len(f) >= 2 {
			code, _ = strconv.Atoi(f[1])
		}
		status <- code
	}()
	return status
}

// waitPrompt observes until exactly one prompt of b shows, and returns it.
func waitPrompt(t *testing.T, u *PromptUI, b *promptBrowser, poll time.Duration) Prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ps, err := u.Observe(ctx, b.fp)
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		if len(ps) == 1 {
			return ps[0]
		}
		if len(ps) > 1 {
			t.Fatalf("Observe found %d prompts, want 1: %+v", len(ps), ps)
		}
		if ctx.Err() != nil {
			t.Fatal("no prompt observed within 30s")
		}
		time.Sleep(poll) // the accessibility bus has no signal we subscribe to
	}
}

func noStatus(t *testing.T, ch <-chan int, what string) {
	t.Helper()
	select {
	case s := <-ch:
		t.Fatalf("%s: the handshake ended with %d", what, s)
	default:
	}
}

func awaitStatus(t *testing.T, ch <-chan int, want int, what string) {
	t.Helper()
	select {
	case s := <-ch:
		if s != want {
			t.Fatalf("%s: the handshake ended with %d, want %d", what, s, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the handshake did not end within 20s", what)
	}
}

// TestPromptUIUnderXvfb: the adapter proves and presses the real prompt;
// the first press is never sooner than PromptGuard after the prompt was
// seen; a press Chromium drops is reported and counts, so the prompt is
// never pressed again; and a process that is not on the accessibility bus
// makes the adapter unavailable, with the reason.
func TestPromptUIUnderXvfb(t *testing.T) {
	needChromium(t)
	testlock.UserEnabledPort(t)
	display := startXvfb(t)
	bus := startSessionBus(t)
	env := DesktopEnv{SessionBus: bus, Display: display}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.Check(ctx); err != nil {
		t.Fatalf("Check on a session with an accessibility bus = %v", err)
	}
	for _, e := range []DesktopEnv{{SessionBus: bus}, {SessionBus: bus, Display: display, Wayland: "wayland-0"}, {Display: display}} {
		if err := e.Check(ctx); !errors.Is(err, ErrConsentUIUnavailable) {
			t.Errorf("Check(%+v) = %v, want unavailable", e, err)
		}
	}

	b := startPromptBrowser(t, display, bus, true)
	u := NewPromptUI(env)
	t.Cleanup(func() { u.Close() })
	if ps, err := u.Observe(ctx, b.fp); err != nil || len(ps) != 0 {
		t.Fatalf("Observe before any handshake = %+v, %v; want no prompt", ps, err)
	}
	self, err := FingerprintOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Observe(ctx, self); !errors.Is(err, ErrConsentUIUnavailable) || !strings.Contains(err.Error(), "accessibility was off") {
		t.Fatalf("Observe of a process not on the accessibility bus = %v, want unavailable saying why", err)
	}

	// A press at once is dropped by Chromium's input guard (it came within
	// about 320 ms of the prompt appearing): reported, and that prompt is
	// never pressed again. A machine too slow to press that early gets the
	// press taken; that try is retried on a new handshake, a bounded number
	// of times.
	u.guard = 0
	var status <-chan int
	var p Prompt
	for try := 1; ; try++ {
		status = b.holdHandshake(t)
		p = waitPrompt(t, u, b, 0)
		if !p.Proven || p.Action != "allow" || p.Role != "push button" || !p.Modal || p.Owner != b.fp {
			t.Fatalf("prompt = %+v, want the proven Allow of the browser", p)
		}
		if strings.Contains(p.Evidence, "about:blank") || strings.Contains(p.Evidence, "Chromium") {
			t.Errorf("the evidence names a window: %q", p.Evidence)
		}
		rep, err := u.Press(ctx, b.fp, p.Key, p.Observation)
		if errors.Is(err, ErrPressDropped) {
			break
		}
		if err != nil {
			t.Fatalf("an immediate press = %v, want it dropped or taken", err)
		}
		awaitStatus(t, status, 101, "after an early press that was taken")
		t.Logf("try %d: the press %s after the prompt was seen was taken", try, rep.ObservedFor.Round(time.Millisecond))
		if try == 3 {
			t.Fatal("three presses at first sight were all taken; Chromium 156 drops presses within about 320 ms of the prompt")
		}
	}
	noStatus(t, status, "after a dropped press")
	if _, err := u.Press(ctx, b.fp, p.Key, p.Observation); !errors.Is(err, ErrPromptPressed) {
		t.Fatalf("a second press of the same prompt = %v, want %v", err, ErrPromptPressed)
	}
	again := waitPrompt(t, u, b, 50*time.Millisecond)
	if _, err := u.Press(ctx, b.fp, again.Key, again.Observation); !errors.Is(err, ErrPromptPressed) {
		t.Fatalf("a press of the same prompt in a later observation = %v, want %v", err, ErrPromptPressed)
	}
	if _, err := u.Press(ctx, b.fp, p.Key, p.Observation); !errors.Is(err, ErrPromptStale) {
		t.Fatalf("a press naming an older observation = %v, want %v", err, ErrPromptStale)
	}
	noStatus(t, status, "after refused presses")

	// The guard: a fresh adapter (it has pressed nothing) presses the same
	// prompt no sooner than PromptGuard after it saw it; Chromium takes the
	// press and completes the handshake.
	u2 := NewPromptUI(env)
	t.Cleanup(func() { u2.Close() })
	p2 := waitPrompt(t, u2, b, 50*time.Millisecond)
	rep, err := u2.Press(ctx, b.fp, p2.Key, p2.Observation)
	if err != nil {
		t.Fatalf("a press after the guard = %v", err)
	}
	if rep.ObservedFor < PromptGuard || rep.GoneAfter <= 0 {
		t.Fatalf("press report %+v, want at least %s observed and the prompt gone", rep, PromptGuard)
	}
	awaitStatus(t, status, 101, "after Allow")
	t.Logf("pressed %s after first seeing the prompt; it went %s later", rep.ObservedFor.Round(time.Millisecond), rep.GoneAfter.Round(time.Millisecond))
	if ps, err := u2.Observe(ctx, b.fp); err != nil || len(ps) != 0 {
		t.Fatalf("Observe after Allow = %+v, %v; want no prompt", ps, err)
	}
	if _, err := u2.Press(ctx, b.fp, p2.Key, p2.Observation); !errors.Is(err, ErrPromptStale) {
		t.Fatalf("a press after the prompt went = %v, want %v", err, ErrPromptStale)
	}
}

// TestDesktopEnvCheck: a session without an X display, on Wayland, without
// a session bus, or whose bus cannot start an accessibility bus, cannot
// support the adapter, and says why; one with at-spi2-core can.
func TestDesktopEnvCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withA11y := startSessionBus(t)
	// A bus that activates nothing: no service directories.
	conf := filepath.Join(t.TempDir(), "bare.conf")
	if err := os.WriteFile(conf, []byte(`<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>`+
		`<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>`), 0o600); err != nil {
		t.Fatal(err)
	}
	bare := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, err := bare.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bare.Process.Kill(); bare.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env  DesktopEnv
		want string // "" = available
	}{
		{DesktopEnv{SessionBus: withA11y, Display: ":99"}, ""},
		{DesktopEnv{SessionBus: strings.TrimSpace(addr), Display: ":99"}, "no accessibility bus"},
		{DesktopEnv{SessionBus: withA11y}, "no X display"},
		{DesktopEnv{SessionBus: withA11y, Display: ":99", Wayland: "wayland-0"}, "Wayland"},
		{DesktopEnv{SessionBus: withA11y, Display: ":99", SessionType: "wayland"}, "Wayland"},
		{DesktopEnv{Display: ":99"}, "no D-Bus session bus"},
	} {
		err := tt.env.Check(ctx)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%+v) = %v, want available", tt.env, err)
		case tt.want != "" && (!errors.Is(err, ErrConsentUIUnavailable) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%+v) = %v, want unavailable: %s", tt.env, err, tt.want)
		}
	}
}

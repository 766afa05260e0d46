package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/godbus/dbus/v5"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/internal/persontty"
)

// fakeNotifications is a FAKE desktop notification server (a real one needs
// a graphical session, which this machine has not): it owns
// org.freedesktop.Notifications on a private session bus and hands every
// notification's body to the test, as the person's screen would show it.
type fakeNotifications struct{ bodies chan string }

// Notify implements org.freedesktop.Notifications.Notify.
func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	select {
	case f.bodies <- body:
	default: // the test reads every one it expects; more would be a bug it catches by count
	}
	return 1, nil
}

// startSessionBus starts a private dbus-daemon session bus (stopped by its
// pid when the test ends) with the fake notification server on it, and
// points DBUS_SESSION_BUS_ADDRESS at it for the Runner the CLI starts.
func startSessionBus(t *testing.T) *fakeNotifications {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Fatalf("dbus-daemon is required: apt-get install -y dbus (%v)", err)
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fake := &fakeNotifications{bodies: make(chan string, 16)}
	if err := conn.Export(fake, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.Notifications: %v %v", reply, err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return fake
}

var codeInBody = regexp.MustCompile(`Code (\d{6}) for approval request (\w+)`)

// shownCode waits for the notification of request id and returns its code.
func (f *fakeNotifications) shownCode(t *testing.T, id string) string {
	t.Helper()
	select {
	case body := <-f.bodies:
		m := codeInBody.FindStringSubmatch(body)
		if m == nil || m[2] != id {
			t.Fatalf("the notification does not carry the code for %s: %q", id, body)
		}
		return m[1]
	case <-time.After(30 * time.Second):
		t.Fatal("no desktop notification was shown")
		return ""
	}
}

// requestFromAttach runs attach and returns the approval request id of
// its browser_consent_required refusal.
func requestFromAttach(t *testing.T, e *env, args ...string) string {
	t.Helper()
	code, out, errs := e.run(append(args, "--json")...)
	if code != 3 || !strings.Contains(out, "browser_consent_required") {
		t.Fatalf("attach without approval: exit %d %q %q", code, out, errs)
	}
	var ref struct{ Refusal struct{ Detail string } }
	json.Unmarshal([]byte(out), &ref)
	f := strings.Fields(ref.Refusal.Detail)
	if len(f) < 3 {
		t.Fatalf("no request id in %q", ref.Refusal.Detail)
	}
	return strings.TrimSuffix(f[2], ":")
}

// answerWithCode runs `webcodex approve [--deny] ID` at the person's own
// terminal, waits for the code prompt, types code and returns the screen.
func answerWithCode(t *testing.T, e *env, fake *fakeNotifications, id string, deny bool, code func(shown string) string) string {
	t.Helper()
	args := []string{"approve", id}
	if deny {
		args = []string{"approve", "--deny", id}
	}
	term := persontty.Start(t, e.cmd().Env, append([]string{binary}, args...)...)
	term.WaitFor("Type the 6-digit code", 30*time.Second)
	term.Type(code(fake.shownCode(t, id)) + "\n")
	return term.Wait(30 * time.Second)
}

func wrongCode(code string) string {
	if code == "123456" {
		return "654321"
	}
	return "123456"
}

func same(code string) string { return code }

// TestApproveNeedsDesktopCodeFakeNotificationServer: with a graphical
// session (a private session bus and a FAKE notification server), approve
// shows a one-time code through the desktop and requires it: the right code
// approves, a wrong one is refused with the attempts left, the third wrong
// one denies the request; deny needs the code too. The audit records the
// second factor.
func TestApproveNeedsDesktopCodeFakeNotificationServer(t *testing.T) {
	e := newEnv(t)
	// The person's Chromium starts first: with a session bus in its
	// environment Chromium rewrites its process title, which the profile
	// check does not read yet. The Runner (started by the first command
	// below) gets the bus.
	_, profile := startUsersChrome(t)
	fake := startSessionBus(t)
	attach := []string{"attach", "--profile-dir", profile}

	// Right code (after one wrong one) approves.
	id := requestFromAttach(t, e, attach...)
	screen := answerWithCode(t, e, fake, id, false, wrongCode)
	if !strings.Contains(screen, "approval_invalid") || !strings.Contains(screen, "2 attempts left") {
		t.Fatalf("a wrong code:\n%s", screen)
	}
	screen = answerWithCode(t, e, fake, id, false, same)
	if !strings.Contains(screen, "approved. Run") {
		t.Fatalf("the right code:\n%s", screen)
	}
	var res localapi.AttachResult
	e.json(&res, attach...)
	e.json(&struct{}{}, "close", res.Browser.ID)

	// Three wrong codes deny the request; nothing can approve it after.
	evalAttach := append(attach, "--allow-evaluate")
	id2 := requestFromAttach(t, e, evalAttach...)
	for i := 1; i <= 3; i++ {
		screen := answerWithCode(t, e, fake, id2, false, wrongCode)
		if !strings.Contains(screen, "approval_invalid") {
			t.Fatalf("wrong code %d:\n%s", i, screen)
		}
		if i == 3 && !strings.Contains(screen, "the request is denied") {
			t.Fatalf("the third wrong code did not deny the request:\n%s", screen)
		}
	}
	if id3 := requestFromAttach(t, e, evalAttach...); id3 == id2 {
		t.Fatalf("the denied request %s was offered again", id2)
	}

	// Deny needs the code as well: a wrong one leaves the request pending.
	id4 := requestFromAttach(t, e, append(attach, "--allow", "example.com")...)
	screen = answerWithCode(t, e, fake, id4, true, wrongCode)
	if !strings.Contains(screen, "approval_invalid") || strings.Contains(screen, "denied.") {
		t.Fatalf("deny with a wrong code:\n%s", screen)
	}
	screen = answerWithCode(t, e, fake, id4, true, same)
	if !strings.Contains(screen, "denied.") {
		t.Fatalf("deny with the right code:\n%s", screen)
	}

	audit, err := os.ReadFile(filepath.Join(e.state, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"second_factor":"desktop_notification"`) || !strings.Contains(string(audit), `"provider":"terminal"`) {
		t.Fatalf("the audit does not record the second factor:\n%s", audit)
	}
	for _, leak := range []string{"Code ", fmt.Sprintf("%q", "code")} {
		if strings.Contains(string(audit), leak) {
			t.Fatalf("the audit holds a code (%s):\n%s", leak, audit)
		}
	}
}

// TestApproveRefusedOnATerminalTheAskerDrives: the agent that ran
// `webcodex attach` answers the approval itself on a terminal it drives —
// through a pty library, and through `script -c` — and is refused with
// approval_invalid and an explanation; the request is not consumed, and the
// person's own terminal approves it.
func TestApproveRefusedOnATerminalTheAskerDrives(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "") // restored after the test
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")  // no desktop: the terminal alone
	e := newEnv(t)
	_, profile := startUsersChrome(t)
	attach := []string{"attach", "--profile-dir", profile}
	id := requestFromAttach(t, e, attach...)

	// A pty library: this test holds the master side.
	cmd := e.cmd("approve", id)
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	ptmx.Write([]byte("allow\n"))
	var screen strings.Builder
	buf := make([]byte, 4096)
	for {
		ptmx.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := ptmx.Read(buf)
		screen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	ptmx.Close()
	werr := cmd.Wait()
	if werr == nil || !strings.Contains(screen.String(), "approval_invalid") {
		t.Fatalf("approve on a pty the asking agent drives: %v\n%s", werr, screen.String())
	}

	// script(1), started by the agent under itself.
	sc := exec.Command("script", "-q", "-e", "-c", binary+" approve --json "+id, "/dev/null")
	sc.Env = e.cmd().Env
	sc.Stdin = strings.NewReader("allow\n")
	out, err := sc.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "approval_invalid") || !strings.Contains(string(out), "driven by") || !strings.Contains(string(out), `\"script\"`) {
		t.Fatalf("approve under script -c run by the asking agent: %v\n%s", err, out)
	}

	// Not consumed: the person's own terminal approves the same request.
	term := persontty.Start(t, e.cmd().Env, binary, "approve", id)
	term.WaitFor(`Type "allow"`, 30*time.Second)
	term.Type("allow\n")
	if s := term.Wait(30 * time.Second); !strings.Contains(s, "approved. Run") {
		t.Fatalf("approve at the person's terminal:\n%s", s)
	}
	var res localapi.AttachResult
	e.json(&res, attach...)
	audit, err := os.ReadFile(filepath.Join(e.state, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"second_factor":"none"`) || !strings.Contains(string(audit), `"comm":"script"`) {
		t.Fatalf("the audit does not record the terminal's driver and the missing second factor:\n%s", audit)
	}
}

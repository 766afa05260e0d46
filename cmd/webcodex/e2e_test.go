package main_test

// End-to-end tests: the built webcodex binary, its background Runner and a
// real headless Chromium, on pages served on 127.0.0.1.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/persontty"
	"github.com/webcodex/webcodex/internal/testbin"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

var binary string

func TestMain(m *testing.M) { testbin.Main(tracecheck.Wrap(m), false, &binary) }

// env is one isolated webcodex installation: its own state root.
type env struct {
	t     *testing.T
	state string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tracecheck.Track(t)
	if _, err := platform.FindChromium(); err != nil {
		if testing.Short() {
			t.Skip("Chromium missing (-short)")
		}
		t.Fatalf("Chromium is required: apt-get install -y chromium (%v)", err)
	}
	e := &env{t: t, state: filepath.Join(t.TempDir(), "state")}
	t.Cleanup(func() { e.run("stop") })
	return e
}

func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(binary, args...)
	c.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+e.state, "WEBCODEX_EXECUTABLE="+binary)
	return c
}

func (e *env) run(args ...string) (int, string, string) {
	e.t.Helper()
	c := e.cmd(args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// json runs a command with --json, requires exit 0 and decodes stdout.
func (e *env) json(v any, args ...string) {
	e.t.Helper()
	code, out, errs := e.run(append(args, "--json")...)
	if code != 0 {
		e.t.Fatalf("webcodex %v: exit %d\nstderr: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("webcodex %v: bad JSON %q: %v", args, out, err)
	}
}

// refused runs a command and requires the refusal code, with the exit
// status of its class (3; 2 for invalid_argument; 1 for a failed
// navigation).
func (e *env) refused(code string, args ...string) string {
	e.t.Helper()
	got, out, errs := e.run(append(args, "--json")...)
	if got != fsm.Code(code).CLIExit() || !strings.Contains(out, `"code": "`+code+`"`) && !strings.Contains(out, `"code":"`+code+`"`) {
		e.t.Fatalf("webcodex %v: exit %d stdout %q stderr %q, want refusal %s", args, got, out, errs, code)
	}
	return errs
}

type ownedRecord struct {
	PID         int    `json:"pid"`
	PGID        int    `json:"pgid"`
	TmpDir      string `json:"tmpdir"`
	UserDataDir string `json:"ephemeral_profile"`
}

// records reads what the Runner recorded about its owned browsers (test
// white box: the state root is private to this test).
func (e *env) records() []ownedRecord {
	e.t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.state, "browser", "owned", "*.json"))
	var out []ownedRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var r ownedRecord
		json.Unmarshal(data, &r)
		out = append(out, r)
	}
	return out
}

// running reports whether a Runner answers (status never starts one).
func (e *env) running() bool {
	code, out, _ := e.run("status", "--json")
	var st struct{ Running bool }
	return code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.Running
}

func assertGone(t *testing.T, rec ownedRecord) {
	t.Helper()
	waitfor.Until(t, 10*time.Second, "browser process group gone", func() bool { return !platform.GroupAlive(rec.PGID) })
	for _, dir := range []string{rec.TmpDir, rec.UserDataDir} {
		if dir == "" {
			continue
		}
		waitfor.Until(t, 5*time.Second, "temporary directory removed", func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		})
	}
}

func fixture(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Hello webcodex</title><h1>hello from the fixture</h1><p>second line</p>`)
	})
	mux.HandleFunc("/persist", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>persist</title><script>
			if (!localStorage.getItem("run1")) localStorage.setItem("run1", "kept");
			document.cookie = "visit=yes; Max-Age=86400; path=/";
		</script>ok`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestLaunchOpenGotoReadScreenshotClose(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	srv := fixture(t)
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	if b.Mode != localapi.ModeEphemeral || b.State != "ready" || !b.Headless {
		t.Fatalf("launch = %+v", b)
	}
	recs := e.records()
	if len(recs) != 1 || !platform.GroupAlive(recs[0].PGID) {
		t.Fatalf("records %+v: the launched group is not alive", recs)
	}
	var p localapi.PageInfo
	e.json(&p, "open", b.ID)
	var nav localapi.NavResult
	e.json(&nav, "goto", p.ID, srv.URL+"/")
	if nav.Title != "Hello webcodex" || nav.URL != srv.URL+"/" {
		t.Fatalf("goto = %+v", nav)
	}
	var rd localapi.ReadResult
	e.json(&rd, "read", p.ID)
	if !strings.Contains(rd.Text, "hello from the fixture") || rd.Truncated {
		t.Fatalf("read = %+v", rd)
	}
	e.json(&rd, "read", p.ID, "--max", "5")
	if !rd.Truncated || !strings.HasPrefix(rd.Text, "hello") || !strings.Contains(rd.Text, "truncated") {
		t.Fatalf("bounded read = %+v", rd)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	var sum struct{ Width, Height int }
	e.json(&sum, "screenshot", p.ID, "-o", shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	var vp localapi.EvalResult
	e.json(&vp, "eval", p.ID, "[Math.round(innerWidth * devicePixelRatio), Math.round(innerHeight * devicePixelRatio)]")
	want, _ := vp.Value.([]any)
	if bd := img.Bounds(); bd.Dx() != sum.Width || bd.Dy() != sum.Height || len(want) != 2 ||
		float64(bd.Dx()) != want[0] || float64(bd.Dy()) != want[1] {
		t.Fatalf("screenshot %v, reported %dx%d, viewport %v", bd, sum.Width, sum.Height, want)
	}
	var ev localapi.EvalResult
	e.json(&ev, "eval", p.ID, "document.querySelectorAll('p').length + 40")
	if ev.Value != float64(41) {
		t.Fatalf("eval = %+v", ev)
	}
	var st localapi.Status
	e.json(&st, "status")
	if len(st.Browsers) != 1 || len(st.Browsers[0].Pages) < 1 {
		t.Fatalf("status = %+v", st)
	}
	var closed localapi.CloseResult
	e.json(&closed, "close", b.ID)
	assertGone(t, recs[0])
	if len(e.records()) != 0 {
		t.Fatal("record left after close")
	}
	e.refused("not_found", "pages", b.ID)
	e.refused("browser_binding_stale", "read", p.ID)
}

func TestGotoFailureIsReported(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	var p localapi.PageInfo
	e.json(&p, "open", b.ID)
	// A port nothing listens on: the load fails.
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	e.refused("browser_navigation_failed", "goto", p.ID, dead+"/")
	e.run("close", b.ID)
}

func TestRunnerKilledBrowserGone(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	serve := e.cmd("serve")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	serve.Stderr = &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "runner answers", e.running)
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	recs := e.records()
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	serve.Process.Signal(syscall.SIGKILL)
	serve.Wait()
	// Pdeathsig ends the browser with its parent.
	waitfor.Until(t, 10*time.Second, "browser gone after the Runner was killed", func() bool { return !platform.GroupAlive(recs[0].PGID) })
	// The next Runner reaps what it can identify as its own leftovers
	// (status starts none: a verb that needs a Runner does).
	if code, _, errs := e.run("pages", "b-none"); code != 3 {
		t.Fatalf("a verb after the Runner died: %d %s", code, errs)
	}
	assertGone(t, recs[0])
	if len(e.records()) != 0 {
		t.Fatal("the new Runner did not clear the old record")
	}
	if strings.Contains(logs.String(), "ws://") || strings.Contains(logs.String(), e.state) {
		t.Fatalf("runner log leaks an endpoint or a path:\n%s", logs.String())
	}
}

func TestManagedProfilePersists(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	srv := fixture(t)
	var b1 localapi.BrowserInfo
	e.json(&b1, "launch", "--managed", "work", "--headless")
	if b1.Mode != localapi.ModeManaged || b1.Profile != "work" {
		t.Fatalf("launch = %+v", b1)
	}
	var p1 localapi.PageInfo
	e.json(&p1, "open", b1.ID, srv.URL+"/persist")
	e.refused("lease_held", "launch", "--managed", "work", "--headless")
	e.json(&localapi.CloseResult{}, "close", b1.ID)

	var b2 localapi.BrowserInfo
	e.json(&b2, "launch", "--managed", "work", "--headless")
	if b2.ID == b1.ID {
		t.Fatal("relaunch reused the browser id")
	}
	var p2 localapi.PageInfo
	e.json(&p2, "open", b2.ID, srv.URL+"/")
	if p2.ID == p1.ID {
		t.Fatal("relaunch reused a page id")
	}
	var ev localapi.EvalResult
	e.json(&ev, "eval", p2.ID, `({ls: localStorage.getItem("run1"), cookie: document.cookie})`)
	got, _ := ev.Value.(map[string]any)
	if got["ls"] != "kept" || !strings.Contains(fmt.Sprint(got["cookie"]), "visit=yes") {
		t.Fatalf("run 2 sees %+v, want the localStorage value and the cookie from run 1", got)
	}
	e.refused("not_found", "pages", b1.ID)
	e.json(&localapi.CloseResult{}, "close", b2.ID)
	if _, err := os.Stat(filepath.Join(e.state, "browser", "profiles", "work", "data")); err != nil {
		t.Fatalf("managed data removed on close: %v", err)
	}
}

func TestManagedProfileRefusals(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	e.refused("invalid_argument", "launch", "--managed", "../x", "--headless")
	e.refused("invalid_argument", "launch", "--managed", "Login", "--headless")

	profiles := filepath.Join(e.state, "browser", "profiles")
	if err := os.MkdirAll(profiles, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(e.state, "browser"), 0o700)
	// A 0755 profile directory.
	os.MkdirAll(filepath.Join(profiles, "open", "data"), 0o755)
	os.Chmod(filepath.Join(profiles, "open"), 0o755)
	e.refusedCode("browser_profile_unsafe", "launch", "--managed", "open", "--headless")
	// A profile root symlinked by another user is refused (they could
	// point it anywhere); the user's own symlink is followed.
	real := filepath.Join(t.TempDir(), "elsewhere")
	os.MkdirAll(real, 0o700)
	os.Symlink(real, filepath.Join(profiles, "linked"))
	if os.Geteuid() == 0 {
		os.Lchown(filepath.Join(profiles, "linked"), 12345, 12345)
		e.refusedCode("browser_profile_unsafe", "launch", "--managed", "linked", "--headless")
		os.Lchown(filepath.Join(profiles, "linked"), 0, 0)
	}
	var linked localapi.BrowserInfo
	e.json(&linked, "launch", "--managed", "linked", "--headless")
	e.json(&localapi.CloseResult{}, "close", linked.ID)
	if _, err := os.Stat(filepath.Join(real, "data")); err != nil {
		t.Errorf("the profile is not behind the user's symlink: %v", err)
	}
	// A SingletonLock naming another host: unverifiable, refused.
	foreign := filepath.Join(profiles, "foreign", "data")
	os.MkdirAll(foreign, 0o700)
	os.Chmod(filepath.Join(profiles, "foreign"), 0o700)
	os.Symlink("some-other-host-4242", filepath.Join(foreign, "SingletonLock"))
	e.refused("lease_held", "launch", "--managed", "foreign", "--headless")
	// A SingletonLock naming a dead PID on this host: taken over.
	host, _ := os.Hostname()
	stale := filepath.Join(profiles, "stale", "data")
	os.MkdirAll(stale, 0o700)
	os.Chmod(filepath.Join(profiles, "stale"), 0o700)
	os.Symlink(fmt.Sprintf("%s-%d", host, deadPID(t)), filepath.Join(stale, "SingletonLock"))
	var b localapi.BrowserInfo
	e.json(&b, "launch", "--managed", "stale", "--headless")
	e.json(&localapi.CloseResult{}, "close", b.ID)
}

// refusedCode requires the refusal code and that it names no path.
func (e *env) refusedCode(want string, args ...string) {
	e.t.Helper()
	if errs := e.refused(want, args...); strings.Contains(errs, e.state) {
		e.t.Fatalf("refusal names a path: %s", errs)
	}
}

// deadPID returns a PID that was just used and has exited.
func deadPID(t *testing.T) int {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

const loginPage = `<!doctype html><title>login</title>
<form id=f onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'Welcome ' + state.email + ' (' + state.password.length + ')'">
<label>Email <input id=email type=email></label>
<label>Password <input id=pw type=password></label>
<button type=submit>Sign in</button><button type=button hidden>Sign in</button>
</form><p id=out></p>
<script>
// Track values like React: a setter interceptor on the element, so writing
// .value directly from a script is ignored; only real input events count.
const state = {email: "", password: ""};
for (const [id, key] of [["email","email"],["pw","password"]]) {
  const el = document.getElementById(id);
  const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  Object.defineProperty(el, "value", {get() { return proto.get.call(this); }, set(v) { /* ignored, like React's tracker */ }});
  el.addEventListener("input", () => { state[key] = proto.get.call(el); });
}
</script>`

func TestPageActionsThroughCLI(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, loginPage)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	var p localapi.PageInfo
	e.json(&p, "open", b.ID, srv.URL+"/")

	var snap struct {
		ID   string `json:"snapshotId"`
		Text string `json:"text"`
	}
	e.json(&snap, "snapshot", p.ID)
	if !strings.Contains(snap.Text, `textbox "Email"`) || !strings.Contains(snap.Text, `button "Sign in"`) {
		t.Fatalf("snapshot lacks the form:\n%s", snap.Text)
	}
	var typed struct{ Requested, Delivered int }
	e.json(&typed, "type", p.ID, "--label", "Email", "--value", "ada@example.com")
	if typed.Requested != 15 || typed.Delivered != 15 {
		t.Fatalf("type = %+v", typed)
	}
	code, out, _ := e.run("fill", p.ID, "--label", "Password", "--value", "s3cret-pass", "--json")
	if code != 0 || strings.Contains(out, "s3cret") {
		t.Fatalf("fill password: exit %d, output %q (must never echo the value)", code, out)
	}
	// Two buttons are named "Sign in"; one is hidden, so the visible one is unique.
	e.json(&map[string]any{}, "click", p.ID, "--role", "button", "--name", "Sign in")
	var w struct{ Found bool }
	e.json(&w, "wait", p.ID, "--for", "text", "--for-text", "Welcome", "--timeout", "5s")
	if !w.Found {
		t.Fatal("the page never said Welcome")
	}
	// Read the page's own state back: never trust the tool's claim.
	var ev localapi.EvalResult
	e.json(&ev, "eval", p.ID, `document.getElementById("out").textContent`)
	if ev.Value != "Welcome ada@example.com (11)" {
		t.Fatalf("page state = %v", ev.Value)
	}
	e.refused("browser_element_not_found", "click", p.ID, "--role", "button", "--name", "Nope")
	audit, err := os.ReadFile(filepath.Join(e.state, "audit.jsonl"))
	if err != nil || strings.Count(string(audit), "\n") < 3 {
		t.Fatalf("audit trail: %v\n%s", err, audit)
	}
	if strings.Contains(string(audit), "ada@example.com") || strings.Contains(string(audit), "s3cret") {
		t.Fatal("audit trail records a typed value")
	}
	st, _ := os.Stat(filepath.Join(e.state, "audit.jsonl"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("audit mode %v", st.Mode().Perm())
	}
	e.run("close", b.ID)
}

// startUsersChrome starts "the user's Chrome" (see chromiumtest.Users).
func startUsersChrome(t *testing.T) (*platform.Process, string) {
	t.Helper()
	u := chromiumtest.StartUsers(t, filepath.Join(t.TempDir(), "users-profile"))
	return u.Proc, u.Profile
}

func TestAttachApproveThroughTerminal(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	srv := fixture(t)
	proc, profile := startUsersChrome(t)
	port, _, err := platform.ReadDevToolsActivePort(profile)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	attach := []string{"attach", "--profile-dir", profile, "--allow", srv.URL}
	code, out, errs := e.run(append(attach, "--json")...)
	outputs = append(outputs, out, errs)
	if code != 3 || !strings.Contains(out, "browser_consent_required") {
		t.Fatalf("attach without approval: exit %d %q %q", code, out, errs)
	}
	var ref struct{ Refusal struct{ Detail string } }
	json.Unmarshal([]byte(out), &ref)
	fields := strings.Fields(ref.Refusal.Detail)
	if len(fields) < 3 {
		t.Fatalf("no request id in %q", ref.Refusal.Detail)
	}
	id := strings.TrimSuffix(fields[2], ":")

	// Without a terminal, approve refuses.
	e.refused("approval_invalid", "approve", id)

	// A person at their own terminal (not one this test, which ran the
	// attach, drives: the Runner refuses that) types the confirmation.
	term := persontty.Start(t, e.cmd().Env, binary, "approve", id)
	screen := term.WaitFor(`Type "allow"`, 20*time.Second)
	if !strings.Contains(screen, "chromium") || !strings.Contains(screen, srv.URL) {
		t.Fatalf("the summary does not say what would be granted:\n%s", screen)
	}
	term.Type("allow\n")
	if screen = term.Wait(20 * time.Second); !strings.Contains(screen, "approved. Run") {
		t.Fatalf("approve at the person's terminal:\n%s", screen)
	}
	outputs = append(outputs, screen)

	var res localapi.AttachResult
	code, out, errs = e.run(append(attach, "--json")...)
	outputs = append(outputs, out, errs)
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Browser.Mode != localapi.ModeAttached {
		t.Fatalf("attach after approval: exit %d %q %q", code, out, errs)
	}
	code, out, _ = e.run("status")
	outputs = append(outputs, out)
	if code != 0 || !strings.Contains(out, res.Browser.ID) || !strings.Contains(out, "attached_external") {
		t.Fatalf("status: %d %s", code, out)
	}
	var closed localapi.CloseResult
	e.json(&closed, "close", res.Browser.ID)
	if closed.Teardown != "detached" {
		t.Fatalf("close of an attached browser = %+v", closed)
	}
	select {
	case <-proc.Exited():
		t.Fatal("closing the attachment ended the user's browser")
	default:
	}
	logs, _ := os.ReadFile(filepath.Join(e.state, "runner.log"))
	outputs = append(outputs, string(logs))
	all := strings.Join(outputs, "\n")
	for _, secret := range []string{fmt.Sprintf(":%d", port), "ws://", "/devtools/browser", profile} {
		if strings.Contains(all, secret) {
			t.Fatalf("an output or log line leaks %q:\n%s", secret, all)
		}
	}
}

// TestRunnerSIGTERMClosesOwnedBrowsers: SIGTERM makes the Runner close its
// owned browsers cleanly before exiting; a second Runner refuses to start
// while the first answers.
func TestRunnerSIGTERMClosesOwnedBrowsers(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	serve := e.cmd("serve")
	var logs bytes.Buffer
	serve.Stderr = &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "runner answers", e.running)
	code, _, errs := e.run("serve")
	if code == 0 || !strings.Contains(errs, "already running") {
		t.Fatalf("a second Runner: exit %d %q, want a refusal to start", code, errs)
	}
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	recs := e.records()
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Fatalf("runner exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if !platform.GroupAlive(recs[0].PGID) && len(e.records()) == 0 && strings.Contains(logs.String(), "closed") {
		return // closed by Browser.close before the Runner exited, record cleared
	}
	t.Fatalf("after SIGTERM: group alive %v, records %d, log:\n%s", platform.GroupAlive(recs[0].PGID), len(e.records()), logs.String())
}

package main_test

// A newcomer's first hour, end to end: the built binary, its background
// Runner and real Chromium. Each test fails on the behaviour issue 15
// reported.

import (
	"encoding/json"
	"net"
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
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// runEnv runs a command with extra environment entries.
func (e *env) runEnv(extra []string, args ...string) (int, string, string) {
	e.t.Helper()
	c := e.cmd(args...)
	c.Env = append(c.Env, extra...)
	var out, errb strings.Builder
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

// status returns `status --json`; it never starts a Runner.
func (e *env) status() localapi.Status {
	e.t.Helper()
	var st localapi.Status
	e.json(&st, "status")
	return st
}

// startRunner starts a background Runner the way any verb that needs one
// does (this one is refused: there is no such browser).
func (e *env) startRunner(extra ...string) string {
	e.t.Helper()
	code, _, errs := e.runEnv(extra, "pages", "b-none")
	if code != 3 {
		e.t.Fatalf("a verb that needs a Runner: exit %d\n%s", code, errs)
	}
	return errs
}

// TestStateDirProblemsReportedAtOnce: a state directory with a wrong mode
// makes the first command say why, not wait 15 s for a Runner that gave
// up; one reached through the user's own symlink (a symlinked ~/.local)
// works.
func TestStateDirProblemsReportedAtOnce(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	if err := os.MkdirAll(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.state, 0o755); err != nil {
		t.Fatal(err)
	}
	// The Runner's refusal, as every refusal reads, and nothing before it:
	// no "started a Runner" for one that refused to start.
	code, _, errs := e.run("pages", "b-none")
	if code != 3 || !strings.HasPrefix(errs, "refused: browser_profile_unsafe\n") || !strings.Contains(errs, "mode must be exactly 0700") || !strings.Contains(errs, "0755") ||
		strings.Contains(errs, "started a Runner") || strings.Contains(errs, "profile name") || strings.Count(errs, "\n") != 3 {
		t.Fatalf("wrong mode: exit %d, stderr:\n%s\nwant exit 3 with the Runner's refusal alone", code, errs)
	}
	if strings.Contains(errs, "did not answer") || strings.Contains(errs, e.state) {
		t.Fatalf("wrong mode: the reason is a timeout or names the path:\n%s", errs)
	}
	code, out, _ := e.run("doctor", "--json")
	var rep struct {
		OK     bool
		Checks []struct{ Name, Status, Detail, Fix string }
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || rep.OK {
		t.Fatalf("doctor with a broken state directory: exit %d %q", code, out)
	}
	for _, c := range rep.Checks {
		if c.Name == "state directory" && (c.Status != "fail" || !strings.Contains(c.Fix, "chmod 700")) {
			t.Errorf("doctor's state directory line: %+v", c)
		}
	}

	// ~/.local is a symlink of the user's to another disk.
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "disk", ".local")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(home, ".local")); err != nil {
		t.Fatal(err)
	}
	e.state = filepath.Join(home, ".local", "state", "webcodex")
	e.startRunner()
	if !e.running() {
		t.Fatal("no Runner through a symlinked ~/.local")
	}
	if fi, err := os.Stat(filepath.Join(data, "state", "webcodex", "runner.sock")); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("the socket is not behind the symlink: %v", err)
	}
}

// TestStatusStopAndIdleExit: status never starts a Runner; stop returns
// after the owned browsers are gone and says so in JSON; a background
// Runner with nothing to do exits by itself.
func TestStatusStopAndIdleExit(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	var nr struct {
		Running  bool
		Browsers []any
	}
	e.json(&nr, "status")
	if nr.Running || nr.Browsers == nil || e.running() {
		t.Fatalf("status with no Runner = %+v", nr)
	}
	if _, err := os.Stat(filepath.Join(e.state, localapi.SocketName)); !os.IsNotExist(err) {
		t.Fatalf("status started a Runner (%v)", err)
	}
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	recs := e.records()
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	var stop localapi.StopResult
	e.json(&stop, "stop")
	if !stop.Stopped || stop.BrowsersClosed != 1 {
		t.Fatalf("stop = %+v", stop)
	}
	// No waiting: when stop has returned, the browser is gone.
	if platform.GroupAlive(recs[0].PGID) || len(e.records()) != 0 || e.running() {
		t.Fatalf("after stop returned: group alive %v, records %d, running %v", platform.GroupAlive(recs[0].PGID), len(e.records()), e.running())
	}
	e.json(&stop, "stop")
	if stop.Stopped {
		t.Fatalf("a second stop = %+v, want stopped false", stop)
	}

	// Idle exit, shortened for the test: the Runner goes by itself.
	errs := e.startRunner("WEBCODEX_IDLE_EXIT=1s")
	if !strings.Contains(errs, "exits after 1s with no browser") {
		t.Errorf("the start message does not say when it exits: %q", errs)
	}
	st := e.status()
	if st.Runner.IdleExitMs != 1000 {
		t.Errorf("status idleExitMs = %d, want 1000", st.Runner.IdleExitMs)
	}
	waitfor.Until(t, 60*time.Second, "the idle Runner exits", func() bool {
		return syscall.Kill(st.Runner.PID, 0) != nil
	})
	if e.running() {
		t.Fatal("a Runner answers after the idle one exited")
	}
	logs, _ := os.ReadFile(filepath.Join(e.state, "runner.log"))
	if !strings.Contains(string(logs), "idle for 1s") {
		t.Errorf("runner.log does not say why it exited:\n%s", logs)
	}
}

// TestRunnerEnvironmentAndSandboxReported: a command whose environment
// differs from the Runner's in a variable the Runner reads is told so;
// the sandbox state is said once on stderr and in status and doctor.
func TestRunnerEnvironmentAndSandboxReported(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	chrome, err := platform.FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	errs := e.startRunner("WEBCODEX_CHROME=")
	st := e.status()
	if os.Geteuid() == 0 {
		if st.Runner.Sandbox.Enabled || !strings.Contains(st.Runner.Sandbox.Reason, "root") {
			t.Errorf("as root, status says sandbox %+v", st.Runner.Sandbox)
		}
		if strings.Count(errs, "without Chromium's sandbox") != 1 {
			t.Errorf("starting the Runner did not say once that the sandbox is off:\n%s", errs)
		}
	} else if !st.Runner.Sandbox.Enabled {
		t.Errorf("not root, but the sandbox is off: %s", st.Runner.Sandbox.Reason)
	}
	if _, _, errs := e.runEnv([]string{"WEBCODEX_CHROME="}, "status"); strings.Contains(errs, "sandbox") || strings.Contains(errs, "different") {
		t.Errorf("a later command repeats the notice: %q", errs)
	}
	_, _, errs = e.runEnv([]string{"WEBCODEX_CHROME=" + chrome}, "status")
	if !strings.Contains(errs, "different WEBCODEX_CHROME") || !strings.Contains(errs, "webcodex stop") {
		t.Fatalf("a different WEBCODEX_CHROME is not reported: %q", errs)
	}
	if strings.Contains(errs, chrome) {
		t.Errorf("the notice names the value: %q", errs)
	}
	_, out, _ := e.runEnv([]string{"WEBCODEX_CHROME=" + chrome}, "doctor")
	if !strings.Contains(out, "different WEBCODEX_CHROME") || !strings.Contains(out, "sandbox") {
		t.Errorf("doctor does not report the Runner's environment and the sandbox:\n%s", out)
	}
}

// TestErrorsPointTheRightWay: each mistake gets the code and words of
// what went wrong, and the exit status of its class.
func TestErrorsPointTheRightWay(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>home</title><input id=q>`))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<!doctype html><title>not here</title>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	var p localapi.PageInfo
	e.json(&p, "open", b.ID, srv.URL+"/")

	// Malformed URLs are the caller's mistake, not a denied origin.
	for _, u := range []string{"example.com", "localhost:8080", "example.com:443/x", "http:///x"} {
		if errs := e.refused("invalid_argument", "goto", p.ID, u); !strings.Contains(errs, "https://") && !strings.Contains(errs, "http://host:port") {
			t.Errorf("goto %q: %s", u, errs)
		}
	}
	// A 404 navigates, says the status, and fails.
	code, out, errs := e.run("goto", p.ID, srv.URL+"/missing", "--json")
	var nav localapi.NavResult
	if err := json.Unmarshal([]byte(out), &nav); code != 1 || err != nil || nav.Status != 404 || nav.Page != p.ID || !strings.Contains(errs, "HTTP 404") {
		t.Fatalf("goto a 404: exit %d, %q, %q", code, out, errs)
	}
	e.json(&nav, "goto", p.ID, srv.URL+"/")
	if nav.Status != 200 {
		t.Errorf("goto status = %d, want 200", nav.Status)
	}
	// A failed navigation is a failure; afterwards the page says so, not
	// that it left the allowed origins.
	dead := closedPort(t)
	e.refused("browser_navigation_failed", "goto", p.ID, "http://"+dead+"/")
	errs = e.refused("browser_navigation_failed", "read", p.ID)
	if strings.Contains(errs, "left the allowed origins") || !strings.Contains(errs, "last navigation failed") {
		t.Errorf("read after a failed navigation: %s", errs)
	}
	e.json(&nav, "goto", p.ID, srv.URL+"/")
	// A script that throws is a failure, not a refusal.
	code, out, errs = e.run("eval", p.ID, "(() => { throw new Error('boom') })()", "--json")
	if code != 1 || !strings.Contains(errs, "threw") || !strings.Contains(errs, "boom") || !strings.Contains(out, `"kind": "failure"`) && !strings.Contains(out, `"kind":"failure"`) {
		t.Errorf("eval that throws: exit %d %q %q", code, out, errs)
	}
	// Ids are echoed.
	var rd localapi.ReadResult
	e.json(&rd, "read", p.ID)
	var act map[string]any
	e.json(&act, "fill", p.ID, "--css", "#q", "--value", "x")
	if rd.Page != p.ID || act["page"] != p.ID {
		t.Errorf("read page %q, fill page %v, want %s", rd.Page, act["page"], p.ID)
	}
	// A ref the snapshot never listed is not found, not stale.
	var snap struct {
		ID string `json:"snapshotId"`
	}
	e.json(&snap, "snapshot", p.ID)
	if errs := e.refused("browser_element_not_found", "click", p.ID, "--ref", "e99", "--snapshot", snap.ID); !strings.Contains(errs, "e99") {
		t.Errorf("click on a ref the snapshot never had: %s", errs)
	}
	// Attach: nothing listening, and a profile directory that is not there.
	if errs := e.refused("browser_requires_setup", "attach", "--endpoint", dead); !strings.Contains(errs, "nothing listens") {
		t.Errorf("attach to a closed port: %s", errs)
	}
	if errs := e.refused("invalid_argument", "attach", "--profile-dir", filepath.Join(t.TempDir(), "nope")); !strings.Contains(errs, "does not exist") {
		t.Errorf("attach with a missing profile: %s", errs)
	}
	e.json(&map[string]any{}, "close", b.ID)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRunnerKilledMidLaunchLeavesNothing: a Runner killed while Chromium
// starts leaves temporary directories the next Runner reclaims.
func TestRunnerKilledMidLaunchLeavesNothing(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	tmp := t.TempDir()
	// A browser that never answers: the launch waits while we kill.
	fake := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"TMPDIR=" + tmp, "WEBCODEX_CHROME=" + fake}
	e.startRunner(env...)
	pid := e.status().Runner.PID
	launch := e.cmd("launch")
	launch.Env = append(launch.Env, env...)
	if err := launch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { launch.Process.Kill(); launch.Wait() })
	var launchDir string
	waitfor.Until(t, 30*time.Second, "the launch is recorded before the browser answers", func() bool {
		files, _ := filepath.Glob(filepath.Join(e.state, "browser", "owned", "*.json"))
		for _, f := range files {
			var rec struct {
				LaunchDir string `json:"launch_dir"`
			}
			data, _ := os.ReadFile(f)
			if json.Unmarshal(data, &rec) == nil && rec.LaunchDir != "" {
				launchDir = rec.LaunchDir
			}
		}
		entries, _ := os.ReadDir(launchDir)
		return len(entries) >= 2 // the profile and the browser's TMPDIR
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the killed Runner is gone", func() bool { return !e.running() })
	if _, err := os.Stat(launchDir); err != nil {
		t.Fatalf("the launch directory is already gone (%v): the test proves nothing", err)
	}
	e.startRunner(env...)
	if _, err := os.Stat(launchDir); !os.IsNotExist(err) {
		t.Fatalf("the next Runner left the killed launch's directory (%v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "webcodex-*")); len(left) != 0 {
		t.Fatalf("temporary directories left: %v", left)
	}
	if len(e.records()) != 0 {
		t.Fatal("the killed launch's record is left")
	}
}

// TestVersionNamesTheRevision: a binary built from a checkout reports the
// module version and the commit, for --version and version alike.
func TestVersionNamesTheRevision(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to read the checkout's commit: apt-get install -y git (%v)", err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not built from a git checkout (an exported tree): there is no revision to name")
	}
	bin := filepath.Join(t.TempDir(), "webcodex")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "github.com/webcodex/webcodex/cmd/webcodex").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rev := strings.TrimSpace(string(head))[:12]
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !strings.HasPrefix(string(out), "webcodex v") || !strings.Contains(string(out), "revision "+rev) {
			t.Errorf("webcodex %v = %q (%v), want the module version and revision %s", args, out, err, rev)
		}
	}
	out, _ := exec.Command(bin, "version", "--json").Output()
	var v struct{ Version, Revision string }
	if json.Unmarshal(out, &v) != nil || v.Revision != strings.TrimSpace(string(head)) || !strings.HasPrefix(v.Version, "v") {
		t.Errorf("version --json = %s", out)
	}
}

// TestScreenshotOfBackgroundTabThroughCLI: the page of a tab behind
// another one is captured, and the front tab stays in front.
func TestScreenshotOfBackgroundTabThroughCLI(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	srv := fixture(t)
	var b localapi.BrowserInfo
	e.json(&b, "launch")
	var back, front localapi.PageInfo
	e.json(&back, "open", b.ID, srv.URL+"/")
	e.json(&front, "open", b.ID, srv.URL+"/")
	var vis localapi.EvalResult
	e.json(&vis, "eval", back.ID, "document.visibilityState")
	if vis.Value != "hidden" {
		t.Fatalf("the first page is %v, want a background tab", vis.Value)
	}
	for _, args := range [][]string{{}, {"--full-page"}, {}} {
		var sum struct{ Width, Height int }
		e.json(&sum, append([]string{"screenshot", back.ID, "-o", filepath.Join(t.TempDir(), "bg.png")}, args...)...)
		if sum.Width == 0 || sum.Height == 0 {
			t.Fatalf("screenshot %v of the background tab = %+v", args, sum)
		}
	}
	e.json(&vis, "eval", front.ID, "document.visibilityState")
	if vis.Value != "visible" {
		t.Fatalf("after the captures the front tab is %v", vis.Value)
	}
}

// TestLaunchFailureLogsWhy: a browser that fails to start leaves its
// reason and the tail of its own output in runner.log, without the paths
// webcodex chose.
func TestLaunchFailureLogsWhy(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	tmp := t.TempDir()
	fake := filepath.Join(t.TempDir(), "chromium")
	script := "#!/bin/sh\necho \"fake chromium: cannot start in $TMPDIR\" >&2\nexit 7\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"TMPDIR=" + tmp, "WEBCODEX_CHROME=" + fake}
	e.startRunner(env...)
	if code, _, errs := e.runEnv(env, "launch"); code != 1 {
		t.Fatalf("launch with a browser that exits: exit %d\n%s", code, errs)
	}
	logs, _ := os.ReadFile(filepath.Join(e.state, "runner.log"))
	if !strings.Contains(string(logs), "launch failed") || !strings.Contains(string(logs), "exit status 7") ||
		!strings.Contains(string(logs), "chromium: fake chromium: cannot start in <launch-dir>") {
		t.Fatalf("runner.log does not say why the launch failed:\n%s", logs)
	}
	if strings.Contains(string(logs), tmp) {
		t.Fatalf("runner.log names the temporary directory:\n%s", logs)
	}
}

package main_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// serveRunner runs a Runner whose calls are bounded by callBound on a
// fresh state root, as `webcodex serve` does, until the test ends.
func serveRunner(t *testing.T, callBound time.Duration) (*env, *runner.Runner) {
	t.Helper()
	if _, err := platform.FindChromium(); err != nil {
		if testing.Short() {
			t.Skip("Chromium missing (-short)")
		}
		t.Fatalf("Chromium is required: apt-get install -y chromium (%v)", err)
	}
	dir, err := os.MkdirTemp("", "wco") // short: a unix socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	state := filepath.Join(dir, "state")
	if err := platform.EnsurePrivateDir(state); err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Options{StateDir: state, CallBound: callBound})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := localapi.Listen(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		(&localapi.Server{Routes: r.Routes()}).Run(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		r.Shutdown(sctx)
	})
	return &env{t: t, state: state}, r
}

// TestClickPastTheDeadlineIsOutcomeUnknown: a click whose handler blocks
// past the call's bound lands once; the CLI says outcome_unknown with exit
// 3 (not a generic failure a caller would retry), the Runner records it so,
// and the tab answers again afterwards without the click being repeated.
func TestClickPastTheDeadlineIsOutcomeUnknown(t *testing.T) {
	const bound = 5 * time.Second
	e, r := serveRunner(t, bound)
	var clicks atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>slow handler</title>
<button onclick="const x = new XMLHttpRequest(); x.open('POST', '/click', false); x.send(); const t = Date.now(); while (Date.now() - t < 120000) {}">Do it</button>`)
	})
	mux.HandleFunc("/click", func(w http.ResponseWriter, r *http.Request) { clicks.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	code, out, errs := e.run("click", p.ID, "--role", "button", "--name", "Do it", "--json")
	took := time.Since(start)
	if code != 3 || !strings.Contains(out, "outcome_unknown") {
		t.Fatalf("click past the deadline: exit %d, stdout %q, stderr %q; want exit 3 with outcome_unknown", code, out, errs)
	}
	if strings.Contains(out+errs, "context deadline exceeded") {
		t.Errorf("the CLI shows a bare context error: %s %s", out, errs)
	}
	t.Logf("click whose handler blocks: the CLI answered outcome_unknown after %s (Runner bound %s)", took.Round(time.Millisecond), bound)

	// The handler's script was terminated: the tab answers, and the click
	// landed exactly once.
	if code, out, errs := e.run("eval", p.ID, "document.title", "--json"); code != 0 || !strings.Contains(out, "slow handler") {
		t.Fatalf("eval after the wedged click: exit %d, %q %q", code, out, errs)
	}
	if n := clicks.Load(); n != 1 {
		t.Fatalf("the click landed %d times, want exactly once", n)
	}
	audit, err := os.ReadFile(filepath.Join(e.state, "audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"tool":"click","origin":"`+srv.URL+`","verdict":"allowed","outcome":"outcome_unknown"`) {
		t.Errorf("the Runner's audit does not record the click as outcome_unknown:\n%s", audit)
	}
}

// TestRunnerKilledWithAClickInFlight: a Runner killed while a click it
// dispatched is unacknowledged leaves the CLI unable to know whether the
// click happened: it says outcome_unknown with exit 3, not "Runner
// unreachable" (exit 4), which a caller would retry.
func TestRunnerKilledWithAClickInFlight(t *testing.T) {
	e := newEnv(t)
	serve := e.cmd("serve")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			serve.Process.Kill()
			serve.Wait()
		}
	})
	waitfor.Until(t, 10*time.Second, "runner answers", e.running)
	var clicks atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>slow handler</title>
<button onclick="const x = new XMLHttpRequest(); x.open('POST', '/click', false); x.send(); const t = Date.now(); while (Date.now() - t < 60000) {}">Do it</button>`)
	})
	mux.HandleFunc("/click", func(w http.ResponseWriter, r *http.Request) { clicks.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var b struct {
		ID string `json:"browser"`
	}
	e.json(&b, "launch")
	recs := e.records()
	var p struct {
		ID string `json:"page"`
	}
	e.json(&p, "open", b.ID, srv.URL+"/")

	click := e.cmd("click", p.ID, "--role", "button", "--name", "Do it", "--json")
	var out, errb bytes.Buffer
	click.Stdout, click.Stderr = &out, &errb
	if err := click.Start(); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the click reached the page", func() bool { return clicks.Load() == 1 })
	serve.Process.Signal(syscall.SIGKILL)
	serve.Wait()
	killed = true
	err := click.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 3 || !strings.Contains(out.String(), "outcome_unknown") {
		t.Fatalf("click whose Runner was killed: exit %d, stdout %q, stderr %q; want exit 3 with outcome_unknown", code, out.String(), errb.String())
	}
	if n := clicks.Load(); n != 1 {
		t.Errorf("the click landed %d times", n)
	}
	// The browser went with its Runner; the next one clears its record.
	for _, rec := range recs {
		waitfor.Until(t, 10*time.Second, "browser gone after the Runner was killed", func() bool { return !platform.GroupAlive(rec.PGID) })
	}
	e.run("pages", "b-none")
}

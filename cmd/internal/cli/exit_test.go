package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// TestExitCodeClasses checks the README's table class by class: each row
// is an error of that class as a verb returns it, and the --json object
// stdout gets for it.
func TestExitCodeClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		err      error
		code     int
		jsonKey  string // refusal or error
		jsonKind string // error.kind
	}{
		{"ok", nil, ExitOK, "", ""},
		{"failure", errors.New("the expression threw: boom"), ExitFailure, "error", "failure"},
		{"usage", &UsageError{Err: errors.New("bad flag")}, ExitUsage, "error", "usage"},
		{"refused", fsm.Refuse(fsm.LeaseHeld, "in use"), ExitRefused, "refusal", ""},
		{"malformed request is usage", fsm.Refuse(fsm.InvalidArgument, "the URL has no scheme"), ExitUsage, "refusal", ""},
		{"failed navigation is failure", fsm.Refuse(fsm.NavigationFailed, "net::ERR_NAME_NOT_RESOLVED"), ExitFailure, "refusal", ""},
		{"unreachable", fmt.Errorf("%w: no answer", cmdutil.ErrRunnerUnreachable), ExitUnreachable, "error", "unreachable"},
		{"shown failure", cmdutil.Shown(errors.New("a check failed")), ExitFailure, "", ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		f := &Factory{IO: cmdutil.IO{Out: &out, Err: &errb}, JSON: true}
		if got := exitCode(f, c.err); got != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.code)
		}
		if c.jsonKey == "" {
			if out.Len() != 0 {
				t.Errorf("%s: stdout %q, want nothing more", c.name, out.String())
			}
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &m); err != nil || len(m) != 1 || m[c.jsonKey] == nil {
			t.Errorf("%s: stdout %q, want one object with %q", c.name, out.String(), c.jsonKey)
			continue
		}
		if c.jsonKind != "" {
			var e struct{ Kind, Message string }
			if json.Unmarshal(m["error"], &e); e.Kind != c.jsonKind || e.Message == "" {
				t.Errorf("%s: error object %s, want kind %s and a message", c.name, m["error"], c.jsonKind)
			}
		}
		if errb.Len() == 0 {
			t.Errorf("%s: nothing on stderr", c.name)
		}
	}
}

// TestUsageMistakesExit2: mistakes on the command line exit 2 before
// anything reaches a Runner (none runs here, and none may be started).
func TestUsageMistakesExit2(t *testing.T) {
	t.Setenv("WEBCODEX_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	t.Setenv("WEBCODEX_EXECUTABLE", "/nonexistent/webcodex")
	for _, args := range [][]string{
		{"nosuchverb"},
		{"stauts"},
		{"version", "--no-such-flag"},
		{"version", "extra"},
		{"type", "p-1", "--css", "input"},
		{"type", "p-1", "--css", "input", "--value", ""},
		{"fill", "p-1", "--css", "input"},
		{"press", "p-1"},
		{"select", "p-1", "--css", "select"},
		{"upload", "p-1", "--css", "input"},
		{"click", "p-1"},
		{"launch", "--headless", "--headed"},
		{"attach"},
		{"screenshot", "p-1"},
	} {
		code, out, errs := run(append(args, "--json")...)
		if code != ExitUsage || !strings.HasPrefix(errs, "usage: ") {
			t.Errorf("%v: exit %d, stderr %q; want %d and a usage line", args, code, errs, ExitUsage)
		}
		var m struct{ Error struct{ Kind string } }
		if json.Unmarshal([]byte(out), &m); m.Error.Kind != "usage" {
			t.Errorf("%v: --json stdout %q, want an error of kind usage", args, out)
		}
	}
	if code, _, errs := run("stauts"); !strings.Contains(errs, `did you mean "status"`) {
		t.Errorf("a misspelt verb: exit %d, %q: no suggestion", code, errs)
	}
	// fill --value '' is allowed (it clears a field): it gets past the
	// command line and fails only for want of a Runner.
	if code, _, errs := run("fill", "p-1", "--css", "input", "--value", ""); code != ExitUnreachable {
		t.Errorf("fill --value '': exit %d (%s), want %d (the Runner cannot start here)", code, errs, ExitUnreachable)
	}
}

// TestMalformedAllowIsAUsageError: an --allow entry the origin gate would
// drop ("not a url!", an empty one, ftp://x, a path, a single label) makes launch and
// attach exit 2 naming the entry and the accepted forms, before any Runner
// is asked or started (none may start here: a start would exit 4).
func TestMalformedAllowIsAUsageError(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("WEBCODEX_STATE_DIR", state)
	t.Setenv("WEBCODEX_EXECUTABLE", "/nonexistent/webcodex")
	for _, bad := range []string{"not a url!", "", "ftp://x", "example.com/path", "com", "*.example.com"} {
		for _, args := range [][]string{
			{"launch", "--allow", "example.com", "--allow", bad},
			{"attach", "--endpoint", "127.0.0.1:9222", "--allow", bad},
			{"attach", "--offer", "o-1", "--allow", bad},
		} {
			code, out, errs := run(append(args, "--json")...)
			if code != ExitUsage || !strings.Contains(errs, fmt.Sprintf("--allow %q", bad)) || !strings.Contains(errs, "[scheme://]host[:port]") {
				t.Errorf("%q: exit %d, stderr %q; want %d naming the entry and the accepted forms", args, code, errs, ExitUsage)
			}
			var m struct{ Error struct{ Kind string } }
			if json.Unmarshal([]byte(out), &m); m.Error.Kind != "usage" {
				t.Errorf("%q: --json stdout %q, want an error of kind usage", args, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(state, "runner.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a Runner was started for a usage error (runner.log: %v)", err)
	}
	// Good entries get past the command line (and fail only for want of a
	// Runner).
	if code, _, errs := run("launch", "--allow", "example.com", "--allow", "http://localhost:3000", "--allow", "[::1]:8080"); code != ExitUnreachable {
		t.Errorf("launch with good entries: exit %d (%s), want %d", code, errs, ExitUnreachable)
	}
}

// TestVersionReportsTheBuild: `webcodex --version` and `webcodex version`
// say the same version, from the build information.
func TestVersionReportsTheBuild(t *testing.T) {
	t.Parallel()
	code, out, _ := run("--version")
	if code != ExitOK || out != "webcodex "+cmdutil.Build().String()+"\n" {
		t.Fatalf("--version: %d %q, want %q", code, out, "webcodex "+cmdutil.Build().String())
	}
	code, out, _ = run("version")
	if code != ExitOK || !strings.HasPrefix(out, "webcodex "+cmdutil.Build().String()+" go") {
		t.Fatalf("version: %d %q", code, out)
	}
	code, out, _ = run("version", "--json")
	var b cmdutil.BuildInfo
	if err := json.Unmarshal([]byte(out), &b); code != ExitOK || err != nil || b.Version == "" || b.Go == "" {
		t.Fatalf("version --json: %d %q %v", code, out, err)
	}
	if got := (cmdutil.BuildInfo{Version: "v1.2.3", Revision: "0123456789abcdef", Modified: true}).String(); got != "v1.2.3 (revision 0123456789ab, modified)" {
		t.Errorf("String = %q", got)
	}
}

// TestStatusAndStopNeverStartARunner: with none running, status says so
// and stop has nothing to do; both exit 0 and start nothing.
func TestStatusAndStopNeverStartARunner(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("WEBCODEX_STATE_DIR", state)
	t.Setenv("WEBCODEX_EXECUTABLE", "/nonexistent/webcodex") // a start would fail loudly
	code, out, errs := run("status", "--json")
	var st NotRunning
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil || st.Running || st.Browsers == nil {
		t.Fatalf("status: exit %d, %q, %q (%v); want running false and an empty browser list", code, out, errs, err)
	}
	code, out, errs = run("stop", "--json")
	var sr localapi.StopResult
	if err := json.Unmarshal([]byte(out), &sr); code != ExitOK || err != nil || sr.Stopped {
		t.Fatalf("stop: exit %d, %q, %q (%v); want stopped false", code, out, errs, err)
	}
	if !strings.Contains(errs, "no Runner was running") {
		t.Errorf("stop says nothing of having nothing to stop: %q", errs)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("status or stop touched the state directory (%v): they must not start a Runner", err)
	}
}

// TestJSONConventionOfWireTypes walks every local API result type the CLI
// prints: keys are camelCase, a page id is "page" and a browser id
// "browser" (never "id"), and lists sit under a named key.
func TestJSONConventionOfWireTypes(t *testing.T) {
	t.Parallel()
	one := 1
	now := localapi.RunnerInfo{}.Started
	samples := map[string]any{
		"status":     localapi.Status{Running: true, Browsers: []localapi.BrowserInfo{{ID: "b-1", Pages: []localapi.PageInfo{{ID: "p-1", Browser: "b-1"}}, GrantExpires: &now, AttemptsLeft: &one}}, Runner: localapi.RunnerInfo{Env: map[string]string{}}},
		"pages":      localapi.PagesResult{Browser: "b-1", Pages: []localapi.PageInfo{{ID: "p-1", Browser: "b-1"}}},
		"goto":       localapi.NavResult{Page: "p-1", Status: 200},
		"read":       localapi.ReadResult{Page: "p-1"},
		"screenshot": ScreenshotSummary{Page: "p-1"},
		"eval":       localapi.EvalResult{Page: "p-1"},
		"close":      localapi.CloseResult{Browser: "b-1"},
		"attach":     localapi.AttachResult{Browser: localapi.BrowserInfo{ID: "b-1"}, SideEffects: map[string]bool{}},
		"reconnect":  localapi.ReconnectResult{Browser: "b-1"},
		"stop":       localapi.StopResult{},
		"version":    cmdutil.BuildInfo{},
		"discover":   localapi.DiscoverResult{Attach: []localapi.AttachCandidate{{}}},
	}
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	for name, v := range samples {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var top any
		json.Unmarshal(b, &top)
		if _, ok := top.(map[string]any); !ok {
			t.Errorf("%s: top level is %T, want an object", name, top)
		}
		walkKeys(top, "", func(path, key string) {
			if strings.HasSuffix(path, ".env") || strings.HasSuffix(path, ".sideEffects") {
				return // maps keyed by names from a closed set (variables, effects)
			}
			if !camel.MatchString(key) {
				t.Errorf("%s: key %s%s is not camelCase", name, path, key)
			}
			if key == "id" {
				t.Errorf("%s: key %sid: a page is \"page\", a browser \"browser\"", name, path)
			}
		})
	}
}

func walkKeys(v any, path string, fn func(path, key string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			fn(path, k)
			walkKeys(c, path+"."+k, fn)
		}
	case []any:
		for _, c := range v {
			walkKeys(c, path+"[]", fn)
		}
	}
}

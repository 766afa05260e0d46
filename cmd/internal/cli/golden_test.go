package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the commands print")

// fakeRunner is a route table standing in for the Runner: each route it
// serves records the request the command built and answers a fixed result.
// The command line is tested alone with it: what it parses into a request,
// and how it presents the result, with no Runner and no browser.
type fakeRunner struct {
	rt  *localapi.Routes
	got map[string]any // route name -> the request it received
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{rt: &localapi.Routes{}, got: map[string]any{}}
}

// answer serves route r with resp (or err) and records its request.
func answer[Req, Resp any](f *fakeRunner, r localapi.Route[Req, Resp], resp Resp, err error) {
	localapi.Serve(f.rt, r, func(_ context.Context, req Req) (Resp, error) {
		f.got[r.Name] = req
		return resp, err
	})
}

// runFake runs the CLI on fr and returns its exit code, stdout and stderr.
func runFake(fr *fakeRunner, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	f := &Factory{IO: cmdutil.IO{Out: &out, Err: &errb}, Runner: fr.rt}
	code := Run(f, args, NewCmdDiscover, NewCmdBridge)
	return code, out.String(), errb.String()
}

func ptr[T any](v T) *T { return &v }

// decoded is a result written as the Runner's JSON.
func decoded[T any](s string) T {
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

var (
	started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	page1   = localapi.PageInfo{ID: "p-1", Browser: "b-1", URL: "https://a.example/", Title: "A"}
	browser = localapi.BrowserInfo{ID: "b-1", Mode: localapi.ModeEphemeral, State: "ready", Generation: 1, Headless: true, Pages: []localapi.PageInfo{page1}}
	attach  = localapi.AttachResult{Browser: browser, Product: "chrome", NextAction: "list pages", EndpointOwnership: "verified", SideEffects: map[string]bool{"launched_browser": false}}
)

// verbCase is one command line: the request it must send on its route,
// the answer it gets, and what it must print.
type verbCase struct {
	name  string   // the golden file's name
	args  []string // without --json
	route string   // the route it calls
	want  any      // the request it sends there
	serve func(*fakeRunner)
	human string // a line the human form contains
}

func verbCases(t *testing.T) []verbCase {
	shot := filepath.Join(t.TempDir(), "shot.png")
	return []verbCase{
		{name: "launch", args: []string{"launch", "--managed", "work", "--headed", "--allow", "https://a.example"}, route: "launch",
			want:  localapi.LaunchRequest{Managed: "work", Headless: ptr(false), Allow: []string{"https://a.example"}},
			serve: func(f *fakeRunner) { answer(f, localapi.Launch, browser, nil) }, human: "browser b-1 (owned_ephemeral)"},
		{name: "status", args: []string{"status"}, route: "status", want: struct{}{},
			serve: func(f *fakeRunner) {
				answer(f, localapi.GetStatus, localapi.Status{Runner: localapi.RunnerInfo{Version: "v1.2.3", PID: 42, Started: started, Sandbox: localapi.Sandbox{Enabled: true}, PromptPress: localapi.Availability{Available: true}, Env: map[string]string{}}, Browsers: []localapi.BrowserInfo{browser}, Capabilities: map[string]bool{"browser_managed_profile": true}}, nil)
			}, human: "runner v1.2.3, pid 42"},
		{name: "pages", args: []string{"pages", "b-1"}, route: "pages", want: localapi.BrowserRequest{Browser: "b-1"},
			serve: func(f *fakeRunner) { answer(f, localapi.Pages, []localapi.PageInfo{page1}, nil) }, human: "p-1"},
		{name: "open", args: []string{"open", "b-1", "https://a.example/"}, route: "open", want: localapi.OpenRequest{Browser: "b-1", URL: "https://a.example/"},
			serve: func(f *fakeRunner) { answer(f, localapi.Open, page1, nil) }, human: "page p-1"},
		{name: "goto", args: []string{"goto", "p-1", "https://a.example/"}, route: "goto", want: op.GotoIn{OnPage: op.OnPage{Page: "p-1"}, URL: "https://a.example/"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Goto), localapi.NavResult{Page: "p-1", URL: "https://a.example/", Title: "A", Status: 200}, nil)
			}, human: "https://a.example/"},
		{name: "read", args: []string{"read", "p-1", "--max", "10"}, route: "read", want: op.ReadIn{OnPage: op.OnPage{Page: "p-1"}, MaxChars: 10},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.ReadText), localapi.ReadResult{Page: "p-1", Text: "Hello", Chars: 5}, nil)
			}, human: "Hello"},
		{name: "screenshot", args: []string{"screenshot", "p-1", "-o", shot, "--full-page"}, route: "screenshot", want: op.ScreenshotIn{OnPage: op.OnPage{Page: "p-1"}, FullPage: true},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Screenshot), localapi.ScreenshotResult{Page: "p-1", PNG: []byte("\x89PNG"), Width: 800, Height: 600}, nil)
			}, human: "(800x600, 4 bytes)"},
		{name: "eval", args: []string{"eval", "p-1", "1 + 1"}, route: "eval", want: op.EvalIn{OnPage: op.OnPage{Page: "p-1"}, Expr: "1 + 1"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Eval), localapi.EvalResult{Page: "p-1", Value: 2.0}, nil)
			}, human: "2"},
		{name: "close", args: []string{"close", "b-1"}, route: "close", want: localapi.BrowserRequest{Browser: "b-1"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Close, localapi.CloseResult{Browser: "b-1", Mode: localapi.ModeEphemeral, Teardown: "closed"}, nil)
			}, human: "browser b-1 closed"},
		{name: "stop", args: []string{"stop"}, route: "stop", want: struct{}{},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Stop, localapi.StopResult{Stopped: true, BrowsersClosed: 1}, nil)
				answer(f, localapi.Ping, localapi.PingResult{}, localapi.ErrUnreachable) // gone at once
			}},
		{name: "attach", args: []string{"attach", "--endpoint", "127.0.0.1:9222", "--allow", "https://a.example", "--press-prompt"}, route: "attach",
			want:  localapi.AttachRequest{Endpoint: "127.0.0.1:9222", Allow: []string{"https://a.example"}, PressPrompt: true},
			serve: func(f *fakeRunner) { answer(f, localapi.Attach, attach, nil) }, human: "attached browser b-1 (chrome)"},
		{name: "attach-offer", args: []string{"attach", "--offer", "o-1", "--allow", "https://a.example"}, route: "attach_offer",
			want:  localapi.AttachOfferRequest{Offer: "o-1", Allow: []string{"https://a.example"}},
			serve: func(f *fakeRunner) { answer(f, localapi.AttachOffer, attach, nil) }, human: "a tab shared from the extension"},
		{name: "reconnect", args: []string{"reconnect", "b-1"}, route: "reconnect", want: localapi.BrowserRequest{Browser: "b-1"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Reconnect, localapi.ReconnectResult{Browser: "b-1", Generation: 2, CapabilitiesInvalidated: true, Attempts: 1}, nil)
			}, human: "generation 2"},
		{name: "snapshot", args: []string{"snapshot", "p-1", "--interactive", "--scope-css", "main", "--max", "500"}, route: "snapshot",
			want: op.SnapshotIn{OnPage: op.OnPage{Page: "p-1"}, Interactive: true, MaxChars: 500, Scope: &localapi.Target{CSS: "main"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.TakeSnapshot), decoded[localapi.SnapshotResult](`{"page":"p-1","snapshotId":"s-1","url":"https://a.example/","title":"A","text":"- button \"Go\" [e1]","cursor":"c-1","refs":1,"lines":1,"chars":17,"complete":false,"document":"d-1"}`), nil)
			}, human: "webcodex snapshot p-1 --cursor c-1"},
		actCase("click", []string{"click", "p-1", "--role", "button", "--name", "Go"}, op.Click, op.ClickIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Role: "button", Name: "Go"}}},
			`{"page":"p-1","action":"click","role":"button","tag":"button"}`, `click: ok role="button"`),
		actCase("type", []string{"type", "p-1", "--label", "Name", "--value", "ada"}, op.Type, op.TypeIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Label: "Name"}}, Text: "ada"},
			`{"page":"p-1","action":"type","role":"textbox","requested":3,"delivered":3}`, "requested=3 delivered=3"),
		actCase("click-bare-ref", []string{"click", "p-1", "e7"}, op.Click, op.ClickIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Ref: "e7"}}},
			`{"page":"p-1","action":"click","role":"link","navigation":{"url":"https://a.example/next","title":"Next"},"newTab":{"url":"https://a.example/popup"},"download":{"guid":"g","suggestedFilename":"report.pdf"}}`,
			`it navigated to https://a.example/next, title "Next"; refs from before are stale`),
		actCase("click-compact-target", []string{"click", "p-1", `{"role":"button","name":"Go"}`, "--index", "1"}, op.Click, op.ClickIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Role: "button", Name: "Go", Index: ptr(1)}}},
			`{"page":"p-1","action":"click","role":"button","dialog":{"type":"confirm","message":"Sure?"}}`, `a confirm dialog opened: "Sure?"; the page waits until it is answered (webcodex dialog p-1 --accept|--dismiss)`),
		actCase("click-selector", []string{"click", "p-1", "form > button.primary"}, op.Click, op.ClickIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{CSS: "form > button.primary"}}},
			`{"page":"p-1","action":"click","role":"button","newTab":{"url":"https://a.example/popup"}}`, "it opened a new tab to https://a.example/popup"),
		actCase("click-role-selector", []string{"click", "p-1", `role=button[name="Go"]`}, op.Click, op.ClickIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Role: "button", Name: "Go"}}},
			`{"page":"p-1","action":"click","role":"button"}`, "click: ok"),
		actCase("type-slowly", []string{"type", "p-1", "e2", "--value", "ada", "--slowly"}, op.Type, op.TypeIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Ref: "e2"}}, Text: "ada", Slowly: true},
			`{"page":"p-1","action":"type","role":"textbox","requested":3,"delivered":3}`, "requested=3 delivered=3"),
		actCase("select-value", []string{"select", "p-1", "#pick", "--value", "a", "--value", "b"}, op.Select, op.SelectIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{CSS: "#pick"}}, Values: []string{"a", "b"}},
			`{"page":"p-1","action":"select","selected":["a","b"]}`, `selected=["a","b"]`),
		actCase("hover", []string{"hover", "p-1", "--text", "Menu"}, op.Hover, op.HoverIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Text: "Menu"}}},
			`{"page":"p-1","action":"hover","role":"menuitem"}`, "hover: ok"),
		actCase("drag", []string{"drag", "p-1", "#a", "--to", "text=Trash"}, op.Drag, op.DragIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{CSS: "#a"}}, To: &localapi.Target{Text: "Trash"}},
			`{"page":"p-1","action":"drag","dropped":true}`, "drag: ok"),
		actCase("fill", []string{"fill", "p-1", "--placeholder", "Name", "--value", ""}, op.Fill, op.FillIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Placeholder: "Name"}}},
			`{"page":"p-1","action":"fill","role":"textbox","noop":true}`, "fill: ok"),
		actCase("uncheck", []string{"uncheck", "p-1", "--ref", "e3", "--snapshot", "s-1"}, op.Uncheck, op.UncheckIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{Ref: "e3", SnapshotID: "s-1"}}},
			`{"page":"p-1","action":"uncheck","checked":false}`, "checked=false"),
		actCase("press", []string{"press", "p-1", "--key", "Enter"}, op.Press, op.PressIn{OnPage: op.OnPage{Page: "p-1"}, Keys: "Enter"},
			`{"page":"p-1","action":"press"}`, "press: ok"),
		actCase("select", []string{"select", "p-1", "--css", "#pick", "--option", "b", "--index", "0"}, op.Select, op.SelectIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{CSS: "#pick", Index: ptr(0)}}, Values: []string{"b"}},
			`{"page":"p-1","action":"select","selected":["b"]}`, `selected=["b"]`),
		actCase("check", []string{"check", "p-1", "--testid", "ok"}, op.Check, op.CheckIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{TestID: "ok"}}},
			`{"page":"p-1","action":"check","checked":true}`, "checked=true"),
		actCase("scroll", []string{"scroll", "p-1", "--to", "bottom"}, op.Scroll, op.ScrollIn{OnPage: op.OnPage{Page: "p-1"}, To: "bottom"},
			`{"page":"p-1","action":"scroll","scroll":{"atBottom":true,"atTop":false,"y":2400,"height":3000,"viewport":600}}`, `"atBottom":true`),
		actCase("upload", []string{"upload", "p-1", "--css", "#file", "--file", "a.txt"}, op.Upload, op.UploadIn{OnPage: op.OnPage{Page: "p-1"}, Element: op.Element{Target: &localapi.Target{CSS: "#file"}}, Files: []string{"a.txt"}},
			`{"page":"p-1","action":"upload","files":["a.txt"]}`, `files=["a.txt"]`),
		{name: "dialog-value", args: []string{"dialog", "p-1", "--accept", "--value", "yes"}, route: "dialog", want: op.DialogIn{OnPage: op.OnPage{Page: "p-1"}, Accept: ptr(true), Text: "yes"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.HandleDialog), decoded[localapi.DialogResult](`{"page":"p-1","dialog":{"type":"prompt","message":"Sure?"},"accepted":true}`), nil)
			}, human: `"accepted":true`},
		{name: "probe-select", args: []string{"probe", "p-1", "#pick", "--action", "select", "--value", "b"}, route: "probe",
			want: op.ProbeIn{OnPage: op.OnPage{Page: "p-1"}, Action: "select", Target: &localapi.Target{CSS: "#pick"}, Values: []string{"b"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Probe), decoded[localapi.ProbeResult](`{"page":"p-1","before":{"document":"d-1","url":"https://a.example/","title":"A"},"documentChanged":false,"action":{"action":"select","selected":["b"]},"consoleErrors":[],"settled":true,"inFlight":0}`), nil)
			}, human: `"settled":true`},
		{name: "dialog", args: []string{"dialog", "p-1", "--accept", "--text", "yes"}, route: "dialog", want: op.DialogIn{OnPage: op.OnPage{Page: "p-1"}, Accept: ptr(true), Text: "yes"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.HandleDialog), decoded[localapi.DialogResult](`{"page":"p-1","dialog":{"type":"prompt","message":"Sure?"},"accepted":true}`), nil)
			}, human: `"accepted":true`},
		{name: "wait", args: []string{"wait", "p-1", "--for", "text", "--for-text", "done", "--timeout", "2s"}, route: "wait",
			want: op.WaitIn{OnPage: op.OnPage{Page: "p-1"}, Condition: "text", Text: "done", TimeoutMS: 2000},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Wait), decoded[localapi.WaitResult](`{"page":"p-1","found":true,"condition":"text","elapsedMs":12}`), nil)
			}, human: "text: found=true after 12ms"},
		{name: "console", args: []string{"console", "p-1", "--since", "3", "--errors", "--clear"}, route: "console",
			want: op.ConsoleIn{OnPage: op.OnPage{Page: "p-1"}, Since: 3, ErrorsOnly: true, Clear: true},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Console), decoded[localapi.DiagResult](`{"page":"p-1","entries":[{"seq":4,"kind":"console","level":"error","origin":"https://a.example","text":"boom"}],"next":4,"discarded":"diagnostic_events_discarded"}`), nil)
			}, human: "(next: --since 4)"},
		{name: "network", args: []string{"network", "p-1"}, route: "network", want: op.NetworkIn{OnPage: op.OnPage{Page: "p-1"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Network), decoded[localapi.DiagResult](`{"page":"p-1","entries":[{"seq":1,"kind":"request","level":"info","url":"https://a.example/x","method":"GET","status":200}],"next":1,"inFlight":0}`), nil)
			}, human: `"method":"GET"`},
		{name: "request", args: []string{"request", "p-1", "--seq", "3", "--part", "response-headers"}, route: "network_request",
			want: op.NetworkRequestIn{OnPage: op.OnPage{Page: "p-1"}, Seq: 3, Part: "response-headers"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.NetworkRequest), op.RequestResult{Page: "p-1", RequestDetail: op.RequestDetail{
					Entry:           op.DiagEntry{Seq: 3, Kind: "request", Level: "info", URL: "https://a.example/api", Method: "GET", Status: 200},
					ResponseHeaders: []op.Header{{Name: "Content-Type", Value: "application/json"}}}}, nil)
			}, human: "< Content-Type: application/json"},
		{name: "probe", args: []string{"probe", "p-1", "--action", "click", "--css", "button"}, route: "probe",
			want: op.ProbeIn{OnPage: op.OnPage{Page: "p-1"}, Action: "click", Target: &localapi.Target{CSS: "button"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Of(op.Probe), decoded[localapi.ProbeResult](`{"page":"p-1","before":{"document":"d-1","url":"https://a.example/","title":"A"},"documentChanged":false,"action":{"action":"click","tag":"button"},"consoleErrors":[],"settled":true,"inFlight":0}`), nil)
			}, human: `"settled":true`},
		{name: "close-page", args: []string{"close-page", "p-2"}, route: "close_page", want: localapi.ClosePageRequest{Page: "p-2"},
			serve: func(f *fakeRunner) {
				answer(f, localapi.ClosePage, localapi.ClosePageResult{Page: "p-2", Closed: true}, nil)
			}, human: "closed p-2"},
		{name: "discover", args: []string{"discover"}, route: "discover", want: struct{}{},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Discover, localapi.DiscoverResult{Launch: localapi.LaunchAvailability{Available: true, Product: "chromium"}, ManagedProfiles: []string{"work"},
					Attach: []localapi.AttachCandidate{{Name: "google-chrome", Product: "chrome", State: "debugging_off", Next: "turn on remote debugging"}}, ExtensionBridge: true,
					Offers: []localapi.BridgeOffer{{ID: "o-1", Origin: "https://a.example", Title: "A", Expires: started}}}, nil)
			}, human: "shared tab: offer o-1"},
		{name: "bridge-status", args: []string{"bridge", "status"}, route: "bridge_status", want: struct{}{},
			serve: func(f *fakeRunner) {
				answer(f, localapi.GetBridgeStatus, localapi.BridgeStatus{Installed: true, Listening: true, Connected: 1, Offers: 1}, nil)
			}, human: "installed: true"},
	}
}

// actCase is a page action verb's case: its route is the operation's.
func actCase[In op.Input](name string, args []string, o *op.Op[In, op.ActResult], want In, res string, human string) verbCase {
	return verbCase{name: name, args: args, route: o.Name, want: want, human: human,
		serve: func(f *fakeRunner) { answer(f, localapi.Of(o), decoded[op.ActResult](res), nil) }}
}

// TestVerbsAgainstAFakeRunner runs every verb that reaches the Runner
// against a route table: the request each sends is exactly the one its
// flags say, its --json output is its golden file (go test -update
// rewrites them), and its human form says what it did.
func TestVerbsAgainstAFakeRunner(t *testing.T) {
	for _, c := range verbCases(t) {
		t.Run(c.name, func(t *testing.T) {
			fr := newFakeRunner()
			c.serve(fr)
			code, out, errs := runFake(fr, append(c.args, "--json")...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if got := fr.got[c.route]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("request on %s:\ngot  %#v\nwant %#v", c.route, got, c.want)
			}
			if len(fr.got) != 1+boolInt(fr.got[localapi.Ping.Name] != nil) {
				t.Errorf("routes called: %v, want only %s", keys(fr.got), c.route)
			}
			golden(t, c.name, out)

			fr = newFakeRunner()
			c.serve(fr)
			code, out, errs = runFake(fr, c.args...)
			if code != ExitOK || !strings.Contains(out, c.human) {
				t.Errorf("human form: exit %d, stdout %q (stderr %q), want it to contain %q", code, out, errs, c.human)
			}
		})
	}
}

// TestFakeRunnerRefusalPresented: a refusal from the Runner is presented
// with its code, its exit class and, in --json, the fields that say what it
// is about.
func TestFakeRunnerRefusalPresented(t *testing.T) {
	fr := newFakeRunner()
	ref := fsm.Refuse(fsm.ConsentRequired, "approval request ar-1: a person must approve")
	ref.ApprovalID = "ar-1"
	answer(fr, localapi.Attach, localapi.AttachResult{}, ref)
	code, out, errs := runFake(fr, "attach", "--profile-dir", "/p", "--json")
	if code != ExitRefused || !strings.Contains(errs, string(fsm.ConsentRequired)) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden(t, "attach-consent-required", out)
}

// TestRunnerFailureNamesTheBinaryAndTheLog: a failure the Runner reports
// is shown as webcodex's, without Go package prefixes, with where its log
// is; --json carries the same plain message.
func TestRunnerFailureNamesTheBinaryAndTheLog(t *testing.T) {
	fr := newFakeRunner()
	answer(fr, localapi.Launch, localapi.BrowserInfo{}, fmt.Errorf("runner: launch: %w", fmt.Errorf("platform: %w", errors.New("the browser exited during start-up"))))
	code, out, errs := runFake(fr, "launch", "--json")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d", code, ExitFailure)
	}
	if !strings.HasPrefix(errs, "webcodex: launch: the browser exited during start-up\n") || !strings.Contains(errs, "runner.log in the state directory") {
		t.Fatalf("stderr %q: want the binary's name, the plain message and runner.log", errs)
	}
	var v ErrorOutput
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Error.Message != "launch: the browser exited during start-up" {
		t.Fatalf("--json %q (%v): want the plain message", out, err)
	}
	// A failure that says where its output is (the Runner's launch error)
	// is one line: no second pointer to the log.
	said := "launching /usr/bin/chromium failed: the browser exited during start-up (exit status 1); its output is in runner.log in ~/.local/state/webcodex"
	fr = newFakeRunner()
	answer(fr, localapi.Launch, localapi.BrowserInfo{}, errors.New(said))
	if code, _, errs := runFake(fr, "launch"); code != ExitFailure || errs != "webcodex: "+said+"\n" {
		t.Fatalf("exit %d, stderr %q: want the one line %q", code, errs, said)
	}
}

// TestWaitThatRunsOutIsRefusedTimeout: a wait whose condition does not
// hold within --timeout exits 3 with timeout, in --json as one refusal
// object naming the page.
func TestWaitThatRunsOutIsRefusedTimeout(t *testing.T) {
	fr := newFakeRunner()
	answer(fr, localapi.Of(op.Wait), decoded[localapi.WaitResult](`{"page":"p-1","found":false,"condition":"text","elapsedMs":300}`), nil)
	code, out, errs := runFake(fr, "wait", "p-1", "--for", "text", "--for-text", "never", "--timeout", "300ms", "--json")
	if code != ExitRefused || !strings.Contains(errs, "refused: timeout") {
		t.Fatalf("exit %d, stderr %q; want %d and timeout", code, errs, ExitRefused)
	}
	var v RefusalOutput
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Refusal == nil || v.Refusal.Code != fsm.Timeout || v.Refusal.Page != "p-1" {
		t.Fatalf("--json = %q (%v), want one timeout refusal naming p-1", out, err)
	}
	fr = newFakeRunner()
	answer(fr, localapi.Of(op.Wait), decoded[localapi.WaitResult](`{"page":"p-1","found":false,"condition":"visible","elapsedMs":300}`), nil)
	if code, _, errs := runFake(fr, "wait", "p-1", "e4", "--for", "visible", "--timeout", "300ms"); code != ExitRefused || !strings.Contains(errs, "visible did not hold within 300ms") {
		t.Fatalf("human: exit %d, stderr %q", code, errs)
	}
	if got := fr.got[op.Wait.Name].(op.WaitIn); got.Target == nil || got.Target.Ref != "e4" {
		t.Fatalf("wait TARGET sent %+v, want the bare ref e4", got.Target)
	}
}

// TestUsageMistakesNeverReachTheRunner: a command line the verb refuses
// sends nothing.
func TestUsageMistakesNeverReachTheRunner(t *testing.T) {
	for _, args := range [][]string{
		{"click", "p-1"},
		{"type", "p-1", "--css", "input"},
		{"attach", "--offer", "o-1", "--endpoint", "127.0.0.1:1"},
		{"dialog", "p-1", "--accept", "--dismiss"},
		{"launch", "--headless", "--headed"},
		{"click", "p-1", "e1", "--css", "a"},                // TARGET and a flag
		{"click", "p-1", `{"role":"button","bogus":1}`},     // unknown key
		{"click", "p-1", `{"name":"Go"}`},                   // name without role
		{"click", "p-1", "--ref", "e1x"},                    // not a ref
		{"click", "p-1", "e1", "extra"},                     // three arguments
		{"click", "p-1", "--snapshot", "s-1", "--css", "a"}, // snapshot without ref
	} {
		fr := newFakeRunner()
		answer(fr, localapi.Of(op.Click), op.ActResult{}, nil)
		answer(fr, localapi.Of(op.HandleDialog), localapi.DialogResult{}, nil)
		answer(fr, localapi.AttachOffer, attach, nil)
		answer(fr, localapi.Launch, browser, nil)
		if code, _, _ := runFake(fr, args...); code != ExitUsage || len(fr.got) != 0 {
			t.Errorf("%v: exit %d, routes called %v; want %d and none", args, code, keys(fr.got), ExitUsage)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// golden compares one --json output with testdata/NAME.golden.
func golden(t *testing.T, name, out string) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	out = pathless(out)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no golden output (go test ./cmd/internal/cli -run %s -update): %v", t.Name(), err)
	}
	if out != string(want) {
		t.Errorf("--json output changed (run with -update after an intended change):\ngot\n%s\nwant\n%s", out, want)
	}
}

// pathless replaces the test's temporary directory (screenshot -o) with a
// fixed name, so the golden output does not depend on it.
func pathless(out string) string {
	var v map[string]any
	if json.Unmarshal([]byte(out), &v) != nil {
		return out
	}
	if f, ok := v["file"].(string); ok {
		out = strings.ReplaceAll(out, f, "shot.png")
	}
	return out
}

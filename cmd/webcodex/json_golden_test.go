package main_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

var update = flag.Bool("update", false, "rewrite testdata/json from what the commands print")

// namedMaps are keys whose value is a map keyed by names from a closed set
// (environment variables, capability names, side effects): their keys are
// data, not fields.
var namedMaps = map[string]bool{"env": true, "capabilities": true, "sideEffects": true}

var camelKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// shape reduces a JSON value to its structure: an object to its keys'
// shapes, a list to the union of its elements' shapes, a scalar to its
// type. It also checks the JSON convention on the way.
func shape(t *testing.T, cmd, path string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range v {
			if namedMaps[k] {
				out[k] = "map"
				continue
			}
			if !camelKey.MatchString(k) {
				t.Errorf("%s: key %s.%s is not camelCase", cmd, path, k)
			}
			if k == "id" {
				t.Errorf("%s: key %s.id: a page is \"page\", a browser \"browser\"", cmd, path)
			}
			out[k] = shape(t, cmd, path+"."+k, c)
		}
		return out
	case []any:
		union := map[string]any{}
		var scalar any
		for _, c := range v {
			switch s := shape(t, cmd, path+"[]", c).(type) {
			case map[string]any:
				for k, x := range s {
					union[k] = x
				}
			default:
				scalar = s
			}
		}
		switch {
		case len(union) > 0:
			return []any{union}
		case scalar != nil:
			return []any{scalar}
		}
		return []any{}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// golden compares the shape of one --json output with
// testdata/json/NAME.json (rewritten with -update).
func golden(t *testing.T, name, out string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("%s: not one JSON value: %q", name, out)
		return
	}
	if _, ok := v.(map[string]any); !ok {
		t.Errorf("%s: top level is %T, want an object", name, v)
	}
	got, _ := json.MarshalIndent(shape(t, name, "", v), "", "  ")
	got = append(got, '\n')
	file := filepath.Join("testdata", "json", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("%s: no golden shape (go test ./cmd/webcodex -run TestJSONShapesGolden -update): %v", name, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: --json shape changed (fields are only ever added; after adding one, run with -update):\ngot  %s\nwant %s", name, got, want)
	}
}

const goldenPage = `<!doctype html><title>golden</title>
<label>Name <input id=name></label>
<label><input type=checkbox id=ok> OK</label>
<select id=pick><option>a</option><option>b</option></select>
<input type=file id=file>
<button onclick="document.getElementById('out').textContent='clicked'">Go</button><p id=out></p>
<div style="height:3000px"></div>
<script>console.log("golden loaded")</script>`

// TestJSONShapesGolden runs every command with --json against a real
// Runner and Chromium and compares the shape of what it prints with the
// golden file: one top-level object, camelCase keys, "page" and "browser"
// for ids, and no field renamed or removed.
func TestJSONShapesGolden(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, goldenPage)
	})
	mux.HandleFunc("/missing-page-404", http.NotFound)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ran := map[string]bool{}
	jsonOf := func(name string, wantCode int, args ...string) string {
		t.Helper()
		code, out, errs := e.run(append(args, "--json")...)
		if code != wantCode {
			t.Fatalf("%s: webcodex %v: exit %d, want %d\n%s", name, args, code, wantCode, errs)
		}
		golden(t, name, out)
		ran[args[0]] = true
		return out
	}
	jsonOf("version", 0, "version")
	jsonOf("status-not-running", 0, "status")
	jsonOf("stop-not-running", 0, "stop")
	jsonOf("usage-error", 2, "launch", "--headless", "--headed")

	var b localapi.BrowserInfo
	json.Unmarshal([]byte(jsonOf("launch", 0, "launch")), &b)
	var p localapi.PageInfo
	json.Unmarshal([]byte(jsonOf("open", 0, "open", b.ID)), &p)
	jsonOf("goto", 0, "goto", p.ID, srv.URL+"/")
	jsonOf("status", 0, "status")
	jsonOf("pages", 0, "pages", b.ID)
	jsonOf("read", 0, "read", p.ID)
	jsonOf("screenshot", 0, "screenshot", p.ID, "-o", filepath.Join(t.TempDir(), "shot.png"))
	jsonOf("eval", 0, "eval", p.ID, "1 + 1")
	var snap struct {
		ID   string `json:"snapshotId"`
		Text string `json:"text"`
	}
	json.Unmarshal([]byte(jsonOf("snapshot", 0, "snapshot", p.ID)), &snap)
	// A bare ref means the page's latest snapshot: no --snapshot needed.
	goRef := regexp.MustCompile(`button "Go" \[(e[0-9]+)\]`).FindStringSubmatch(snap.Text)
	if goRef == nil {
		t.Fatalf("the snapshot lists no ref for the Go button:\n%s", snap.Text)
	}
	jsonOf("click", 0, "click", p.ID, goRef[1])
	if _, out, _ := e.run("read", p.ID); !strings.Contains(out, "clicked") {
		t.Fatalf("click by a bare ref did not click the button: the page reads %q", out)
	}
	jsonOf("click", 0, "click", p.ID, "--role", "button", "--name", "Go")
	jsonOf("hover", 0, "hover", p.ID, "--label", "Name")
	jsonOf("type", 0, "type", p.ID, "--label", "Name", "--value", "ada")
	jsonOf("fill", 0, "fill", p.ID, "--label", "Name", "--value", "bob")
	jsonOf("press", 0, "press", p.ID, "--key", "Tab")
	jsonOf("select", 0, "select", p.ID, "--css", "#pick", "--option", "b")
	jsonOf("check", 0, "check", p.ID, "--css", "#ok")
	jsonOf("uncheck", 0, "uncheck", p.ID, "--css", "#ok")
	jsonOf("scroll", 0, "scroll", p.ID, "--to", "bottom")
	jsonOf("upload-refused", 3, "upload", p.ID, "--css", "#file", "--file", "x.txt")
	jsonOf("dialog", 0, "dialog", p.ID)
	jsonOf("wait", 0, "wait", p.ID, "--for", "text", "--for-text", "clicked", "--timeout", "5s")
	jsonOf("wait-timeout", 3, "wait", p.ID, "--for", "text", "--for-text", "never on this page", "--timeout", "200ms")
	jsonOf("console", 0, "console", p.ID)
	var netlog struct {
		Entries []struct {
			Seq  int    `json:"seq"`
			Kind string `json:"kind"`
		} `json:"entries"`
	}
	json.Unmarshal([]byte(jsonOf("network", 0, "network", p.ID)), &netlog)
	if len(netlog.Entries) == 0 {
		t.Fatal("the network log lists no request of the golden page")
	}
	jsonOf("request", 0, "request", p.ID, "--seq", fmt.Sprint(netlog.Entries[0].Seq), "--part", "response-headers")
	jsonOf("drag", 0, "drag", p.ID, "--css", "button", "--to", "#ok")
	jsonOf("probe", 0, "probe", p.ID, "--action", "click", "--role", "button", "--name", "Go")
	jsonOf("goto-404", 1, "goto", p.ID, srv.URL+"/missing-page-404")
	jsonOf("back", 0, "back", p.ID)
	jsonOf("forward", 0, "forward", p.ID)
	jsonOf("reload", 0, "reload", p.ID)
	jsonOf("tabs", 0, "tabs", b.ID)
	jsonOf("downloads", 0, "downloads", b.ID)
	var extra localapi.PageInfo
	json.Unmarshal([]byte(jsonOf("open-second", 0, "open", b.ID)), &extra)
	jsonOf("close-page", 0, "close-page", extra.ID)
	jsonOf("refusal", 3, "pages", "b-none")
	jsonOf("attach-refused", 3, "attach", "--endpoint", closedPort(t))
	jsonOf("reconnect-refused", 3, "reconnect", b.ID)
	jsonOf("close", 0, "close", b.ID)
	jsonOf("audit-verify", 0, "audit", "verify")
	jsonOf("doctor", 0, "doctor")
	jsonOf("policy-check", 0, "policy", "check", "--allow", "example.com", "https://example.com/")
	jsonOf("policy-check-denied", 3, "policy", "check", "--allow", "example.com", "https://example.com/", "https://other.example/")
	jsonOf("bridge-status", 0, "bridge", "status")
	jsonOf("stop", 0, "stop")

	// Every verb of the CLI is covered, but for those that need a person
	// (approve), serve the Runner (serve, mcp), write files (spec,
	// install-bridge: its own tests), list what this machine has installed
	// (discover: its shape depends on the browsers found) or run the demo.
	help, err := exec.Command(binary, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range verbsOf(string(help)) {
		if !ran[verb] && !slices.Contains([]string{"approve", "serve", "mcp", "spec", "install-bridge", "discover", "demo", "help", "completion"}, verb) {
			t.Errorf("verb %s has no golden --json shape", verb)
		}
	}
}

// verbsOf lists the verbs of `webcodex --help`.
func verbsOf(help string) []string {
	var verbs []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			return verbs
		case in:
			verbs = append(verbs, strings.Fields(line)[0])
		}
	}
	return verbs
}

package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cdp/policy"
	"github.com/webcodex/webcodex/fsm"
)

// TestCDPPolicyThroughTool: through browser_cdp, every withheld command and
// every command of a withheld or unreviewed domain is refused; page-scoped
// commands pass; a result over the bound is refused, not cut.
func TestCDPPolicyThroughTool(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	var big strings.Builder
	big.WriteString(`<!doctype html><title>big</title>`)
	for i := 0; i < 6000; i++ {
		big.WriteString(`<div class="row"><span>row</span></div>`)
	}
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>cdp</title><p>page</p>`, "/big": big.String()})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})

	// The commands the issue names are all withheld.
	named := []string{
		"Network.getAllCookies", "Network.getCookies", "Network.setCookie", "Network.setCookies",
		"Network.deleteCookies", "Network.clearBrowserCookies", "Page.navigate", "DOM.setFileInputFiles",
		"Page.setDownloadBehavior", "Browser.setDownloadBehavior", "Runtime.addBinding", "Target.exposeDevToolsProtocol",
	}
	withheld := map[string]bool{}
	for _, c := range policy.WithheldCommands() {
		withheld[c.Method] = true
	}
	for _, m := range named {
		if !withheld[m] && !strings.HasPrefix(m, "Browser.") && !strings.HasPrefix(m, "Target.") {
			t.Errorf("%s is not in the withheld list", m)
		}
	}
	var methods []string
	methods = append(methods, named...)
	for m := range withheld {
		methods = append(methods, m)
	}
	for _, d := range policy.Domains() {
		if !d.Allowed {
			methods = append(methods, d.Name+".enable", d.Name+".anything")
		}
	}
	methods = append(methods, "Unreviewed.enable", "Target.getTargets", "Storage.getCookies", "IndexedDB.requestData", "notamethod", "")
	for _, m := range methods {
		ref := s.refused("browser_cdp", map[string]any{"method": m}, fsm.PolicyDenied)
		if strings.Contains(ref.Detail, srv.URL) {
			t.Errorf("%s: refusal names the page", m)
		}
	}

	// Page-scoped commands pass.
	res := s.ok("browser_cdp", map[string]any{"method": "Runtime.evaluate", "params": map[string]any{"expression": "6*7", "returnByValue": true}})
	if v := res["result"].(map[string]any)["result"].(map[string]any)["value"]; v != float64(42) {
		t.Fatalf("Runtime.evaluate = %v", res)
	}
	s.ok("browser_cdp", map[string]any{"method": "DOM.getDocument"})
	s.ok("browser_cdp", map[string]any{"method": "Emulation.setDeviceMetricsOverride", "params": map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false}})
	// The browser's own refusal is a refusal, not a protocol error.
	s.refused("browser_cdp", map[string]any{"method": "DOM.describeNode", "params": map[string]any{"nodeId": 999999}}, fsm.InvalidArgument)

	// Bounded: the whole DOM of a big page is more than 200,000 characters.
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/big"})
	s.refused("browser_cdp", map[string]any{"method": "DOM.getDocument", "params": map[string]any{"depth": -1}}, fsm.LimitExceeded)

	// Each refusal and call is audited with its method; params never are.
	recs, audit := auditRecords(t, s.state)
	if !hasRecord(recs, map[string]string{"tool": "browser_cdp", "action": "cdp:Network.getAllCookies", "verdict": string(fsm.PolicyDenied)}) ||
		!hasRecord(recs, map[string]string{"tool": "browser_cdp", "action": "cdp:Runtime.evaluate", "outcome": "ok"}) {
		t.Fatalf("cdp calls are not audited:\n%s", audit)
	}
	noSecrets(t, "the audit trail", audit, "6*7", "deviceScaleFactor")
}

// TestReadOnlyServer: a server granted browser:read refuses every effect
// before it reaches the Runner, and its capability bits are honest.
func TestReadOnlyServer(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	// Every capability group on: a tool of any group is judged here.
	s := startServer(t, serverOpts{args: []string{"--scopes", "browser:read", "--caps", "all"}})
	effects := map[string]map[string]any{
		"browser_launch":           {},
		"browser_attach":           {"candidate": "chromium"},
		"browser_reconnect":        {},
		"browser_close":            {},
		"browser_adopt":            {"browser": "b-1"},
		"browser_navigate":         {"url": "http://127.0.0.1:1/"},
		"browser_click":            {"target": map[string]any{"text": "x"}},
		"browser_type":             {"target": map[string]any{"label": "x"}, "text": "secret"},
		"browser_fill_form":        {"fields": []any{map[string]any{"target": map[string]any{"label": "x"}, "type": "textbox", "value": "v"}}},
		"browser_press_key":        {"key": "Enter"},
		"browser_select_option":    {"target": map[string]any{"label": "x"}, "values": []string{"a"}},
		"browser_hover":            {"target": map[string]any{"text": "x"}},
		"browser_evaluate":         {"expression": "1"},
		"browser_file_upload":      {"target": map[string]any{"label": "x"}, "files": []string{"a"}},
		"browser_handle_dialog":    {"accept": true},
		"browser_cdp":              {"method": "Runtime.evaluate"},
		"browser_tabs new":         {"action": "new"},
		"browser_tabs close":       {"action": "close", "page": "p-1"},
		"browser_navigate_back":    {},
		"browser_navigate_forward": {},
		"browser_reload":           {},
		"browser_probe":            {"action": "click", "ref": "e1"},
		"browser_downloads save":   {"id": "d1", "save": "/tmp"},
		"browser_resize":           {"width": 800, "height": 600},
		"browser_emulate_media":    {"colorScheme": "dark"},
		"browser_mouse_move_xy":    {"x": 1, "y": 1},
		"browser_mouse_click_xy":   {"x": 1, "y": 1},
		"browser_mouse_drag_xy":    {"startX": 1, "startY": 1, "endX": 2, "endY": 2},
		"browser_mouse_down":       {},
		"browser_mouse_up":         {},
		"browser_mouse_wheel":      {"deltaX": 0, "deltaY": 10},
		"browser_drag":             {"startTarget": "#a", "endTarget": "#b"},
		"browser_tabs (no more)":   nil,
	}
	for name, args := range effects {
		if args == nil {
			continue
		}
		tool, _, _ := strings.Cut(name, " ")
		ref := s.refused(tool, args, fsm.ScopeDenied)
		if !strings.Contains(ref.Detail, "browser:read") {
			t.Errorf("%s: the refusal does not say what is granted: %q", name, ref.Detail)
		}
	}
	// Each attempt refused by its scope is in the audit trail, without its
	// arguments, and nothing else is: no refused tool reached the Runner.
	recs, audit := auditRecords(t, s.state)
	audited := map[string]bool{}
	for _, r := range recs {
		if r["verdict"] != string(fsm.ScopeDenied) || r["browser"] != "" {
			t.Errorf("a refused tool reached the Runner: %v", r)
		}
		audited[fmt.Sprint(r["tool"])] = true
	}
	for name := range effects {
		if tool, _, _ := strings.Cut(name, " "); tool != "browser_tabs" && !audited[tool] {
			t.Errorf("the scope refusal of %s is not audited:\n%s", tool, audit)
		}
	}
	noSecrets(t, "the audit trail", audit, "secret")
	// Every tool outside browser:read is in the list above.
	readOnly := map[string]bool{"browser_discover": true, "browser_status": true, "browser_snapshot": true, "browser_wait_for": true,
		"browser_take_screenshot": true, "browser_console_messages": true, "browser_network_requests": true, "browser_tabs": true,
		"browser_scroll": true, "browser_downloads": true, "browser_find": true, "browser_pdf_save": true,
		"browser_network_request": true}
	for _, tool := range toolOrder {
		if _, ok := effects[tool]; !ok && !readOnly[tool] {
			t.Errorf("%s is neither checked here nor read-only", tool)
		}
	}
	st := s.ok("browser_status", nil)
	if scopes := st["server"].(map[string]any)["scopes"].([]any); len(scopes) != 1 || scopes[0] != "browser:read" {
		t.Fatalf("status scopes = %v", scopes)
	}
	caps := st["capabilities"].(map[string]any)
	if caps["browser_managed_profile"] != true || caps["browser_extension_bridge"] != false || caps["browser_surface_handoff"] != false {
		t.Fatalf("capability bits %v", caps)
	}
	d := s.ok("browser_discover", nil)
	if d["launch_allowed"] != false || d["discover"].(map[string]any)["extensionBridge"] != false {
		t.Fatalf("discover = %v", d)
	}
	// Reads work (and say there is nothing to read yet).
	s.refused("browser_snapshot", nil, fsm.NotFound)
	// A bad scope is a usage error.
	cmd := exec.Command(binary, "mcp", "--scopes", "browser:everything")
	cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+shortDir(t))
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Fatalf("unknown scope: %v, exit %d", err, cmd.ProcessState.ExitCode())
	}
}

// TestManagedProfileCapability: browser_managed_profile is true because a
// managed profile really launches (headless here: no display).
func TestManagedProfileCapability(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	s := startServer(t, serverOpts{})
	res := s.ok("browser_launch", map[string]any{"managed": "mcp-test", "headless": true})
	if str(res, "browser", "mode") != "owned_managed_persistent" || str(res, "browser", "profile") != "mcp-test" {
		t.Fatalf("managed launch = %v", res)
	}
	s.refused("browser_launch", map[string]any{"managed": "../etc"}, fsm.InvalidArgument)
	s.refused("browser_launch", map[string]any{"managed": "mcp-test", "headless": true}, fsm.LeaseHeld)
	s.ok("browser_close", nil)
	d := s.ok("browser_discover", nil)
	if profiles := d["discover"].(map[string]any)["managedProfiles"].([]any); len(profiles) != 1 || profiles[0] != "mcp-test" {
		t.Fatalf("managed profiles = %v", profiles)
	}
}

// TestPolicyCheckCLI: `webcodex policy check` through the built binary.
func TestPolicyCheckCLI(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	cases := []struct {
		mode    string
		allow   []string
		url     string
		allowed bool
	}{
		{"attach", []string{"github.com"}, "https://github.com/x", true},
		{"attach", []string{"github.com"}, "https://api.github.com/", true},
		{"attach", []string{"github.com"}, "http://github.com:8080/", true},
		{"attach", []string{"github.com"}, "https://github.com.evil.com/", false},
		{"attach", []string{"github.com"}, "https://evilgithub.com/", false},
		{"attach", []string{"github.com"}, "https://github.com@evil.com/", false},
		{"attach", []string{"github.com"}, "https://evil.com\\@github.com/", false},
		{"attach", []string{"github.com"}, "https://github.com./", false},
		{"attach", []string{"github.com"}, "wss://github.com/", false},
		{"attach", []string{"https://github.com"}, "http://github.com/", false},
		{"attach", []string{"github.com:443"}, "https://github.com/", true},
		{"attach", []string{"github.com:443"}, "https://github.com:8443/", false},
		{"attach", []string{"127.0.0.1"}, "http://2130706433/", true},
		{"attach", []string{"127.0.0.1"}, "http://0x7f.1/", true},
		{"attach", []string{"127.0.0.1"}, "http://[::ffff:127.0.0.1]/", false},
		{"attach", []string{"localhost"}, "http://app.localhost/", true},
		{"attach", []string{"localhost"}, "http://127.0.0.1/", false},
		{"attach", nil, "https://example.com/", false},
		{"attach", nil, "about:blank", false},
		{"attach", []string{"example.com"}, "about:blank", true},
		{"attach", []string{"example.com"}, "blob:https://example.com/uuid", true},
		{"attach", []string{"example.com"}, "javascript:alert(1)", false},
		{"attach", []string{"example.com"}, "data:text/html,hi", false},
		{"attach", []string{"example.com"}, "file:///etc/passwd", false},
		{"attach", []string{"example.com"}, "https://exa\tmple.com/", true},
		{"attach", []string{"bücher.example"}, "https://xn--bcher-kva.example/", true},
		{"attach", []string{"example.com"}, "not a url", false},
		{"launch", nil, "https://example.com/", true},
		{"launch", nil, "chrome://settings", false},
		{"launch", nil, "ws://example.com/", false},
	}
	for _, c := range cases {
		args := []string{"--json", "policy", "check", "--mode", c.mode}
		for _, a := range c.allow {
			args = append(args, "--allow", a)
		}
		args = append(args, "--", c.url)
		cmd := exec.Command(binary, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		// A deny is a refusal: exit 3, the one object still printed.
		if code := exitCode(err); (c.allowed && code != 0) || (!c.allowed && code != 3) {
			t.Fatalf("policy check %v: exit %d (%v), want %d\n%s", args, code, err, map[bool]int{true: 0, false: 3}[c.allowed], errb.String())
		}
		var check struct {
			Allowed  bool                `json:"allowed"`
			Verdicts []PolicyVerdictJSON `json:"verdicts"`
		}
		if err := json.Unmarshal(out.Bytes(), &check); err != nil || len(check.Verdicts) != 1 || check.Allowed != c.allowed {
			t.Fatalf("%v: output %q", args, out.String())
		}
		v := check.Verdicts[0]
		if v.URL != c.url || v.Allowed != c.allowed {
			t.Errorf("policy check --mode %s %v %q = %+v, want allowed %v", c.mode, c.allow, c.url, v, c.allowed)
		}
		if !v.Allowed && v.Code != string(fsm.OriginDenied) {
			t.Errorf("%q denied without the code: %+v", c.url, v)
		}
		if v.Allowed && v.Code != "" {
			t.Errorf("%q allowed with a code: %+v", c.url, v)
		}
	}
	// Several URLs in text mode: a line each, and exit 3 for the deny.
	cmd := exec.Command(binary, "policy", "check", "--allow", "example.com", "https://example.com/", "https://evil.test/")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if code := exitCode(cmd.Run()); code != 3 {
		t.Fatalf("policy check with one URL denied: exit %d, want 3", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "allowed\thttps://example.com/") || !strings.HasPrefix(lines[1], "denied\thttps://evil.test/\torigin_denied") {
		t.Fatalf("text output %q", out.String())
	}
	// An entry the gate would drop is a usage error naming it and the
	// accepted forms, for policy check as for mcp (which then starts
	// nothing: it exits before reading its client).
	for _, entry := range []string{"com", "not a url!", "", "ftp://x"} {
		for _, args := range [][]string{
			{"policy", "check", "--allow", "example.com", "--allow", entry, "https://example.com/"},
			{"mcp", "--allow", entry},
		} {
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errb.String(), fmt.Sprintf("--allow %q", entry)) || !strings.Contains(errb.String(), "[scheme://]host[:port]") {
				t.Fatalf("%q: %v, stderr %q; want exit 2 naming the entry and the accepted forms", args, err, errb.String())
			}
		}
	}
	for _, bad := range [][]string{{"policy", "check"}, {"policy", "check", "--mode", "owned", "https://x.test/"}} {
		if err := exec.Command(binary, bad...).Run(); err == nil {
			t.Fatalf("%v succeeded", bad)
		} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("%v: %v, want exit 2", bad, err)
		}
	}
}

// PolicyVerdictJSON is one verdict of policy check --json.
type PolicyVerdictJSON struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Code    string `json:"code"`
	Detail  string `json:"detail"`
}

// exitCode is a finished command's exit status: 0 for success, -1 when it
// did not run to an exit.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

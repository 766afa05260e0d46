package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
)

// TestToolsListedWithSchemas: every tool is listed, with a description, an
// object input schema, and a description on every argument (nested ones
// included).
func TestToolsListedWithSchemas(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	s := startServer(t, serverOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q is too thin to act on", tool.Name, tool.Description)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: schema %s", tool.Name, b)
		}
		if schema["type"] != "object" {
			t.Errorf("%s: schema type %v, want object", tool.Name, schema["type"])
		}
		checkDescribed(t, tool.Name, schema)
	}
	want := append([]string(nil), toolOrder...)
	slices.Sort(want)
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v\nwant %v", names, want)
	}
	// The element tools take Playwright's ref and element, and name every
	// kind of semantic target in one description.
	for _, tool := range res.Tools {
		if tool.Name != "browser_click" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		for _, k := range []string{`"ref"`, `"element"`, `"target"`, `role`, `name`, `label`, `text`, `placeholder`, `testId`, `css`, `index`} {
			if !strings.Contains(string(b), k) {
				t.Errorf("browser_click schema lacks %s", k)
			}
		}
	}
}

// selfExplained are the argument names an agent reads without a
// description: Playwright MCP's own (element, ref, text, textGone, url,
// values, accept, fullPage, doubleClick, and a drag's startElement and
// endElement, its element twice), those the server's instructions
// explain once (page, snapshotId, snapshot), target, described in
// browser_click, and
// the ARIA terms role and name.
// Every other argument says what it is.
var selfExplained = map[string]bool{
	"snapshot": true, "page": true, "element": true, "ref": true, "snapshotId": true, "target": true, "text": true, "textGone": true, "url": true,
	"urlIncludes": true, "values": true, "accept": true, "fullPage": true, "doubleClick": true, "errorsOnly": true, "params": true,
	"dx": true, "dy": true, "idempotencyKey": true, "role": true, "name": true,
	"startElement": true, "endElement": true,
}

// checkDescribed walks a schema's properties: each must say what it is,
// by a description, its enum or a self-explaining name.
func checkDescribed(t *testing.T, where string, schema map[string]any) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if d, _ := pm["description"].(string); d == "" && pm["enum"] == nil && !selfExplained[name] {
			t.Errorf("%s.%s has no description", where, name)
		}
		checkDescribed(t, where+"."+name, pm)
		if items, ok := pm["items"].(map[string]any); ok {
			checkDescribed(t, where+"."+name+"[]", items)
		}
	}
}

// reactForm is a React-style form: each input's value property is
// intercepted the way React's value tracker does it, so a value written by
// a script (even followed by a synthetic input event) is ignored and only
// real input reaches the app's state.
const reactForm = `<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form id="f">
<label>Email <input id="email" name="email" type="email"></label>
<label for="name">Full name</label> <input id="name" placeholder="Your name">
<button type="submit">Create account</button>
</form>
<p id="result"></p>
<script>
window.__state = {email: '', name: ''};
for (const id of ['email', 'name']) {
  const el = document.getElementById(id);
  const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
  let tracked = '';
  Object.defineProperty(el, 'value', {
    configurable: true,
    get() { return native.get.call(this); },
    set(v) { tracked = String(v); native.set.call(this, v); },
  });
  el.addEventListener('input', () => {
    const v = native.get.call(el);
    if (v !== tracked) { tracked = v; window.__state[id] = v; }
  });
}
document.getElementById('f').addEventListener('submit', (e) => {
  e.preventDefault();
  const s = window.__state;
  setTimeout(() => {
    document.getElementById('result').textContent = s.email && s.name ? 'Welcome, ' + s.name + ' (' + s.email + ')' : 'Missing fields';
  }, 200);
});
</script></body></html>`

// The values the agent types: they must never reach the audit trail.
const (
	typedName  = "Zephyrine Quill"
	typedEmail = "zq7@example.test"
)

// TestAgentTask: a real MCP client drives the built server through a whole
// task: launch, navigate, snapshot, type into a React-style form, click,
// wait, read the result back from the page. Then the audit trail holds a
// record per effect and nothing secret.
func TestAgentTask(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	srv := fixture(t, map[string]string{"/": reactForm})
	s := startServer(t, serverOpts{})

	st := s.ok("browser_status", nil)
	caps := st["capabilities"].(map[string]any)
	if caps["browser_managed_profile"] != true || caps["browser_extension_bridge"] != false || caps["browser_surface_handoff"] != false {
		t.Fatalf("capability bits %v", caps)
	}

	launched := s.ok("browser_launch", map[string]any{})
	page := str(launched, "page")
	if page == "" || str(launched, "browser", "mode") != "owned_ephemeral" {
		t.Fatalf("launch = %v", launched)
	}
	nav := s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	if str(nav, "title") != "Sign up" || str(nav, "page") != page {
		t.Fatalf("navigate = %v", nav)
	}
	if _, ok := nav["snapshot"]; ok {
		t.Fatal("navigate returned a snapshot nobody asked for")
	}

	// A script cannot fill the form: the interceptor ignores it.
	s.ok("browser_evaluate", map[string]any{"expression": `(() => { const e = document.getElementById('email'); e.value = 'fake@x'; e.dispatchEvent(new Event('input', {bubbles: true})); return window.__state.email; })()`})
	if v := s.ok("browser_evaluate", map[string]any{"function": "() => window.__state.email"}); v["value"] != "" {
		t.Fatalf("a script-set value reached the app's state: %v", v)
	}

	snap := s.call("browser_snapshot", map[string]any{"interactive": true})
	ref := refOf(t, snap.text, "textbox", "Email")
	if _, outlined := snap.body["text"]; str(snap.body, "snapshotId") == "" || outlined {
		t.Fatalf("the structured content is not the snapshot's fields alone: %v", snap.body)
	}

	// Playwright's shape: a bare ref (the latest snapshot) and a description.
	typed := s.ok("browser_type", map[string]any{"ref": ref, "element": "Email field", "text": typedEmail})
	if strings.Contains(typed["result"].(map[string]any)["action"].(string), "@") {
		t.Fatal("typed value echoed")
	}
	s.ok("browser_type", map[string]any{"target": map[string]any{"placeholder": "Your name"}, "text": typedName})
	s.ok("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": "Create account"}})
	w := s.ok("browser_wait_for", map[string]any{"text": "Welcome", "timeout": 10})
	if found, _ := w["result"].(map[string]any)["found"].(bool); !found {
		t.Fatalf("wait = %v", w)
	}
	text := s.call("browser_snapshot", map[string]any{}).text
	if !strings.Contains(text, "Welcome, "+typedName+" ("+typedEmail+")") {
		t.Fatalf("the page did not take the typed values:\n%s", text)
	}

	shot := s.call("browser_take_screenshot", map[string]any{})
	if shot.isError || len(shot.raw.Content) < 1 {
		t.Fatalf("screenshot: %s", shot.text)
	}
	img, ok := shot.raw.Content[0].(*sdk.ImageContent)
	if !ok || img.MIMEType != "image/png" || len(img.Data) < 100 || string(img.Data[1:4]) != "PNG" {
		t.Fatalf("screenshot content %T", shot.raw.Content[0])
	}

	// A bad argument is a structured refusal, never a protocol error.
	s.refused("browser_click", map[string]any{"ref": "Create account"}, fsm.InvalidArgument)
	s.refused("browser_click", map[string]any{"target": map[string]any{"rol": "button"}}, fsm.InvalidArgument)
	s.refused("browser_navigate", map[string]any{"url": srv.URL, "approve": true}, fsm.InvalidArgument)

	secrets := append(ownedEndpoints(t, s.state), typedName, typedEmail, cookieSecret, "ws://", "/devtools/browser/", "Welcome")
	recs, audit := auditRecords(t, s.state)
	for _, want := range []map[string]string{
		{"tool": "browser_launch", "action": "launch", "verdict": "allowed", "outcome": "ok"},
		{"tool": "browser_navigate", "action": "navigate", "origin": srv.URL},
		{"tool": "browser_evaluate", "action": "evaluate", "page": page},
		{"tool": "browser_type", "action": "fill", "page": page},
		{"tool": "browser_click", "action": "click", "page": page, "origin": srv.URL},
		{"tool": "browser_click", "verdict": "invalid_argument"},
	} {
		want := want
		if want["tool"] == "browser_click" && want["verdict"] == "invalid_argument" {
			continue // refused before the Runner: no effect, no record
		}
		if !hasRecord(recs, want) {
			t.Errorf("no audit record %v in\n%s", want, audit)
		}
	}
	for _, r := range recs {
		if r["session"] == "" || !strings.HasPrefix(r["session"].(string), "mcp-") {
			t.Errorf("audit record without the MCP session: %v", r)
		}
	}
	noSecrets(t, "the audit trail", audit, secrets...)
	noSecrets(t, "the server's log", s.stderr.String(), append(secrets[:len(secrets)-1], srv.URL)...)
	s.mu.Lock()
	seen := strings.Join(s.seen, "\n")
	s.mu.Unlock()
	noSecrets(t, "the tool results", seen, append(ownedEndpoints(t, s.state), cookieSecret, "/devtools/browser/")...)
}

// refOf finds the ref of the outline line with role and name.
func refOf(t *testing.T, outline, role, name string) string {
	t.Helper()
	for _, line := range strings.Split(outline, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "- "+role+" \""+name) {
			if i := strings.LastIndex(l, "["); i >= 0 && strings.HasSuffix(l, "]") {
				f := strings.Fields(l[i+1 : len(l)-1])
				if len(f) > 0 {
					return f[len(f)-1]
				}
			}
		}
	}
	t.Fatalf("no %s %q in the outline:\n%s", role, name, outline)
	return ""
}

// TestUploadAudit: the audit holds the full path and size of an uploaded
// file; the result names the file only; a file outside the directory is
// refused.
func TestUploadAudit(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	needChromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(file, []byte("twelve bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("x"), 0o600)
	srv := fixture(t, map[string]string{"/": `<!doctype html><title>upload</title><label>Attachment <input type="file" id="f"></label>`})
	s := startServer(t, serverOpts{args: []string{"--upload-dir", dir}})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	res := s.ok("browser_file_upload", map[string]any{"target": map[string]any{"label": "Attachment"}, "files": []string{"report.txt"}})
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"report.txt"`) || strings.Contains(string(b), dir) {
		t.Fatalf("upload result %s: want the file name only", b)
	}
	s.refused("browser_file_upload", map[string]any{"target": map[string]any{"label": "Attachment"}, "files": []string{outside}}, fsm.UploadDenied)
	real, _ := filepath.EvalSymlinks(file)
	recs, audit := auditRecords(t, s.state)
	found := false
	for _, r := range recs {
		if r["action"] == "upload" && r["file"] == real && r["size"] == float64(12) && r["outcome"] == "ok" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no upload record with the full path and size in\n%s", audit)
	}
	if !hasRecord(recs, map[string]string{"action": "upload", "verdict": string(fsm.UploadDenied)}) {
		t.Fatalf("the refused upload is not audited:\n%s", audit)
	}
}

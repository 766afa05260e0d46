package mcp

import (
	"bytes"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// secretValue has characters a URL, HTML and JSON each encode.
const secretValue = `Hunt3r2 <&> "pw"/é`

// echoPage writes what is typed into its text, title, console and a
// request, and shows it in an alert on a button press; it throws it too.
const echoPage = `<!doctype html><title>echo</title>
<input id=f aria-label=Secret>
<input id=pw type=password aria-label=Password style="width:200px;height:40px;background:#f00;color:#00f;font-size:30px;border:0">
<button onclick="alert('typed ' + f.value)">Show</button>
<p id=out>nothing yet</p>
<script>
f.addEventListener('input', () => {
  const v = f.value;
  out.textContent = 'you typed ' + v;
  document.title = 'title ' + v;
  console.log('typed', v);
  console.error(JSON.stringify({v}));
  fetch('/echo?v=' + encodeURIComponent(v)).catch(() => {});
});
</script>`

// TestSecretsNeverReachTheAgent: a secret typed by its placeholder into a
// page of its bound origin reaches the page — which echoes it into its
// text, title, console, a request and an alert — yet no result the agent
// reads (snapshot, evaluate value and error, console, network, dialog,
// action), nor the audit trail or the server's log, holds the value: the
// placeholder stands where it was. Typing it into a page of another origin
// is refused, naming the placeholder, with nothing typed.
func TestSecretsNeverReachTheAgent(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browser
	needChromium(t)
	pages := map[string]string{"/": echoPage, "/echo": "ok"}
	bound, other := fixture(t, pages), fixture(t, pages)
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{
		args: []string{"--allow", bound.URL, "--allow", other.URL, "--secret", "PW=file:" + file + "@" + bound.URL, "--secret", "TOKEN=env:WC_TOKEN@" + bound.URL},
		env:  []string{"WC_TOKEN=tok-9f3b-secret"},
	})
	const ph = "{{secret.PW}}"
	if tools := s.toolDesc("browser_type"); !strings.Contains(tools, ph) {
		t.Errorf("browser_type's description does not name the placeholders: %q", tools)
	}
	s.ok("browser_navigate", map[string]any{"url": bound.URL + "/"})
	typed := s.call("browser_type", map[string]any{"target": "#f", "text": ph})
	if typed.isError {
		t.Fatalf("typing the placeholder: %s", typed.text)
	}
	// The page got the value: its own script compares it.
	check := s.ok("browser_evaluate", map[string]any{"expression": "f.value === " + jsString(secretValue) + " ? 'same' : 'different'"})
	if check["value"] != "same" {
		t.Fatalf("the field holds something else: %v", check)
	}
	var seen []string
	seen = append(seen, typed.text)
	snap := s.call("browser_snapshot", nil)
	seen = append(seen, snap.text)
	if !strings.Contains(snap.text, "you typed "+ph) || !strings.Contains(snap.text, "title "+ph) {
		t.Errorf("the snapshot does not show the placeholder where the value is:\n%s", snap.text)
	}
	value := s.call("browser_evaluate", map[string]any{"expression": "[f.value, document.title, out.textContent]"})
	seen = append(seen, value.text)
	if !strings.Contains(value.text, ph) {
		t.Errorf("evaluate: %s", value.text)
	}
	thrown := s.call("browser_evaluate", map[string]any{"expression": "(() => { throw new Error('bad ' + f.value) })()"})
	seen = append(seen, thrown.text)
	if !thrown.isError || !strings.Contains(thrown.text, ph) {
		t.Errorf("an error carrying the value: %s", thrown.text)
	}
	var console, network result
	waitfor.Until(t, 10*time.Second, "the console and the request are logged", func() bool {
		console = s.call("browser_console_messages", nil)
		network = s.call("browser_network_requests", nil)
		return strings.Contains(console.text, ph) && strings.Contains(network.text, "/echo?v="+ph)
	})
	seen = append(seen, console.text, network.text)
	click := s.call("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": "Show"}})
	seen = append(seen, click.text)
	var dialog result
	waitfor.Until(t, 10*time.Second, "the alert is reported", func() bool {
		dialog = s.call("browser_handle_dialog", nil)
		return strings.Contains(dialog.text, "dialog") && !strings.Contains(dialog.text, "no dialog")
	})
	seen = append(seen, dialog.text)
	if !strings.Contains(dialog.text, "typed "+ph) {
		t.Errorf("the alert as reported: %s", dialog.text)
	}
	s.ok("browser_handle_dialog", map[string]any{"accept": true})
	// A password field is masked in a screenshot: its box is grey.
	s.ok("browser_fill_form", map[string]any{"fields": []any{map[string]any{"name": "pw", "type": "textbox", "target": "#pw", "value": "{{secret.TOKEN}}"}}})
	box := s.ok("browser_evaluate", map[string]any{"expression": "(() => { const r = pw.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"})
	shot := s.call("browser_take_screenshot", nil)
	img, ok := shot.raw.Content[0].(*sdk.ImageContent)
	if shot.isError || !ok {
		t.Fatalf("screenshot: %s", shot.text)
	}
	pic, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	xy, _ := box["value"].([]any)
	if len(xy) != 2 {
		t.Fatalf("the field's centre: %v", box)
	}
	x, _ := xy[0].(float64)
	y, _ := xy[1].(float64)
	if r, g, b, _ := pic.At(int(x), int(y)).RGBA(); r>>8 != 0x80 || g>>8 != 0x80 || b>>8 != 0x80 {
		t.Errorf("the password field's centre is %d,%d,%d in the screenshot, want the mask's grey", r>>8, g>>8, b>>8)
	}
	// Another origin: refused by placeholder, nothing typed.
	s.ok("browser_navigate", map[string]any{"url": other.URL + "/"})
	ref := s.refused("browser_type", map[string]any{"target": "#f", "text": "x" + ph}, fsm.OriginDenied)
	if !strings.Contains(ref.Detail, ph) || strings.Contains(ref.Detail, bound.URL) {
		t.Errorf("the refusal: %+v", ref)
	}
	if v := s.ok("browser_evaluate", map[string]any{"expression": "f.value"}); v["value"] != "" {
		t.Errorf("something was typed on the unbound origin: %v", v)
	}
	s.refused("browser_fill_form", map[string]any{"fields": []any{map[string]any{"name": "f", "type": "textbox", "target": "#f", "value": "{{secret.TOKEN}}"}}}, fsm.OriginDenied)
	s.refused("browser_type", map[string]any{"target": "#f", "text": "{{secret.NOPE}}"}, fsm.InvalidArgument)
	_, audit := auditRecords(t, s.state)
	s.mu.Lock()
	all := strings.Join(append(seen, s.seen...), "\n")
	s.mu.Unlock()
	for _, form := range []string{secretValue, url.QueryEscape(secretValue), url.PathEscape(secretValue), "Hunt3r2", "tok-9f3b-secret"} {
		noSecrets(t, "what the agent read", all, form)
		noSecrets(t, "the audit trail", audit, form)
		noSecrets(t, "the server's log", s.stderr.String(), form)
	}
}

// toolDesc is a listed tool's description.
func (s *server) toolDesc(name string) string {
	s.t.Helper()
	list, err := s.cs.ListTools(s.t.Context(), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == name {
			return tool.Description
		}
	}
	return ""
}

func jsString(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(v) + "'"
}

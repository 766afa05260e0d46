package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// frameSecret is what the denied frames hold, log and type into; it must
// never reach the agent.
const frameSecret = "FRAME-SECRET-31c7"

// deniedFrameServer serves a page that holds the secret, logs it, and
// reports every key it receives to its own server (a key log the test
// reads): so a key delivered into the frame is seen even when the agent is
// told nothing.
type deniedFrameServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []string
}

func newDeniedFrameServer(t *testing.T) *deniedFrameServer {
	d := &deniedFrameServer{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/key" {
			d.mu.Lock()
			d.keys = append(d.keys, r.URL.Query().Get("k"))
			d.mu.Unlock()
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>%[1]s</title><body style="background:#ff00ff">
<p>%[1]s</p><input id="in" aria-label="secret box" value="%[1]s"><button>%[1]s</button>
<script>console.log(%[2]q); fetch("/log?%[1]s");
addEventListener("keydown", e => fetch("/key?k=" + encodeURIComponent(e.key)));
</script>`, frameSecret, "console "+frameSecret)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *deniedFrameServer) keyLog() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.keys...)
}

// TestDeniedFramesInAttachedBrowser: the person's tab on the allowed origin
// embeds a same-site denied frame (another port) and a cross-site one
// (localhost). Through MCP, with --allow naming only the allowed origin,
// no verb returns the frames' secret — snapshot, console, network, a
// semantic target that names it — and a key press while the page has put
// focus inside a denied frame is refused and never delivered there (the
// frame's own key log stays empty).
func TestDeniedFramesInAttachedBrowser(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	u := startUsersChrome(t)
	same, cross := newDeniedFrameServer(t), newDeniedFrameServer(t)
	crossURL := strings.Replace(cross.srv.URL, "127.0.0.1", "localhost", 1)
	a := fixture(t, map[string]string{"/": fmt.Sprintf(`<!doctype html><title>allowed tab</title>
<p>the person's allowed page</p><button onclick="document.getElementById('f1').focus()">focus frame</button>
<iframe id="f1" src="%s/"></iframe><iframe id="f2" src="%s/"></iframe>`, same.srv.URL, crossURL)})
	u.openTab(t, a.URL+"/")
	var asked atomic.Int32
	var summary atomic.Value
	s := attachServer(t, u, strings.TrimPrefix(a.URL, "http://"), allowAnswer(&asked, &summary))
	s.ok("browser_attach", map[string]any{"candidate": "chromium"})
	page := ""
	for _, tab := range s.ok("browser_tabs", map[string]any{"action": "list"})["tabs"].([]any) {
		if tm := tab.(map[string]any); tm["url"] == a.URL+"/" {
			page = tm["page"].(string)
		}
	}
	if page == "" {
		t.Fatal("the allowed tab is not listed")
	}
	var seen []string
	look := func(tool string, args map[string]any) result {
		args["page"] = page
		r := s.call(tool, args)
		body, _ := json.Marshal(r.body)
		seen = append(seen, r.text+string(body))
		return r
	}
	snap := look("browser_snapshot", map[string]any{})
	if !strings.Contains(snap.text+fmt.Sprint(snap.body), "allowed page") {
		t.Fatalf("the allowed content is missing: %s", snap.text)
	}
	look("browser_console_messages", map[string]any{})
	look("browser_network_requests", map[string]any{})
	if r := look("browser_click", map[string]any{"target": map[string]any{"role": "button", "name": frameSecret}}); r.refusal() == nil {
		t.Fatalf("a button inside a denied frame was clicked: %s", r.text)
	}
	look("browser_take_screenshot", map[string]any{})
	// The page moves focus into the same-site denied frame; a key press
	// without a target would land there.
	s.ok("browser_click", map[string]any{"page": page, "target": map[string]any{"role": "button", "name": "focus frame"}})
	if r := look("browser_press_key", map[string]any{"key": "x"}); r.refusal() == nil {
		t.Fatalf("a key was pressed into a denied frame: %s", r.text)
	}
	if r := look("browser_cdp", map[string]any{"method": "Input.dispatchKeyEvent", "params": map[string]any{"type": "keyDown", "key": "y"}}); !r.isError {
		t.Fatalf("raw input was sent to a page of the person's browser: %s", r.text)
	} else if ref := r.refusal(); ref == nil || (ref.Code != fsm.PolicyDenied) {
		t.Fatalf("raw input refused as %v, want %s", ref, fsm.PolicyDenied)
	}
	for _, out := range seen {
		if strings.Contains(out, frameSecret) {
			t.Fatalf("the denied frames' secret reached the agent: %.300s", out)
		}
	}
	if keys := append(same.keyLog(), cross.keyLog()...); len(keys) != 0 {
		t.Fatalf("keys were delivered into a denied frame: %q", keys)
	}
}

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// TestBridgeFromTheCLIAndAnMCPClient is the "done when" on a
// clean state root: `webcodex install-bridge` into a test profile, the
// unpacked extension in headless Chromium, a tab shared from its popup and
// driven with `webcodex discover`, `attach --offer` and the page verbs,
// then a second shared tab attached and read by an MCP client
// (`webcodex mcp --runner`) through browser_discover and browser_attach
// {offer}.
func TestBridgeFromTheCLIAndAnMCPClient(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	udd := filepath.Join(root, "profile")
	if err := platform.EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	host := chromiumtest.BuildBridgeHost(t, root)
	var inst struct {
		Action   string `json:"action"`
		Manifest string `json:"manifest"`
		Origin   string `json:"origin"`
	}
	e.json(&inst, "install-bridge", "--user-data-dir", udd, "--host", host)
	if inst.Action != "installed" || inst.Manifest != "com.webcodex.bridge.json" || inst.Origin != "chrome-extension://"+chromiumtest.ExtensionID+"/" {
		t.Fatalf("install-bridge = %+v", inst)
	}
	var st localapi.BridgeStatus
	e.json(&st, "bridge", "status") // starts the Runner, which opens the bridge
	if !st.Installed || !st.Listening {
		t.Fatalf("bridge status = %+v", st)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>%s</title><h1>%s</h1>
<label>Name <input id="name"></label>
<button onclick="document.getElementById('out').textContent = 'paid by ' + document.getElementById('name').value">Pay</button>
<p id="out"></p>`, strings.Trim(r.URL.Path, "/"), strings.Trim(r.URL.Path, "/"))
	}))
	t.Cleanup(srv.Close)
	eb := chromiumtest.StartWithExtension(t, udd, e.state)

	offerFor := func(seen map[string]bool) localapi.BridgeOffer {
		t.Helper()
		var found localapi.BridgeOffer
		waitfor.Until(t, chromiumtest.ExtensionWait, "the shared tab's offer", func() bool {
			var d localapi.DiscoverResult
			e.json(&d, "discover")
			for _, o := range d.Offers {
				if !seen[o.ID] {
					found = o
					return true
				}
			}
			return false
		})
		seen[found.ID] = true
		return found
	}
	seen := map[string]bool{}

	// The CLI.
	tab, _ := eb.OpenTab(srv.URL+"/Checkout", "Checkout")
	if got := eb.Popup("share", tab); got["ok"] != true {
		t.Fatalf("Share = %v", got)
	}
	offer := offerFor(seen)
	if offer.Origin != srv.URL || offer.Title != "Checkout" {
		t.Fatalf("discover shows %+v", offer)
	}
	var att localapi.AttachResult
	e.json(&att, "attach", "--offer", offer.ID, "--allow", "127.0.0.1")
	if len(att.Browser.Pages) != 1 || att.Browser.Via != "extension" {
		t.Fatalf("attach --offer = %+v", att.Browser)
	}
	page := att.Browser.Pages[0].ID
	if code, out, errs := e.run("snapshot", page); code != 0 || !strings.Contains(out, "Checkout") {
		t.Fatalf("snapshot: exit %d %q %s", code, out, errs)
	}
	for _, args := range [][]string{{"fill", page, "--label", "Name", "--value", "Ada"}, {"click", page, "--role", "button", "--name", "Pay"}} {
		if code, _, errs := e.run(args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
	}
	if code, out, _ := e.run("read", page); code != 0 || !strings.Contains(out, "paid by Ada") {
		t.Fatalf("read after the click: exit %d %q", code, out)
	}
	e.refused("not_found", "attach", "--offer", offer.ID, "--allow", "127.0.0.1") // consumed once

	// An MCP client on the same Runner.
	tab2, _ := eb.OpenTab(srv.URL+"/Second", "Second")
	eb.Popup("share", tab2)
	second := offerFor(seen)
	cmd := exec.Command(binary, "mcp", "--runner", "--allow", "127.0.0.1", "--allow-attach")
	cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+e.state)
	client := sdk.NewClient(&sdk.Implementation{Name: "webcodex-bridge-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool := func(name string, args any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var body map[string]any
		json.Unmarshal(b, &body)
		if res.IsError {
			t.Fatalf("%s refused: %s", name, b)
		}
		return body
	}
	d := tool("browser_discover", map[string]any{})
	b, _ := json.Marshal(d)
	if !strings.Contains(string(b), second.ID) || !strings.Contains(string(b), `"title":"Second"`) {
		t.Fatalf("browser_discover does not list the shared tab: %s", b)
	}
	tool("browser_attach", map[string]any{"offer": second.ID})
	snap := tool("browser_snapshot", map[string]any{})
	if b, _ := json.Marshal(snap); !strings.Contains(string(b), "Second") {
		t.Fatalf("browser_snapshot of the shared tab: %.300s", b)
	}
	st2 := tool("browser_status", map[string]any{})
	if b, _ := json.Marshal(st2); !strings.Contains(string(b), `"browser_extension_bridge":true`) {
		t.Fatalf("the capability bit is not set: %.400s", b)
	}
}

package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/persontty"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// usersChrome is "the person's Chromium": started by the test on a
// disposable profile that sits where Chromium keeps its default profile
// ($XDG_CONFIG_HOME/chromium), with its debugging endpoint on.
type usersChrome struct {
	proc   *platform.Process
	config string // the XDG_CONFIG_HOME the server gets
	port   int
}

func startUsersChrome(t *testing.T) *usersChrome {
	t.Helper()
	needChromium(t)
	config := filepath.Join(t.TempDir(), "config")
	profile := filepath.Join(config, "chromium")
	u := chromiumtest.StartUsers(t, profile)
	proc, port := u.Proc, u.Port
	return &usersChrome{proc: proc, config: config, port: port}
}

// openTab opens a tab as the person would, through a separate connection,
// and returns its CDP target id.
func (u *usersChrome) openTab(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, err := cdp.DialWebSocket(ctx, u.proc.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	res, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return string(res.TargetID)
}

// navigate takes a tab somewhere, as the person would.
func (u *usersChrome) navigate(t *testing.T, id, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, err := cdp.DialWebSocket(ctx, u.proc.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := cdp.NewConn(sock, cdp.ConnOptions{})
	defer c.Close()
	sess, err := c.AttachTarget(ctx, target.ID(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Call(ctx, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
}

func (u *usersChrome) alive() bool {
	select {
	case <-u.proc.Exited():
		return false
	default:
		return true
	}
}

// attachServer starts a server allowed to attach to u, with allow as its
// allowlist.
func attachServer(t *testing.T, u *usersChrome, allow string, elicit func(*sdk.ElicitRequest) (*sdk.ElicitResult, error), extra ...string) *server {
	args := append([]string{"--allow-attach", "--allow", allow}, extra...)
	return startServer(t, serverOpts{args: args, env: []string{"XDG_CONFIG_HOME=" + u.config}, elicit: elicit})
}

func allowAnswer(asked *atomic.Int32, summary *atomic.Value) func(*sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked.Add(1)
		summary.Store(req.Params.Message)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}
}

// TestAttachThroughHostApproval: the person's browser is discovered,
// attached after the person allows it through the host's elicitation, shows
// only the tabs on the allowed origins, refuses an unauthorized tab's id
// exactly like a made-up one, keeps evaluate and raw CDP off, and detaches
// without closing anything.
func TestAttachThroughHostApproval(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	u := startUsersChrome(t)
	a := fixture(t, map[string]string{"/": `<!doctype html><title>allowed tab</title><p>the person's allowed page</p>`})
	b := fixture(t, map[string]string{"/": `<!doctype html><title>private tab</title><p>PRIVATE-TAB-TEXT</p>`})
	allowedTab := u.openTab(t, a.URL+"/")
	hidden := u.openTab(t, localhostURL(b)+"/")
	var asked atomic.Int32
	var summary atomic.Value
	s := attachServer(t, u, strings.TrimPrefix(a.URL, "http://"), allowAnswer(&asked, &summary))

	d := s.ok("browser_discover", nil)
	cands, _ := d["discover"].(map[string]any)["attachCandidates"].([]any)
	ready := false
	for _, c := range cands {
		cm := c.(map[string]any)
		if cm["name"] == "chromium" && cm["state"] == "ready" {
			ready = true
		}
	}
	if !ready || d["server"].(map[string]any)["attach_allowed"] != true || d["server"].(map[string]any)["host_approval"] != true {
		t.Fatalf("discover = %v", d)
	}

	res := s.ok("browser_attach", map[string]any{"candidate": "chromium"})
	if asked.Load() != 1 {
		t.Fatalf("the host was asked %d times, want 1", asked.Load())
	}
	if msg, _ := summary.Load().(string); !strings.Contains(msg, "Attach webcodex") || !strings.Contains(msg, "Allow webcodex to attach") {
		t.Fatalf("the question the person saw: %q", msg)
	}
	if str(res, "attach", "browser", "mode") != "attached_external" {
		t.Fatalf("attach = %v", res)
	}
	browserID := str(res, "attach", "browser", "browser")

	tabs := s.ok("browser_tabs", map[string]any{"action": "list"})
	page := ""
	for _, tab := range tabs["tabs"].([]any) {
		switch tm := tab.(map[string]any); tm["url"] {
		case a.URL + "/":
			page = tm["page"].(string)
		case "about:blank": // the person's new tab: about:blank is allowed with an allowlist
		default:
			t.Fatalf("an unauthorized tab is listed: %v", tabs)
		}
	}
	if page == "" {
		t.Fatalf("the allowed tab is not listed: %v", tabs)
	}
	if text := s.call("browser_snapshot", map[string]any{"page": page}).text; !strings.Contains(text, "allowed page") {
		t.Fatalf("snapshot of the allowed tab: %s", text)
	}

	// An unauthorized tab's id and made-up ids are refused identically.
	for _, tool := range []string{"browser_snapshot", "browser_take_screenshot", "browser_console_messages"} {
		want := s.refused(tool, map[string]any{"page": "p-0123456789abcdef"}, fsm.NotFound)
		for _, id := range []string{hidden, "p-" + strings.ToLower(hidden[:16]), "made-up"} {
			got := s.refused(tool, map[string]any{"page": id}, fsm.NotFound)
			if !alike(got, want) || got.Page != id {
				t.Errorf("%s: unauthorized id refused as %+v, unknown id as %+v", tool, got, want)
			}
		}
	}
	wantSel := s.refused("browser_tabs", map[string]any{"action": "select", "page": "p-0123456789abcdef"}, fsm.NotFound)
	if got := s.refused("browser_tabs", map[string]any{"action": "select", "page": hidden}, fsm.NotFound); !alike(got, wantSel) {
		t.Errorf("select: %+v vs %+v", got, wantSel)
	}

	// The person takes the allowed tab elsewhere: its id is now refused
	// like an unknown one (not "left", which would name where they went),
	// and it is not navigated back.
	u.navigate(t, allowedTab, localhostURL(b)+"/")
	want := s.refused("browser_snapshot", map[string]any{"page": "p-0123456789abcdef"}, fsm.NotFound)
	// The person's navigation has no event the test can wait on here.
	var r result
	if !waitfor.Start(10 * time.Second).Wait(func() bool {
		r = s.call("browser_snapshot", map[string]any{"page": page})
		ref := r.refusal()
		return ref != nil && alike(ref, want)
	}) {
		t.Fatalf("the person's tab that left is still readable or refused differently: %s", r.text)
	}
	for _, tool := range []string{"browser_navigate", "browser_click", "browser_take_screenshot"} {
		args := map[string]any{"page": page, "url": a.URL + "/", "target": map[string]any{"css": "p"}}
		if tool != "browser_navigate" {
			delete(args, "url")
		}
		if tool == "browser_take_screenshot" || tool == "browser_navigate" {
			delete(args, "target")
		}
		if got := s.refused(tool, args, fsm.NotFound); !alike(got, want) {
			t.Errorf("%s on the person's tab that left: %+v, want %+v", tool, got, want)
		}
	}
	page = str(s.ok("browser_tabs", map[string]any{"action": "new", "url": a.URL + "/"}), "tab", "page")

	// Evaluate and raw CDP are off for an attached browser without
	// --allow-evaluate.
	s.refused("browser_evaluate", map[string]any{"page": page, "expression": "1"}, fsm.PolicyDenied)
	s.refused("browser_cdp", map[string]any{"page": page, "method": "Runtime.evaluate", "params": map[string]any{"expression": "1"}}, fsm.PolicyDenied)
	// Another attach of the same browser is refused, not re-asked.
	s.refused("browser_attach", map[string]any{"candidate": "chromium"}, fsm.LeaseHeld)
	if asked.Load() != 1 {
		t.Fatalf("the host was asked again")
	}

	closed := s.ok("browser_close", map[string]any{"browser": browserID})
	if closed["teardown"] != "detached" || !u.alive() {
		t.Fatalf("close = %v, browser alive %v", closed, u.alive())
	}

	recs, audit := auditRecords(t, s.state)
	for _, want := range []map[string]string{
		{"tool": "browser_attach", "action": "attach", "verdict": string(fsm.ConsentRequired)},
		{"tool": "browser_attach", "action": "approve_from_host", "outcome": "ok"},
		{"tool": "browser_attach", "action": "attach", "verdict": "allowed", "outcome": "ok", "browser": browserID},
		{"tool": "browser_close", "action": "close", "browser": browserID},
	} {
		if !hasRecord(recs, want) {
			t.Errorf("no audit record %v in\n%s", want, audit)
		}
	}
	s.mu.Lock()
	seen := strings.Join(s.seen, "\n")
	s.mu.Unlock()
	secrets := []string{"PRIVATE-TAB-TEXT", "private tab", localhostURL(b), fmt.Sprintf(":%d", u.port), "/devtools/browser/", cookieSecret, u.config}
	noSecrets(t, "the tool results", seen, secrets...)
	noSecrets(t, "the audit trail", audit, secrets...)
	noSecrets(t, "the server's log", s.stderr.String(), secrets...)
}

// TestAttachEvaluateAllowed: --allow-evaluate turns evaluate and raw page
// CDP on for the attachment; the withheld commands stay withheld.
func TestAttachEvaluateAllowed(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	u := startUsersChrome(t)
	a := fixture(t, map[string]string{"/": `<!doctype html><title>allowed tab</title>`})
	u.openTab(t, a.URL+"/")
	var asked atomic.Int32
	var summary atomic.Value
	s := attachServer(t, u, strings.TrimPrefix(a.URL, "http://"), allowAnswer(&asked, &summary), "--allow-evaluate")
	res := s.ok("browser_attach", map[string]any{"candidate": "chromium"})
	if msg, _ := summary.Load().(string); !strings.Contains(msg, "evaluation: yes") {
		t.Fatalf("the person was not told evaluate is on: %q", msg)
	}
	page := ""
	for _, tab := range s.ok("browser_tabs", map[string]any{"action": "list", "browser": str(res, "attach", "browser", "browser")})["tabs"].([]any) {
		if tm := tab.(map[string]any); tm["url"] == a.URL+"/" {
			page = tm["page"].(string)
		}
	}
	s.ok("browser_wait_for", map[string]any{"page": page, "condition": "load"})
	if v := s.ok("browser_evaluate", map[string]any{"page": page, "expression": "document.title"}); v["value"] != "allowed tab" {
		t.Fatalf("evaluate = %v", v)
	}
	s.ok("browser_cdp", map[string]any{"page": page, "method": "Runtime.evaluate", "params": map[string]any{"expression": "1+1"}})
	s.refused("browser_cdp", map[string]any{"page": page, "method": "Network.getAllCookies"}, fsm.PolicyDenied)
}

// TestHostApprovalRefusals: a person who declines in the host, a client
// without elicitation (then the terminal command, through a real pty), a
// forged answer, and a server without --allow-attach.
func TestHostApprovalRefusals(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browsers
	u := startUsersChrome(t)
	a := fixture(t, map[string]string{"/": `<!doctype html><title>allowed tab</title>`})
	u.openTab(t, a.URL+"/")
	allow := strings.TrimPrefix(a.URL, "http://")

	t.Run("declined", func(t *testing.T) {
		s := attachServer(t, u, allow, func(*sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, nil
		})
		s.refused("browser_attach", map[string]any{"candidate": "chromium"}, fsm.ConsentRevoked)
		s.refused("browser_tabs", map[string]any{"action": "new"}, fsm.NotFound)
	})

	t.Run("older protocol: the host is asked by elicitation/create", func(t *testing.T) {
		var asked atomic.Int32
		var summary atomic.Value
		s := startServer(t, serverOpts{args: []string{"--allow-attach", "--allow", allow}, env: []string{"XDG_CONFIG_HOME=" + u.config},
			elicit: allowAnswer(&asked, &summary), protocol: "2025-06-18"})
		if v := s.cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
			t.Fatalf("negotiated %s", v)
		}
		res := s.ok("browser_attach", map[string]any{"candidate": "chromium"})
		if asked.Load() != 1 || str(res, "attach", "browser", "mode") != "attached_external" {
			t.Fatalf("asked %d times, attach = %v", asked.Load(), res)
		}
		s.ok("browser_close", nil)
	})

	t.Run("forged answer", func(t *testing.T) {
		s := attachServer(t, u, allow, func(*sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{
			Name: "browser_attach", Arguments: map[string]any{"candidate": "chromium"},
			RequestState:   "00112233445566778899aabbccddeeff",
			InputResponses: sdk.InputResponseMap{askInput: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if ref := s.decode("browser_attach", res).refusal(); ref == nil || ref.Code != fsm.ApprovalInvalid {
			t.Fatalf("a forged answer = %+v, want %s", ref, fsm.ApprovalInvalid)
		}
		// And an argument cannot approve: unknown arguments are refused.
		s.refused("browser_attach", map[string]any{"candidate": "chromium", "approve": true}, fsm.InvalidArgument)
	})

	t.Run("no elicitation, then the terminal", func(t *testing.T) {
		s := attachServer(t, u, allow, nil)
		ref := s.refused("browser_attach", map[string]any{"candidate": "chromium"}, fsm.ConsentRequired)
		if !strings.Contains(ref.Detail, "webcodex mcp approve ") {
			t.Fatalf("the refusal does not name the command: %q", ref.Detail)
		}
		f := strings.Fields(ref.Detail)
		id := strings.TrimSuffix(f[2], ":")
		// The same id comes back while it is pending.
		if again := s.refused("browser_attach", map[string]any{"candidate": "chromium"}, fsm.ConsentRequired); !strings.Contains(again.Detail, id) {
			t.Fatalf("a second attach made a new request: %q", again.Detail)
		}
		// Without a terminal the command refuses.
		cmd := exec.Command(binary, "mcp", "approve", id)
		cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+s.state)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), string(fsm.ApprovalInvalid)) {
			t.Fatalf("approve without a terminal: %v\n%s", err, out)
		}
		approveAtTerminal(t, s.state, id)
		res := s.ok("browser_attach", map[string]any{"candidate": "chromium"})
		if str(res, "attach", "browser", "mode") != "attached_external" {
			t.Fatalf("attach after the terminal approval = %v", res)
		}
	})

	t.Run("attach not allowed", func(t *testing.T) {
		s := startServer(t, serverOpts{env: []string{"XDG_CONFIG_HOME=" + u.config}})
		s.refused("browser_attach", map[string]any{"candidate": "chromium"}, fsm.ScopeDenied)
		if d := s.ok("browser_discover", nil); d["server"].(map[string]any)["attach_allowed"] != false {
			t.Fatalf("discover says attach is allowed: %v", d)
		}
	})
}

// approveAtTerminal runs `webcodex mcp approve ID` in the person's own
// terminal and types "allow", as the person would. The terminal is not a
// process of this test: the test is the MCP client (the agent's host), and
// the Runner refuses a terminal the asking client drives.
func approveAtTerminal(t *testing.T, state, id string) {
	t.Helper()
	term := persontty.Start(t, append(os.Environ(), "WEBCODEX_STATE_DIR="+state), binary, "mcp", "approve", id)
	transcript := term.WaitFor(`Type "allow"`, 30*time.Second)
	if !strings.Contains(transcript, "Attach webcodex") {
		t.Fatalf("the person did not see the summary:\n%s", transcript)
	}
	term.Type("allow\n")
	if transcript = term.Wait(30 * time.Second); !strings.Contains(transcript, "approved. The agent") {
		t.Fatalf("approve:\n%s", transcript)
	}
}

// alike reports whether two refusals say the same, apart from the page or
// browser id each names: that is the caller's own argument, echoed, so an
// unauthorized id and an unknown one still look alike.
func alike(a, b *fsm.Refusal) bool {
	x, y := *a, *b
	x.Page, y.Page, x.Browser, y.Browser = "", "", "", ""
	return x == y
}

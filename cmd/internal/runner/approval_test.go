package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/persontty"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/platform"
)

// helperEnv turns this test binary into a local API client for the
// approval tests (TestApprovalHelperProcess): another process, so the
// Runner sees another peer, another session or another terminal.
const helperEnv = "WEBCODEX_APPROVAL_HELPER"

// serveLocal serves r's local API on a private socket, as `webcodex serve`
// does, and returns its state directory.
func serveLocal(t *testing.T, r *Runner) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wcx-api-") // short: a unix socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := platform.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	ln, err := localapi.Listen(dir)
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
	t.Cleanup(func() { cancel(); wg.Wait() })
	return dir
}

func apiAttach(dir string, req localapi.AttachRequest) (localapi.AttachResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return localapi.Attach.Call(ctx, localapi.NewClient(dir), req)
}

// helperResult is what a helper process prints.
type helperResult struct {
	Browser string `json:"browser,omitempty"`
	Code    string `json:"code,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// TestApprovalHelperProcess is not a test: with helperEnv set, it is the
// body of a helper process (attach: one local API attach; approve or deny:
// `webcodex approve`'s own code on this process's terminal).
func TestApprovalHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("the body of a helper process for the approval tests")
	}
	dir := os.Getenv("WEBCODEX_STATE_DIR")
	var out helperResult
	var err error
	switch mode {
	case "attach":
		var req localapi.AttachRequest
		json.Unmarshal([]byte(os.Getenv("WEBCODEX_HELPER_REQUEST")), &req)
		var res localapi.AttachResult
		res, err = apiAttach(dir, req)
		out.Browser = res.Browser.ID
	case "approve", "deny":
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = cmdutil.RunApproval(ctx, os.Stdin, os.Stdout, localapi.NewClient(dir), os.Getenv("WEBCODEX_HELPER_ID"), mode == "deny", "")
	case "approve-empty": // a program on the person's terminal answering without the password
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err = localapi.Approve.Call(ctx, localapi.NewClient(dir), localapi.ApprovalRequest{ID: os.Getenv("WEBCODEX_HELPER_ID")})
	}
	if ref, ok := fsm.AsRefusal(err); ok {
		out.Code, out.Detail = string(ref.Code), ref.Detail
	} else if err != nil {
		out.Code, out.Detail = "failure", err.Error()
	}
	b, _ := json.Marshal(out)
	fmt.Printf("\nRESULT %s\n", b)
	os.Exit(0)
}

func helperCmd(dir, mode string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestApprovalHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "WEBCODEX_STATE_DIR="+dir)
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

// parseResult finds the helper's RESULT line in its output.
func parseResult(t *testing.T, out string) helperResult {
	t.Helper()
	_, line, ok := strings.Cut(out, "RESULT ")
	if !ok {
		t.Fatalf("the helper printed no result:\n%s", out)
	}
	line, _, _ = strings.Cut(line, "\n")
	var res helperResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &res); err != nil {
		t.Fatalf("helper result %q: %v", line, err)
	}
	return res
}

// helperAttach attaches from another process; newSession puts it in a
// terminal session of its own, as another terminal or program would be.
func helperAttach(t *testing.T, dir string, req localapi.AttachRequest, newSession bool) helperResult {
	t.Helper()
	b, _ := json.Marshal(req)
	cmd := helperCmd(dir, "attach", "WEBCODEX_HELPER_REQUEST="+string(b))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: newSession}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("attach helper: %v\n%s", err, out)
	}
	return parseResult(t, string(out))
}

func closeBrowser(t *testing.T, r *Runner, id string) {
	t.Helper()
	if _, err := r.Close(context.Background(), localapi.BrowserRequest{Browser: id}); err != nil {
		t.Fatalf("close %s: %v", id, err)
	}
}

// TestGrantCoversExactlyWhatWasApproved: the summary the person approves
// names the canonical allowlist, the evaluate switch and the scopes; an
// attach asking for the same or less reuses the grant, and one asking for
// another origin, evaluate or more scopes needs a new approval, which
// names what changed.
func TestGrantCoversExactlyWhatWasApproved(t *testing.T) {
	h := newHarness(t)
	u := startUsersChrome(t)
	srv := fixtureServer(t, new(atomic.Int32))
	u.openTab(t, srv.URL+"/")
	dir := serveLocal(t, h.r)

	base := localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL, "Shop.Example.com", "*.dropped"},
		Scopes: []string{"browser:control", "browser:read"}}
	_, err := apiAttach(dir, base)
	id := requestID(t, err)
	info, err := h.r.broker.Info(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"allowed: " + srv.URL + ", shop.example.com.", "Raw JavaScript evaluation: no", "Scopes: browser:read, browser:control", "Asked by: "} {
		if !strings.Contains(info.Summary, want) {
			t.Errorf("the summary does not say %q:\n%s", want, info.Summary)
		}
	}
	if err := h.r.broker.Approve(id); err != nil {
		t.Fatal(err)
	}
	res, err := apiAttach(dir, base)
	if err != nil {
		t.Fatalf("attach after approval: %v", err)
	}
	closeBrowser(t, h.r, res.Browser.ID)

	narrower := map[string]localapi.AttachRequest{
		"the same, spelled differently": {ProfileDir: u.profile, Allow: []string{"shop.example.com", srv.URL}, Scopes: []string{"browser:read", "browser:control", "browser:read"}},
		"fewer origins":                 {ProfileDir: u.profile, Allow: []string{srv.URL}, Scopes: base.Scopes},
		"a subdomain":                   {ProfileDir: u.profile, Allow: []string{"https://cart.shop.example.com"}, Scopes: base.Scopes},
		"no origins":                    {ProfileDir: u.profile, Scopes: base.Scopes},
		"fewer scopes":                  {ProfileDir: u.profile, Allow: base.Allow, Scopes: []string{"browser:control"}},
	}
	for name, req := range narrower {
		res, err := apiAttach(dir, req)
		if err != nil {
			t.Fatalf("%s: %v, want the grant reused", name, err)
		}
		closeBrowser(t, h.r, res.Browser.ID)
	}

	wider := map[string]struct {
		req  localapi.AttachRequest
		says string
	}{
		"another origin":       {localapi.AttachRequest{ProfileDir: u.profile, Allow: append([]string{"third.example.org"}, base.Allow...), Scopes: base.Scopes}, "third.example.org"},
		"a wider origin":       {localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{"example.com"}, Scopes: base.Scopes}, "allowed: example.com."},
		"evaluate on":          {localapi.AttachRequest{ProfileDir: u.profile, Allow: base.Allow, AllowEvaluate: true, Scopes: base.Scopes}, "Raw JavaScript evaluation: yes"},
		"every scope (as CLI)": {localapi.AttachRequest{ProfileDir: u.profile, Allow: base.Allow}, "Scopes: browser:read, browser:launch, browser:control"},
	}
	for name, w := range wider {
		_, err := apiAttach(dir, w.req)
		wid := requestID(t, err)
		if wid == id {
			t.Fatalf("%s: reused the approved request", name)
		}
		info, err := h.r.broker.Info(wid)
		if err != nil || !strings.Contains(info.Summary, w.says) {
			t.Errorf("%s: the new request does not say %q: %v\n%s", name, w.says, err, info.Summary)
		}
	}
	// Naming the approved request from a wider attach is refused, and
	// leaves nothing consumed: the approved grant still serves base.
	wide := wider["evaluate on"].req
	wide.Request = id
	if _, err := apiAttach(dir, wide); !fsm.IsCode(err, fsm.ApprovalInvalid) && !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("a wider attach naming the used request = %v", err)
	}
	res, err = apiAttach(dir, base)
	if err != nil {
		t.Fatalf("the grant after the wider attempts: %v", err)
	}
	closeBrowser(t, h.r, res.Browser.ID)
}

// TestGrantSessionComesFromTheCaller: a request cannot name its session
// (the field is refused); a local API caller in the same terminal session
// reuses a grant and one in another session needs its own approval; two
// MCP server sessions never share one.
func TestGrantSessionComesFromTheCaller(t *testing.T) {
	h := newHarness(t)
	u := startUsersChrome(t)
	dir := serveLocal(t, h.r)
	ctx := context.Background()
	req := localapi.AttachRequest{ProfileDir: u.profile}

	forged := map[string]any{"profileDir": u.profile, "session": "cli"}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err := localapi.Route[map[string]any, localapi.AttachResult]{Name: localapi.Attach.Name}.Call(cctx, localapi.NewClient(dir), forged)
	cancel()
	if !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("an attach naming its session = %v, want %s", err, fsm.InvalidArgument)
	}

	_, err = apiAttach(dir, req)
	id := requestID(t, err)
	if err := h.r.broker.Approve(id); err != nil {
		t.Fatal(err)
	}
	res, err := apiAttach(dir, req)
	if err != nil {
		t.Fatal(err)
	}
	closeBrowser(t, h.r, res.Browser.ID)

	// Another process in this terminal session: the same caller, as
	// `webcodex attach` run twice in one shell is.
	same := helperAttach(t, dir, req, false)
	if same.Code != "" {
		t.Fatalf("an attach from this session after approval = %+v", same)
	}
	closeBrowser(t, h.r, same.Browser)
	// A process in a session of its own needs its own approval.
	other := helperAttach(t, dir, req, true)
	if other.Code != string(fsm.ConsentRequired) || strings.Contains(other.Detail, id) {
		t.Fatalf("an attach from another session = %+v, want a new approval request", other)
	}

	// Embedded MCP servers: the session is the server's own, set by the
	// server around each tool call.
	a := WithCaller(ctx, Caller{Session: "mcp-a", Tool: "browser_attach"})
	_, err = h.r.Attach(a, req)
	mid := requestID(t, err)
	if err := h.r.broker.Approve(mid); err != nil {
		t.Fatal(err)
	}
	res, err = h.r.Attach(a, req)
	if err != nil {
		t.Fatal(err)
	}
	closeBrowser(t, h.r, res.Browser.ID)
	b := WithCaller(ctx, Caller{Session: "mcp-b", Tool: "browser_attach"})
	if _, err := h.r.Attach(b, req); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("another MCP session reused the grant: %v", err)
	}
}

// approveOnOwnPty runs the approver under a pty this test holds: the test
// is the client that asked, driving the terminal, as an agent running
// `script -c "webcodex approve ID"` would. It types answer at the prompt.
func approveOnOwnPty(t *testing.T, dir, mode, id, answer string) (helperResult, string) {
	t.Helper()
	cmd := helperCmd(dir, mode, "WEBCODEX_HELPER_ID="+id)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var screen strings.Builder
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(f)
		for {
			b, err := r.ReadByte()
			if err != nil {
				return
			}
			mu.Lock()
			screen.WriteByte(b)
			mu.Unlock()
		}
	}()
	if answer != "" {
		go func() { // typed ahead: the terminal buffers it until the prompt reads
			f.Write([]byte(answer))
		}()
	}
	werr := make(chan error, 1)
	go func() { werr <- cmd.Wait() }()
	select {
	case err := <-werr:
		if err != nil {
			t.Fatalf("approver: %v", err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the approver did not finish")
	}
	f.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return parseResult(t, screen.String()), screen.String()
}

// auditApprovals returns the audit's approval records for request id.
func auditApprovals(t *testing.T, r *Runner, id string) []auditRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.opts.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auditchain.Verify(r.opts.StateDir, ""); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	var out []auditRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec auditRecord
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Approval != nil && rec.Approval.Request == id {
			out = append(out, rec)
		}
	}
	return out
}

// TestApprovalTerminalChecks: approve and deny refuse a caller without a
// terminal, and refuse a terminal driven by the client that asked for the
// attach (a pty it holds), saying why and leaving the request pending;
// the person's own terminal answers. Each answer is audited with the
// terminal's name and the processes driving it.
func TestApprovalTerminalChecks(t *testing.T) {
	h := newHarness(t)
	u := startUsersChrome(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "") // restored after the test
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")  // no desktop: the terminal alone
	dir := serveLocal(t, h.r)
	req := localapi.AttachRequest{ProfileDir: u.profile}
	_, err := apiAttach(dir, req)
	id := requestID(t, err)

	// No terminal: pipes.
	for _, mode := range []string{"approve", "deny"} {
		cmd := helperCmd(dir, mode, "WEBCODEX_HELPER_ID="+id)
		cmd.Stdin = strings.NewReader("allow\n")
		out, err := cmd.CombinedOutput()
		if res := parseResult(t, string(out)); err != nil || res.Code != string(fsm.ApprovalInvalid) {
			t.Fatalf("%s without a terminal = %+v, %v", mode, res, err)
		}
	}
	// A terminal this test (the asking client) drives.
	for _, mode := range []string{"approve", "deny"} {
		res, screen := approveOnOwnPty(t, dir, mode, id, "allow\n")
		if res.Code != string(fsm.ApprovalInvalid) || !strings.Contains(res.Detail, "driven by") || !strings.Contains(res.Detail, fmt.Sprintf("pid %d", os.Getpid())) {
			t.Fatalf("%s on a pty the asking client drives = %+v\n%s", mode, res, screen)
		}
		if strings.Contains(screen, "Attach webcodex") {
			t.Fatalf("%s: the summary was shown on a refused terminal:\n%s", mode, screen)
		}
	}
	if info, err := h.r.broker.Info(id); err != nil || info.CodeIssued {
		t.Fatalf("after the refused answers the request is %+v, %v; want it pending", info, err)
	}
	recs := auditApprovals(t, h.r, id)
	refused := 0
	for _, rec := range recs {
		ev := rec.Approval
		if rec.Verdict != string(fsm.ApprovalInvalid) || ev.Terminal == nil {
			continue
		}
		refused++
		if !strings.HasPrefix(ev.Terminal.Device, "pts/") || len(ev.Approver) == 0 || len(ev.Drivers) == 0 || len(ev.Requester) == 0 {
			t.Errorf("refused answer recorded without its terminal or chains: %+v", ev)
		}
		if ev.Drivers[0][0].PID != os.Getpid() {
			t.Errorf("the recorded driver is %+v, want this test (pid %d)", ev.Drivers[0], os.Getpid())
		}
	}
	if refused < 2 {
		t.Fatalf("%d refused terminal answers audited, want 2 or more:\n%+v", refused, recs)
	}

	// The person's own terminal (not started by the asking client).
	term := persontty.Start(t, helperCmd(dir, "approve", "WEBCODEX_HELPER_ID="+id).Env,
		os.Args[0], "-test.run=^TestApprovalHelperProcess$")
	term.WaitFor(`Type "allow"`, 30*time.Second)
	term.Type("allow\n")
	screen := term.Wait(30 * time.Second)
	if res := parseResult(t, screen); res.Code != "" || !strings.Contains(screen, "no one-time code") {
		t.Fatalf("approve at the person's terminal = %+v\n%s", res, screen)
	}
	res, err := apiAttach(dir, req)
	if err != nil {
		t.Fatalf("attach after the person's approval: %v", err)
	}
	closeBrowser(t, h.r, res.Browser.ID)
	var approved *approvalEvidence
	for _, rec := range auditApprovals(t, h.r, id) {
		if rec.Tool == "approve" && rec.Verdict == "allowed" {
			approved = rec.Approval
		}
	}
	if approved == nil || approved.SecondFactor != localapi.SecondFactorNone || approved.Terminal == nil || approved.Drivers[0][0].PID != term.PID() {
		t.Fatalf("the approval's audit record = %+v, want second factor none and the terminal driven by script (pid %d)", approved, term.PID())
	}
	b, _ := json.Marshal(approved)
	if !strings.Contains(string(b), `"comm":"script"`) || !strings.Contains(string(b), `"device":"pts/`) {
		t.Fatalf("the record does not name the terminal and its driver: %s", b)
	}

	// deny: a fresh request, denied from the person's terminal.
	_, err = apiAttach(dir, localapi.AttachRequest{ProfileDir: u.profile, AllowEvaluate: true})
	id2 := requestID(t, err)
	term = persontty.Start(t, helperCmd(dir, "deny", "WEBCODEX_HELPER_ID="+id2).Env,
		os.Args[0], "-test.run=^TestApprovalHelperProcess$")
	screen = term.Wait(30 * time.Second)
	if res := parseResult(t, screen); res.Code != "" || !strings.Contains(screen, "denied.") {
		t.Fatalf("deny at the person's terminal = %+v\n%s", res, screen)
	}
	if _, err := h.r.broker.Info(id2); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("the denied request is still pending: %v", err)
	}
}

// personTerm starts `webcodex approve`'s own code (mode approve or deny)
// on a terminal outside this test's process tree: setsid -f, then
// script's pty, as a daemon an agent double-forked would hold it.
func personTerm(t *testing.T, dir, mode, id string) *persontty.Term {
	t.Helper()
	return persontty.Start(t, helperCmd(dir, mode, "WEBCODEX_HELPER_ID="+id).Env,
		os.Args[0], "-test.run=^TestApprovalHelperProcess$")
}

// TestApprovalLoginPassword: where the person's login has a password, an
// answer needs it. A daemon that is no descendant of the asking client
// (setsid -f, its own pty) runs `webcodex approve` and types "allow": it is
// refused, the word is not echoed, and the request stays pending, bound to
// the password; the right password approves and the attach connects; three
// wrong ones deny a request. The login is real (useradd, chpasswd) and the
// password is checked against its shadow hash by unix_chkpwd. The password
// appears nowhere in the audit or the Runner's log.
func TestApprovalLoginPassword(t *testing.T) {
	const password = "Tr0ub4dor & 3"
	login := persontty.Login(t, password)
	tracecheck.Track(t)
	h := &harness{t: t, dial: &cuttable{}, logs: &logSink{}, account: login}
	h.r = h.newRunner()
	u := startUsersChrome(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS") // no desktop: the password is still asked
	dir := serveLocal(t, h.r)
	req := localapi.AttachRequest{ProfileDir: u.profile}
	_, err := apiAttach(dir, req)
	id := requestID(t, err)
	prompt := "Type the login password of " + login + " to approve"

	// The forger: not a descendant, on a terminal it holds, types "allow".
	term := personTerm(t, dir, "approve", id)
	term.WaitFor(prompt, 30*time.Second)
	term.Type("allow\n")
	screen := term.Wait(30 * time.Second)
	res := parseResult(t, screen)
	if res.Code != string(fsm.ApprovalInvalid) || !strings.Contains(res.Detail, "does not match the login password (2 attempts left)") {
		t.Fatalf("\"allow\" typed in password mode = %+v\n%s", res, screen)
	}
	_, afterPrompt, _ := strings.Cut(screen, prompt)
	if strings.Contains(afterPrompt, "allow") || strings.Contains(screen, `Type "allow"`) {
		t.Fatalf("the password prompt echoed what was typed, or offered \"allow\":\n%s", screen)
	}
	if !strings.Contains(screen, "pam_unix") || strings.Contains(screen, "cannot read your screen") {
		t.Fatalf("the approval screen does not say what the password proves:\n%s", screen)
	}
	info, err := h.r.broker.Info(id)
	if err != nil || !info.PasswordBound || info.AttemptsLeft != 2 {
		t.Fatalf("after the forged answer the request is %+v, %v; want pending, bound to the password, 2 attempts left", info, err)
	}
	if _, err := apiAttach(dir, req); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("attach after the forged answer = %v, want %s", err, fsm.ConsentRequired)
	}
	// An answer through the local API without a password is refused and
	// not counted (the caller is on the person's terminal, so only the
	// missing password refuses it).
	term = personTerm(t, dir, "approve-empty", id)
	if res := parseResult(t, term.Wait(30*time.Second)); res.Code != string(fsm.ApprovalInvalid) || !strings.Contains(res.Detail, "needs the login password") {
		t.Fatalf("an answer without a password = %+v", res)
	}
	if info, _ := h.r.broker.Info(id); info.AttemptsLeft != 2 {
		t.Fatalf("an answer without a password was counted: %+v", info)
	}

	// The person types the password.
	term = personTerm(t, dir, "approve", id)
	term.WaitFor(prompt, 30*time.Second)
	term.Type(password + "\n")
	screen = term.Wait(30 * time.Second)
	if res := parseResult(t, screen); res.Code != "" || strings.Contains(screen, password) {
		t.Fatalf("the right password = %+v\n%s", res, screen)
	}
	att, err := apiAttach(dir, req)
	if err != nil {
		t.Fatalf("attach after the password approved: %v", err)
	}
	closeBrowser(t, h.r, att.Browser.ID)
	var approved *approvalEvidence
	for _, rec := range auditApprovals(t, h.r, id) {
		if rec.Tool == "approve" && rec.Verdict == "allowed" {
			approved = rec.Approval
		}
	}
	if approved == nil || approved.SecondFactor != localapi.SecondFactorPassword {
		t.Fatalf("the approval's audit record = %+v, want second factor %s", approved, localapi.SecondFactorPassword)
	}

	// Three wrong passwords deny a request.
	_, err = apiAttach(dir, localapi.AttachRequest{ProfileDir: u.profile, AllowEvaluate: true})
	id2 := requestID(t, err)
	for i, wrong := range []string{"allow", password + "!", "tr0ub4dor & 3"} {
		term := personTerm(t, dir, "approve", id2)
		term.WaitFor(prompt, 30*time.Second)
		term.Type(wrong + "\n")
		res := parseResult(t, term.Wait(30*time.Second))
		want := fmt.Sprintf("(%d attempts left)", 2-i)
		if i == 2 {
			want = "did not match 3 times; the request is denied"
		}
		if res.Code != string(fsm.ApprovalInvalid) || !strings.Contains(res.Detail, want) {
			t.Fatalf("wrong password %d = %+v, want %q", i+1, res, want)
		}
	}
	if _, err := h.r.broker.Info(id2); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("the request is still pending after three wrong passwords: %v", err)
	}
	_, err = apiAttach(dir, localapi.AttachRequest{ProfileDir: u.profile, AllowEvaluate: true, Request: id2})
	if !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("attach naming the denied request = %v, want %s", err, fsm.ApprovalInvalid)
	}

	audit, err := os.ReadFile(filepath.Join(h.r.opts.StateDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{string(audit), h.logs.String()} {
		if strings.Contains(where, password) || strings.Contains(where, "r0ub4dor") {
			t.Fatal("the password was written to the audit or the log")
		}
	}
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/mcpsession"
)

// The HTTP transport's gate and bounds, on the handler with servers that
// reach no Runner: the token, the session count, idle expiry and the body
// size, each hit.

const testToken = "test-token-0123456789abcdef0123456789abcdef"

// bearer adds a token to every request.
type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

type httpFixture struct {
	h     *HTTPHandler
	url   string
	ended chan *Server // each session's end, as it runs
}

func newHTTPFixture(t *testing.T, o HTTPOptions) *httpFixture {
	t.Helper()
	f := &httpFixture{ended: make(chan *Server, 16)}
	o.Token = testToken
	o.NewSession = func() *Server {
		s := NewServer(Options{Session: newSession()})
		s.AtEnd(func(context.Context) { f.ended <- s })
		return s
	}
	h, err := NewHTTPHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	f.h, f.url = h, srv.URL+HTTPPath
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		srv.Close()
	})
	return f
}

// connect opens a session with the Go SDK's Streamable HTTP client.
func (f *httpFixture) connect(t *testing.T, tok string) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "webcodex-test", Version: "1"}, nil)
	return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: bearer{tok}}, MaxRetries: 1}, nil)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one raw POST; auth is the Authorization header ("" none).
func post(t *testing.T, url, auth, session string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestHTTPTokenGate: a request without the token, with a wrong one (of the
// same length or not), another scheme or two Authorization headers is 401
// with no body beyond the bare challenge, before anything else is read —
// even one that names a live session; the right token opens a session.
func TestHTTPTokenGate(t *testing.T) {
	f := newHTTPFixture(t, HTTPOptions{})
	wrong := strings.Repeat("x", len(testToken))
	for _, auth := range []string{"", "Bearer " + wrong, "Bearer " + testToken + "x", "Bearer " + testToken[:MinTokenChars], "Basic " + testToken, "bearer", testToken} {
		resp := post(t, f.url, auth, "", []byte(initializeBody))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || len(body) != 0 || resp.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("Authorization %q: %d %q %q, want a bare 401", auth, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if _, err := f.connect(t, wrong); err == nil {
		t.Fatal("the SDK client connected with a wrong token")
	}
	req, _ := http.NewRequest(http.MethodGet, f.url, nil)
	req.Header.Add("Authorization", "Bearer "+wrong)
	req.Header.Add("Authorization", "Bearer "+testToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("two Authorization headers: %v %v", resp, err)
	}

	cs, err := f.connect(t, testToken)
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	// The session's id without the token gets nothing either.
	resp := post(t, f.url, "Bearer "+wrong, cs.ID(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a live session's id with a wrong token: %d", resp.StatusCode)
	}
	if resp := post(t, strings.TrimSuffix(f.url, HTTPPath)+"/other", "Bearer "+testToken, "", []byte(initializeBody)); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another path: %d", resp.StatusCode)
	}
}

// TestHTTPSessionCount: with room for two sessions, a third is refused
// (503, nothing created) until one ends; a client that leaves (DELETE)
// runs its session's end and frees its slot. Each session is its own
// server.
func TestHTTPSessionCount(t *testing.T) {
	f := newHTTPFixture(t, HTTPOptions{MaxSessions: 2})
	a, err := f.connect(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.connect(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.ID() == b.ID() || f.h.Sessions() != 2 {
		t.Fatalf("sessions %q %q, count %d", a.ID(), b.ID(), f.h.Sessions())
	}
	resp := post(t, f.url, "Bearer "+testToken, "", []byte(initializeBody))
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "(2)") {
		t.Fatalf("a third session: %d %s", resp.StatusCode, body)
	}
	if f.h.Sessions() != 2 {
		t.Fatalf("the refused session counts: %d", f.h.Sessions())
	}
	a.Close() // DELETE
	s := <-f.ended
	if st := s.SessionState(); st != mcpsession.Closed {
		t.Fatalf("the ended session is %s", st)
	}
	waitfor.Until(t, 10*time.Second, "the ended session's slot is free", func() bool { return f.h.Sessions() == 1 })
	c, err := f.connect(t, testToken)
	if err != nil {
		t.Fatalf("a session after one ended: %v", err)
	}
	c.Close()
	<-f.ended
}

// TestHTTPIdleExpiry: a session no request reaches for its idle bound ends
// by itself (its end runs: its browsers would close), its slot is freed,
// and its id is then unknown (404).
func TestHTTPIdleExpiry(t *testing.T) {
	f := newHTTPFixture(t, HTTPOptions{Idle: 300 * time.Millisecond})
	cs, err := f.connect(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	id := cs.ID()
	select {
	case s := <-f.ended:
		if s.SessionState() != mcpsession.Closed {
			t.Fatalf("expired session is %s", s.SessionState())
		}
	case <-time.After(waitfor.Start(30 * time.Second).Bound()):
		t.Fatal("the idle session never ended")
	}
	waitfor.Until(t, 10*time.Second, "the expired session's slot is free", func() bool { return f.h.Sessions() == 0 })
	resp := post(t, f.url, "Bearer "+testToken, id, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the expired session's id: %d", resp.StatusCode)
	}
}

// TestHTTPBodyBound: a body one byte over the bound is 413, in a session
// and for a new one (which then leaves nothing behind); one at the bound
// is read.
func TestHTTPBodyBound(t *testing.T) {
	f := newHTTPFixture(t, HTTPOptions{MaxBodyBytes: 4096})
	over := []byte(initializeBody[:len(initializeBody)-1] + `,"pad":"` + strings.Repeat("p", 4096) + `"}`)
	if resp := post(t, f.url, "Bearer "+testToken, "", over); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("an oversized initialize: %d", resp.StatusCode)
	}
	if n := f.h.Sessions() + len(f.ended); n != 0 {
		t.Fatalf("an oversized initialize made %d sessions", n)
	}
	cs, err := f.connect(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(n int) int {
		prefix := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"pad":"`
		body := prefix + strings.Repeat("y", n-len(prefix)-4) + `"}}}`
		return post(t, f.url, "Bearer "+testToken, cs.ID(), []byte(body)).StatusCode
	}
	if code := call(4097); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a call one byte over the bound: %d", code)
	}
	if code := call(4096); code != http.StatusOK {
		t.Fatalf("a call at the bound: %d", code)
	}
}

// TestHTTPShutdownEndsSessions: Shutdown ends every live session (each
// end runs once) and refuses new ones.
func TestHTTPShutdownEndsSessions(t *testing.T) {
	f := newHTTPFixture(t, HTTPOptions{})
	for range 3 {
		cs, err := f.connect(t, testToken)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.ended) != 3 || f.h.Sessions() != 0 {
		t.Fatalf("after Shutdown: %d ends, %d live", len(f.ended), f.h.Sessions())
	}
	if resp := post(t, f.url, "Bearer "+testToken, "", []byte(initializeBody)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a session after Shutdown: %d", resp.StatusCode)
	}
}

// TestHTTPTokenSources: the token comes from the owner's 0600 file (no
// link, nobody else's read) or the variable, which is then removed; never
// both, never empty or short; no error quotes it.
func TestHTTPTokenSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	good := write("good", testToken+"\n", 0o600)
	if tok, err := httpToken(good); err != nil || tok != testToken {
		t.Fatalf("a 0600 token file: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	t.Setenv(TokenEnv, "")
	os.Unsetenv(TokenEnv)
	for name, file := range map[string]string{
		"readable by others": write("open", testToken, 0o644),
		"a link":             link,
		"short":              write("short", "abc", 0o600),
		"spaces":             write("spaces", strings.Repeat("a b ", 10), 0o600),
		"empty":              write("empty", "", 0o600),
		"none":               "",
	} {
		_, err := httpToken(file)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: the error quotes the token", name)
		}
	}
	t.Setenv(TokenEnv, testToken)
	if tok, err := httpToken(""); err != nil || tok != testToken {
		t.Fatalf("the variable: %v", err)
	}
	if _, ok := os.LookupEnv(TokenEnv); ok {
		t.Fatal("the variable is still in the environment")
	}
	t.Setenv(TokenEnv, testToken)
	if _, err := httpToken(good); err == nil {
		t.Fatal("a file and the variable both: accepted")
	}
}

// TestHTTPListenLoopbackByDefault: a bare port listens on 127.0.0.1; an
// address beyond this machine is refused without --http-remote.
func TestHTTPListenLoopbackByDefault(t *testing.T) {
	for _, addr := range []string{"0", ":0", "127.0.0.1:0", "[::1]:0"} {
		ln, loopback, err := listenHTTP(addr, false)
		if err != nil {
			if addr == "[::1]:0" && !errors.Is(err, errNotLoopback) {
				continue // no IPv6 here
			}
			t.Fatalf("%s: %v", addr, err)
		}
		if !loopback {
			t.Errorf("%s: not loopback: %v", addr, ln.Addr())
		}
		ln.Close()
	}
	if _, _, err := listenHTTP("0.0.0.0:0", false); !errors.Is(err, errNotLoopback) {
		t.Fatalf("0.0.0.0 without --http-remote: %v", err)
	}
	ln, loopback, err := listenHTTP("0.0.0.0:0", true)
	if err != nil || loopback {
		t.Fatalf("0.0.0.0 with --http-remote: %v %v", loopback, err)
	}
	ln.Close()
}

// httpServer is a spawned `webcodex mcp --http` and its URL.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	state  string
	stderr *syncBuffer
	done   chan error
}

// startHTTPServer runs the built binary with --http on an ephemeral
// loopback port and the token in a 0600 file.
func startHTTPServer(t *testing.T, args ...string) *httpServer {
	t.Helper()
	state := shortDir(t)
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &httpServer{state: state, stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, append([]string{"mcp", "--http", "127.0.0.1:0", "--http-token-file", tokFile}, args...)...)
	s.cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+state)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	const marker = "serving MCP (Streamable HTTP) at "
	waitfor.Until(t, 30*time.Second, "the server says where it listens", func() bool {
		out := s.stderr.String()
		i := strings.Index(out, marker)
		if i < 0 {
			return false
		}
		s.url, _, _ = strings.Cut(out[i+len(marker):], "\n")
		return true
	})
	return s
}

// session opens one HTTP session as the harness's server type.
func (s *httpServer) session(t *testing.T) *server {
	t.Helper()
	f := &httpFixture{url: s.url}
	cs, err := f.connect(t, testToken)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, s.stderr.String())
	}
	return &server{t: t, cs: cs, state: s.state, stderr: s.stderr}
}

// TestHTTPRefusesToStart: without a token, or on an address beyond this
// machine without --http-remote, `webcodex mcp --http` is a usage error
// that says why, and serves nothing.
func TestHTTPRefusesToStart(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--http", "127.0.0.1:0"}, "", "needs a bearer token"},
		{[]string{"--http", "0.0.0.0:0"}, TokenEnv + "=" + testToken, "not a loopback address"},
		{[]string{"--http", "127.0.0.1:0"}, TokenEnv + "=short", "must be"},
	} {
		cmd := exec.Command(binary, append([]string{"mcp"}, c.args...)...)
		cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+shortDir(t), c.env)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "serving") {
			t.Errorf("%v %s: %v %s", c.args, c.env, err, out)
		}
		if strings.Contains(string(out), testToken) {
			t.Errorf("%v: the output holds the token", c.args)
		}
	}
}

// TestHTTPSessionsOwnTheirBrowsers: over Streamable HTTP, each session is
// its own MCP session with its own browsers on the one embedded Runner: the
// second session launches its own, sees nothing of the first's and cannot
// reach its page by id; when the first session leaves (DELETE) its browser
// is closed; a signal ends the server and every session. The token is in
// no output and no file of the state root.
func TestHTTPSessionsOwnTheirBrowsers(t *testing.T) {
	needChromium(t)
	site := fixture(t, map[string]string{
		"/":      `<!doctype html><title>first</title><label>Draft <input id=d></label>`,
		"/other": `<!doctype html><title>second</title><p>elsewhere</p>`,
	})
	s := startHTTPServer(t)
	first, second := s.session(t), s.session(t)
	nav := first.ok("browser_navigate", map[string]any{"url": site.URL + "/"})
	firstPage := str(nav, "page")
	first.ok("browser_type", map[string]any{"target": map[string]any{"label": "Draft"}, "text": "half a sentence"})
	nav2 := second.ok("browser_navigate", map[string]any{"url": site.URL + "/other"})
	if nav2["page"] == firstPage || nav2["title"] != "second" {
		t.Fatalf("the second session's navigate = %v; want a browser of its own", nav2)
	}
	raw, _ := json.Marshal(second.ok("browser_status", nil)["browsers"])
	if strings.Contains(string(raw), firstPage) || strings.Count(string(raw), `"mode"`) != 1 {
		t.Fatalf("the second session lists %s", raw)
	}
	for tool, args := range map[string]map[string]any{
		"browser_snapshot": {"page": firstPage},
		"browser_evaluate": {"page": firstPage, "expression": "document.getElementById('d').value"},
	} {
		res := second.call(tool, args)
		if ref := res.refusal(); ref == nil || ref.Code != fsm.NotFound || strings.Contains(res.text, "half a sentence") {
			t.Fatalf("%s on the first session's page = %s", tool, res.text)
		}
	}

	sessionOf := func(page string) string {
		recs, _ := auditRecords(t, s.state)
		for _, r := range recs {
			if r["tool"] == "browser_navigate" && r["page"] == page {
				return fmt.Sprint(r["session"])
			}
		}
		t.Fatalf("no navigate audited on %s", page)
		return ""
	}
	ended := func(session string) bool {
		recs, _ := auditRecords(t, s.state)
		return hasRecord(recs, map[string]string{"session": session, "tool": "session_end"}) ||
			hasRecord(recs, map[string]string{"session": session, "action": "session_end"})
	}
	firstSession, secondSession := sessionOf(firstPage), sessionOf(str(nav2, "page"))
	if firstSession == secondSession || !strings.HasPrefix(firstSession, "mcp-") {
		t.Fatalf("sessions %q and %q", firstSession, secondSession)
	}
	first.cs.Close() // DELETE: the first session ends, its browser closes
	waitfor.Until(t, 60*time.Second, "the first session's browser closed", func() bool { return ended(firstSession) })
	if ended(secondSession) {
		t.Fatal("the second session's browser closed with the first's")
	}
	if v := second.ok("browser_evaluate", map[string]any{"expression": "document.title"}); v["value"] != "second" {
		t.Fatalf("the second session after the first left: %v", v)
	}

	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("the server's exit: %v\n%s", err, s.stderr.String())
		}
		s.done <- nil
	case <-time.After(waitfor.Start(60 * time.Second).Bound()):
		t.Fatal("the server did not exit on SIGTERM")
	}
	if !ended(secondSession) {
		t.Fatal("the server exited without ending the second session")
	}
	noSecrets(t, "stderr", s.stderr.String(), testToken)
	filepath.WalkDir(s.state, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			noSecrets(t, p, string(b), testToken)
		}
		return nil
	})
}

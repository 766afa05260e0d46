package mcp

// The harness: the BUILT webcodex binary serving `webcodex mcp` over stdio,
// driven by the Go SDK's own MCP client, on pages served on 127.0.0.1 and a
// real headless Chromium.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/testbin"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/platform"
)

var binary string

func TestMain(m *testing.M) { testbin.Main(tracecheck.Wrap(m), raceBuild, &binary) }

// needChromium fails (or, under -short, skips) when Chromium is missing.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := platform.FindChromium(); err != nil {
		if testing.Short() {
			t.Skip("Chromium missing (-short)")
		}
		t.Fatalf("Chromium is required: apt-get install -y chromium (%v)", err)
	}
}

// syncBuffer collects the server's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is one spawned `webcodex mcp` and its client session.
type server struct {
	t      testing.TB
	cs     *sdk.ClientSession
	state  string
	stderr *syncBuffer
	mu     sync.Mutex
	seen   []string // every result the agent saw, for the privacy scan
}

type serverOpts struct {
	args []string
	env  []string
	// elicit answers the host's approval questions; nil: the client does
	// not support elicitation.
	elicit func(*sdk.ElicitRequest) (*sdk.ElicitResult, error)
	state  string // reuse a state root
	// protocol forces an MCP protocol version (default: the SDK's latest).
	protocol string
	// defaultCaps serves the default tool list; otherwise every capability
	// group is on (--caps all), so every tool can be tested.
	defaultCaps bool
}

func startServer(t testing.TB, o serverOpts) *server {
	t.Helper()
	tracecheck.Track(t)
	state := o.state
	if state == "" {
		state = shortDir(t)
	}
	s := &server{t: t, state: state, stderr: &syncBuffer{}}
	args := append([]string{"mcp"}, o.args...)
	if !o.defaultCaps {
		args = append(args, "--caps", "all")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "WEBCODEX_STATE_DIR="+state), o.env...)
	cmd.Stderr = s.stderr
	copts := &sdk.ClientOptions{}
	if o.elicit != nil {
		copts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) { return o.elicit(req) }
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "webcodex-test", Version: "1"}, copts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sopts *sdk.ClientSessionOptions
	if o.protocol != "" {
		sopts = &sdk.ClientSessionOptions{ProtocolVersion: o.protocol}
	}
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, sopts)
	if err != nil {
		t.Fatalf("connect to webcodex mcp: %v\nstderr: %s", err, s.stderr.String())
	}
	s.cs = cs
	t.Cleanup(func() {
		cs.Close() // closes stdin: the server closes its browsers and exits
		if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the server raced")
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// shortDir is a state root short enough for unix socket paths (108 bytes),
// which t.TempDir (named after the test) is not.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wcm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "state")
}

// result is a decoded tool result.
type result struct {
	raw     *sdk.CallToolResult
	isError bool
	body    map[string]any
	text    string
}

func (r result) refusal() *fsm.Refusal {
	m, ok := r.body["refusal"].(map[string]any)
	if !ok {
		return nil
	}
	b, _ := json.Marshal(m)
	var ref fsm.Refusal
	if json.Unmarshal(b, &ref) != nil {
		return nil
	}
	return &ref
}

// call calls a tool; a protocol error fails the test (refusals never are).
func (s *server) call(name string, args any) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: protocol error %v", name, err)
	}
	return s.decode(name, res)
}

func (s *server) decode(name string, res *sdk.CallToolResult) result {
	s.t.Helper()
	r := result{raw: res, isError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			r.text = tc.Text
			break
		}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatalf("%s: structured content: %v", name, err)
	}
	if err := json.Unmarshal(b, &r.body); err != nil || r.body == nil {
		s.t.Fatalf("%s: structured content is not an object: %s", name, b)
	}
	s.mu.Lock()
	s.seen = append(s.seen, string(b), r.text)
	s.mu.Unlock()
	return r
}

// ok calls a tool that must succeed.
func (s *server) ok(name string, args any) map[string]any {
	s.t.Helper()
	r := s.call(name, args)
	if r.isError {
		s.t.Fatalf("%s(%v) failed: %s", name, args, r.text)
	}
	return r.body
}

// refused calls a tool that must be refused with code.
func (s *server) refused(name string, args any, code fsm.Code) *fsm.Refusal {
	s.t.Helper()
	r := s.call(name, args)
	ref := r.refusal()
	if !r.isError || ref == nil || ref.Code != code {
		s.t.Fatalf("%s(%v) = %s, want refusal %s", name, args, r.text, code)
	}
	if ref.Next == "" {
		s.t.Errorf("%s: refusal %s has no next step", name, code)
	}
	return ref
}

// str digs a string out of a decoded result: path of keys.
func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// auditRecords reads the audit trail.
func auditRecords(t testing.TB, state string) ([]map[string]any, string) {
	t.Helper()
	path := filepath.Join(state, "audit.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("audit trail: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("audit trail mode %v, want 0600", st.Mode().Perm())
	}
	// Every record read here (effects, refusals, approvals) is in one
	// intact hash chain.
	if _, err := auditchain.Verify(state, ""); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out, string(data)
}

// hasRecord reports whether an audit record has every given field value.
func hasRecord(recs []map[string]any, want map[string]string) bool {
	for _, r := range recs {
		ok := true
		for k, v := range want {
			if s, _ := r[k].(string); s != v {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// noSecrets fails when any artifact holds one of the secrets.
func noSecrets(t testing.TB, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains %q", what, s)
		}
	}
}

// ownedEndpoints returns, for the privacy scan, the debugging ports and
// profile paths of the browsers a server launched, read from the Runner's
// private records while they run.
func ownedEndpoints(t testing.TB, state string) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir(filepath.Join(state, "browser", "owned"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(state, "browser", "owned", e.Name()))
		if err != nil {
			continue
		}
		var rec struct {
			Profile string `json:"ephemeral_profile"`
		}
		if json.Unmarshal(data, &rec) != nil || rec.Profile == "" {
			continue
		}
		out = append(out, rec.Profile)
		if port, path, err := platform.ReadDevToolsActivePort(rec.Profile); err == nil {
			out = append(out, fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf(":%d/", port), path)
		}
	}
	if len(out) == 0 {
		t.Fatal("no owned browser records found for the privacy scan")
	}
	return out
}

// fixture serves pages on 127.0.0.1 (or on "localhost", another site).
func fixture(t testing.TB, pages map[string]string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: cookieSecret, Path: "/"})
			fmt.Fprint(w, body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// localhostURL is the same server named by another site (localhost), so a
// page on 127.0.0.1 that embeds it has a cross-site iframe.
func localhostURL(srv *httptest.Server) string {
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

const cookieSecret = "c00kie-s3cret-9f1e"

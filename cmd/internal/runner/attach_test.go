package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
	"github.com/webcodex/webcodex/reconnect"
)

// usersChrome is "the user's Chrome": chromiumtest.Users with the short
// names these tests use.
type usersChrome struct {
	*chromiumtest.Users
	proc    *platform.Process
	profile string
	port    int
}

func wrapUsers(u *chromiumtest.Users) *usersChrome {
	return &usersChrome{Users: u, proc: u.Proc, profile: u.Profile, port: u.Port}
}

func startUsersChrome(t *testing.T) *usersChrome { return benchUsersChrome(t) }

func benchUsersChrome(t testing.TB) *usersChrome {
	t.Helper()
	return wrapUsers(chromiumtest.StartUsers(t, filepath.Join(t.TempDir(), "users-profile")))
}

// startUsersChromeAt restarts "the user's Chrome" on an existing profile.
func startUsersChromeAt(t *testing.T, profile string) *usersChrome {
	t.Helper()
	return wrapUsers(chromiumtest.StartUsers(t, profile))
}

func (u *usersChrome) openTab(t *testing.T, url string) { u.OpenTab(t, url) }

func (u *usersChrome) pageTargets(t *testing.T) []string { return u.PageTargets(t) }

// cuttable wraps the real dialer so a test can cut every connection it
// made, or make the next dials fail.
type cuttable struct {
	mu      sync.Mutex
	conns   []net.Conn
	failing atomic.Bool
	dials   atomic.Int32
	hold    chan struct{} // when set, dials wait for it to close
}

func (c *cuttable) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.dials.Add(1)
	c.mu.Lock()
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.failing.Load() {
		return nil, fmt.Errorf("injected: connection refused")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, format+"\n", args...)
}

func (l *logSink) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

type harness struct {
	t    *testing.T
	r    *Runner
	dial *cuttable
	logs *logSink
	out  []string // every result and error the test saw, for the privacy scan
	// account is the login whose password approves; "" means nobody, whose
	// password is locked: these tests answer at the terminal alone, and
	// the password tests name a login they created.
	account string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	tracecheck.Track(t)
	h := &harness{t: t, dial: &cuttable{}, logs: &logSink{}}
	h.r = h.newRunner()
	return h
}

func (h *harness) newRunner() *Runner {
	account := h.account
	if account == "" {
		account = "nobody"
	}
	return newTestRunner(h.t, Options{Logf: h.logs.logf, NetDialContext: h.dial.dial, ConsentDeadline: 10 * time.Second, ApprovalAccount: account})
}

func (h *harness) record(v any, err error) {
	b, _ := json.Marshal(v)
	h.out = append(h.out, string(b))
	if err != nil {
		h.out = append(h.out, err.Error())
	}
}

// approvedAttach attaches, approving the request the first attempt returns
// (in-process: the pty-driven `webcodex approve` is tested end to end).
func (h *harness) approvedAttach(r *Runner, req localapi.AttachRequest) localapi.AttachResult {
	h.t.Helper()
	ctx := context.Background()
	_, err := r.Attach(ctx, req)
	h.record(nil, err)
	id := requestID(h.t, err)
	if err := r.broker.Approve(id); err != nil {
		h.t.Fatal(err)
	}
	res, err := r.Attach(ctx, req)
	h.record(res, err)
	if err != nil {
		h.t.Fatalf("attach after approval: %v", err)
	}
	return res
}

func requestID(t *testing.T, err error) string { return requestIDB(t, err) }

func requestIDB(t testing.TB, err error) string {
	t.Helper()
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.ConsentRequired {
		t.Fatalf("attach without a grant = %v, want %s", err, fsm.ConsentRequired)
	}
	f := strings.Fields(ref.Detail)
	if len(f) < 3 || f[0] != "approval" {
		t.Fatalf("refusal detail %q carries no request id", ref.Detail)
	}
	return strings.TrimSuffix(f[2], ":")
}

func fixtureServer(t *testing.T, journal *atomic.Int32) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>user tab</title><p>the user's logged-in page</p>`)
	})
	mux.HandleFunc("/effect", func(w http.ResponseWriter, r *http.Request) {
		journal.Add(1)
		fmt.Fprint(w, `<!doctype html><title>effect</title><p>effect received</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestAttachByProfileDirAndEndpoint(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	srv := fixtureServer(t, new(atomic.Int32))
	u.openTab(t, srv.URL+"/")
	ctx := context.Background()

	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL}})
	if res.Browser.Mode != localapi.ModeAttached || res.Product != "chromium" || !res.CapabilitiesInvalidated {
		t.Fatalf("attach = %+v", res)
	}
	tab := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	rd, err := runOp(ctx, h.r, op.ReadText, readIn(tab))
	h.record(rd, err)
	if err != nil || !strings.Contains(rd.Text, "logged-in page") {
		t.Fatalf("read = %+v, %v", rd, err)
	}
	if _, err := runOp(ctx, h.r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: tab}, Expr: "1"}); !fsm.IsCode(err, fsm.PolicyDenied) {
		t.Fatalf("eval on an attached browser without --allow-evaluate = %v", err)
	}
	before := u.pageTargets(t)
	if _, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: res.Browser.ID}); err != nil {
		t.Fatal(err)
	}
	// Teardown is detach-only: the browser and every tab are still there.
	select {
	case <-u.proc.Exited():
		t.Fatal("closing an attached browser ended the user's Chrome")
	default:
	}
	if after := u.pageTargets(t); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("tabs changed by detach: before %v after %v", before, after)
	}

	// The grant is live: attaching again by endpoint needs no new approval.
	hs := h.r.handshakes
	res2, err := h.r.Attach(ctx, localapi.AttachRequest{Endpoint: fmt.Sprintf("127.0.0.1:%d", u.port), Allow: []string{srv.URL}})
	h.record(res2, err)
	if err != nil {
		t.Fatalf("re-attach under the live grant: %v", err)
	}
	if h.r.handshakes != hs+1 {
		t.Fatalf("re-attach opened %d sockets, want 1", h.r.handshakes-hs)
	}
	h.privacyScan(u)
}

// pageByURL returns the id of the one page at url.
func pageByURL(t *testing.T, pages []localapi.PageInfo, url string) string {
	t.Helper()
	id := ""
	for _, p := range pages {
		if p.URL == url {
			if id != "" {
				t.Fatalf("two pages at %s: %+v", url, pages)
			}
			id = p.ID
		}
	}
	if id == "" {
		t.Fatalf("no page at %s in %+v", url, pages)
	}
	return id
}

// TestUnauthorizedTabsInvisible attaches with an allowlist that covers no
// open tab: nothing is listed, and an empty list hides even about:blank.
func TestUnauthorizedTabsInvisible(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	srv := fixtureServer(t, new(atomic.Int32))
	u.openTab(t, srv.URL+"/")
	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile})
	if len(res.Browser.Pages) != 0 {
		t.Fatalf("attached with an empty list, visible pages %+v", res.Browser.Pages)
	}
}

// TestTabBeforeItsFirstDocument: a person's tab whose first document has
// not arrived shows its initial empty document, about:blank, to every verb
// alike — the identity read and a read's own admission (which judges the
// frame tree, where that document has no URL) — not "no such page" to one
// of them; once the document arrives the same handle reads it.
func TestTabBeforeItsFirstDocument(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `<!doctype html><title>late</title><p>arrived</p>`)
	}))
	t.Cleanup(srv.Close)
	release := sync.OnceFunc(func() { close(held) })
	t.Cleanup(release) // runs before srv.Close: the held request ends first
	u.openTab(t, srv.URL+"/")
	ctx := context.Background()
	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL}})
	page := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	read, err := runOp(ctx, h.r, op.ReadText, readIn(page))
	if err != nil || read.Text != "" {
		t.Fatalf("read of a tab before its first document = %+v, %v; want the empty about:blank", read, err)
	}
	release()
	h.waitShows(page, srv.URL+"/")
	if read, err = runOp(ctx, h.r, op.ReadText, readIn(page)); err != nil || !strings.Contains(read.Text, "arrived") {
		t.Fatalf("read once the document arrived = %+v, %v", read, err)
	}
}

func TestAttachRefusals(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	ctx := context.Background()
	// An endpoint owned by a process that is not a browser (this test).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = h.r.Attach(ctx, localapi.AttachRequest{Endpoint: ln.Addr().String()})
	if !fsm.IsCode(err, fsm.EndpointOwnerMismatch) {
		t.Fatalf("attach to a non-browser listener = %v", err)
	}
	if strings.Contains(err.Error(), fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)) {
		t.Fatalf("refusal names the port: %v", err)
	}
	for _, ep := range []string{"10.0.0.1:9222", "example.com:9222", "localhost:9222"} {
		if _, err := h.r.Attach(ctx, localapi.AttachRequest{Endpoint: ep}); !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Fatalf("attach to %s = %v, want %s", ep, err, fsm.InvalidArgument)
		}
	}
	if _, err := h.r.Attach(ctx, localapi.AttachRequest{}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("attach with no endpoint = %v", err)
	}
}

func TestGrantScopeAndLifetime(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	ctx := context.Background()
	req := localapi.AttachRequest{ProfileDir: u.profile}

	_, err := h.r.Attach(ctx, req)
	id := requestID(t, err)
	// A mismatching use (evaluate on) naming the request is refused and
	// leaves it for the attach it was made for.
	other := req
	other.AllowEvaluate, other.Request = true, id
	if _, err := h.r.Attach(ctx, other); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("mismatched use = %v, want %s", err, fsm.ApprovalInvalid)
	}
	res := h.approvedAttach(h.r, req)
	h.r.Close(ctx, localapi.BrowserRequest{Browser: res.Browser.ID})

	// A Runner restart discards the grant.
	r2 := h.newRunner()
	if _, err := r2.Attach(ctx, req); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("attach on a new Runner = %v, want %s", err, fsm.ConsentRequired)
	}
	// A browser restarted with a new PID needs a new approval.
	u2 := startUsersChrome(t)
	req2 := localapi.AttachRequest{ProfileDir: u2.profile}
	h.approvedAttach(r2, req2)
	u2.proc.Close(ctx, nil)
	u3 := startUsersChromeAt(t, u2.profile)
	_ = u3
	if _, err := r2.Attach(ctx, req2); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("attach to a restarted browser = %v, want %s", err, fsm.ConsentRequired)
	}
}

func TestReconnectAfterCutSocket(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	u := startUsersChrome(t)
	journal := new(atomic.Int32)
	srv := fixtureServer(t, journal)
	u.openTab(t, srv.URL+"/")
	ctx := context.Background()
	res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{srv.URL}})
	b, _ := h.r.browser(res.Browser.ID)
	oldPage := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	hs := h.r.handshakes
	h.waitShows(oldPage, srv.URL+"/")

	// An effect whose acknowledgement arrives, then the socket is cut.
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: oldPage}, URL: srv.URL + "/effect"}); err != nil {
		t.Fatal(err)
	}
	h.dial.cut()
	// The watcher reconnects by itself: a new generation, one new socket.
	waitfor.Until(t, 15*time.Second, "reconnected on generation 2", func() bool { return b.gens.Current() == 2 && b.state() == "ready" })
	if h.r.handshakes != hs+1 {
		t.Fatalf("reconnect opened %d sockets, want 1", h.r.handshakes-hs)
	}
	if _, err := runOp(ctx, h.r, op.ReadText, readIn(oldPage)); !fsm.IsCode(err, fsm.BindingStale) {
		t.Fatalf("old page handle after reconnect = %v, want %s", err, fsm.BindingStale)
	}
	if n := journal.Load(); n != 1 {
		t.Fatalf("the effect landed %d times, want exactly once", n)
	}
	pages, _ := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.id})
	if id := pageByURL(t, pages, srv.URL+"/effect"); id == oldPage {
		t.Fatalf("pages after reconnect %+v: want the tab under a new id", pages)
	}

	// Concurrent reconnect requests: one leader, one socket. The dial is
	// held until every other request has joined the flight.
	const n = 8
	hs = h.r.handshakes
	hold := make(chan struct{})
	h.dial.mu.Lock()
	h.dial.hold = hold
	h.dial.mu.Unlock()
	var wg sync.WaitGroup
	gens := make(chan uint64, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.r.Reconnect(ctx, localapi.BrowserRequest{Browser: b.id})
			if err != nil {
				t.Errorf("reconnect: %v", err)
			}
			gens <- res.Generation
		}()
	}
	waitfor.Until(t, 10*time.Second, "every request joined one flight", func() bool { return coordOf(b).Joined() >= n-1 })
	h.dial.mu.Lock()
	h.dial.hold = nil
	h.dial.mu.Unlock()
	close(hold)
	wg.Wait()
	close(gens)
	for g := range gens {
		if g != 3 {
			t.Fatalf("a concurrent request got generation %d, want every one on generation 3", g)
		}
	}
	if opened := h.r.handshakes - hs; opened != 1 {
		t.Fatalf("%d concurrent reconnect requests opened %d sockets, want 1", n, opened)
	}

	// Three failed attempts: exhausted within the deadline, browser lost, never closed.
	// The flight ends by its attempt budget, not by its deadline: the
	// machine's own trace says which (a wall clock started by the test
	// would also count how late a loaded machine noticed the cut).
	h.dial.failing.Store(true)
	h.dial.cut()
	waitfor.Until(t, 40*time.Second, "reconnect exhausted", func() bool { return b.state() == "lost" })
	if coordOf(b).State() != "exhausted" {
		t.Fatalf("reconnect state %s, want exhausted", coordOf(b).State())
	}
	if tr := coordOf(b).Trace(); len(tr) == 0 || tr[len(tr)-1].To != string(reconnect.Exhausted) || tr[len(tr)-1].On == string(reconnect.DeadlineExpired) {
		t.Fatalf("the flight did not end by its attempt budget: %+v", tr[max(0, len(tr)-3):])
	}
	if _, err := h.r.Reconnect(ctx, localapi.BrowserRequest{Browser: b.id}); !fsm.IsCode(err, fsm.ReconnectExhausted) {
		t.Fatalf("reconnect after exhaustion = %v", err)
	}
	select {
	case <-u.proc.Exited():
		t.Fatal("a failed reconnect ended the user's browser")
	default:
	}
	h.privacyScan(u)
}

// waitShows waits until the person's tab page is readable and shows the
// document at want. A tab opened with a URL starts in its initial empty
// document, which reads as about:blank (readable under any allowlist):
// acting before want commits would act on that document.
func (h *harness) waitShows(page, want string) {
	h.t.Helper()
	ctx := context.Background()
	waitfor.Until(h.t, 10*time.Second, "the tab shows "+want, func() bool {
		p, err := h.r.readablePage(ctx, page)
		if err != nil {
			return false
		}
		id, err := p.surf.Identity(ctx)
		return err == nil && id.URL == want
	})
}

// privacyScan checks no log line, result or error names the endpoint's port,
// a WebSocket URL or the profile path.
func (h *harness) privacyScan(u *usersChrome) {
	h.t.Helper()
	st, _ := h.r.Status(context.Background())
	h.record(st, nil)
	all := h.logs.String() + strings.Join(h.out, "\n")
	for _, secret := range []string{fmt.Sprintf(":%d", u.port), fmt.Sprintf("%d/", u.port), "ws://", "/devtools/browser", u.profile} {
		if strings.Contains(all, secret) {
			h.t.Fatalf("output leaks %q:\n%s", secret, all)
		}
	}
	if strings.Contains(all, os.Getenv("HOME")+"/") && os.Getenv("HOME") != "" {
		h.t.Fatal("output names a home path")
	}
}

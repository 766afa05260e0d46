package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// DefaultConsentDeadline bounds how long an attach waits in
// connecting_pending_consent for the person to answer Chrome's own prompt.
const DefaultConsentDeadline = 60 * time.Second

// endpoint is a proven debugging endpoint: the listening process, its
// fingerprint and product, and the browser WebSocket path. Internal only.
type endpoint struct {
	addr    netip.AddrPort
	wsPath  string
	fp      platform.Fingerprint
	product string
	profile string // the owner's user-data-dir, for comparisons only
}

func (e endpoint) wsURL() string { return "ws://" + e.addr.String() + e.wsPath }

// key is the browser identity grants are keyed by: product and process
// fingerprint. A browser restart (new fingerprint) is a new identity.
func (e endpoint) key() string {
	return fmt.Sprintf("%s:%d:%d", e.product, e.fp.PID, e.fp.StartTime)
}

func (e endpoint) fingerprint() string {
	return fmt.Sprintf("%d:%d:%s", e.fp.PID, e.fp.StartTime, e.fp.Exe)
}

// resolveEndpoint finds the endpoint from a profile's DevToolsActivePort or a
// loopback address, and proves who owns it before anything else: the process
// holding the listening socket, its executable (a Chromium-family browser),
// its user (ours) and its profile (whose SingletonLock names that process).
// The browser WebSocket path comes from the profile's DevToolsActivePort
// when it names this port, else (a browser started with a fixed
// --remote-debugging-port=N writes none) from the proven listener's own
// /json/version, asked only once the proof holds.
func resolveEndpoint(ctx context.Context, req localapi.AttachRequest) (endpoint, error) {
	var e endpoint
	var wantProfile string
	switch {
	case (req.ProfileDir == "") == (req.Endpoint == ""):
		return e, fsm.Refuse(fsm.InvalidArgument, "give exactly one of --profile-dir and --endpoint")
	case req.ProfileDir != "":
		dir, err := filepath.Abs(req.ProfileDir)
		if err != nil {
			return e, fsm.Refuse(fsm.InvalidArgument, "the profile directory is not a valid path")
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return e, fsm.Refuse(fsm.InvalidArgument, "the profile directory does not exist; give the running browser's user data directory (chrome://version shows it as Profile Path, without the last part)").WithCause(err)
		}
		port, path, err := platform.ReadDevToolsActivePort(dir)
		if err != nil {
			return e, fsm.Refuse(fsm.RequiresSetup, "the browser of this profile has no debugging endpoint: in that browser open chrome://inspect/#remote-debugging and tick \"Allow remote debugging for this browser instance\" (no restart, no flags; webcodex changes nothing in the profile), then attach again; a browser started with --remote-debugging-port=PORT is attached with --endpoint 127.0.0.1:PORT").WithCause(err)
		}
		e.addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
		e.wsPath = path
		wantProfile = dir
	default:
		ap, err := netip.ParseAddrPort(req.Endpoint)
		if err != nil {
			return e, fsm.Refuse(fsm.InvalidArgument, "the endpoint must be a loopback IP and port, e.g. 127.0.0.1:9222")
		}
		if !ap.Addr().Unmap().IsLoopback() {
			return e, fsm.Refuse(fsm.InvalidArgument, "only loopback endpoints are accepted")
		}
		e.addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	pid, err := listenerOwner(e.addr)
	if errors.Is(err, platform.ErrNoListener) {
		return e, fsm.Refuse(fsm.RequiresSetup, "nothing listens on that endpoint: start the browser with remote debugging on (chrome://inspect/#remote-debugging, or --remote-debugging-port=PORT with --user-data-dir=DIR), or check the port").WithCause(err)
	}
	if err != nil {
		return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "no single browser process owns the endpoint").WithCause(err)
	}
	fp, err := platform.FingerprintOf(pid)
	if err != nil {
		return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint's owner could not be identified").WithCause(err)
	}
	e.fp, e.product = fp, platform.Product(fp.Exe)
	if e.product == "" {
		return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint is not owned by a Chrome, Chromium or Edge process")
	}
	if uid, err := platform.OwnerUID(pid); err != nil || uid != os.Getuid() {
		return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint is owned by another user's browser").WithCause(err)
	}
	// The profile's SingletonLock must name the listener's owner: evidence
	// that survives the rewritten process title of a desktop session.
	if wantProfile != "" {
		if err := platform.ProveProfile(wantProfile, pid); err != nil {
			return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint is owned by a browser running another profile").WithCause(err)
		}
		e.profile = wantProfile
	} else if e.profile, err = platform.UserDataDirOf(pid); err != nil {
		return e, fsm.Refuse(fsm.RequiresSetup, "the profile of the browser that owns the endpoint cannot be proven: start that browser with --user-data-dir=DIR (a profile directory of its own) beside --remote-debugging-port=PORT, then attach again").WithCause(err)
	}
	if e.wsPath == "" {
		if port, path, err := platform.ReadDevToolsActivePort(e.profile); err == nil && port == int(e.addr.Port()) {
			e.wsPath = path
		} else if e.wsPath, err = askBrowserPath(ctx, e.addr); err != nil {
			return e, fsm.Refuse(fsm.RequiresSetup, "the browser that owns the endpoint does not answer as a DevTools endpoint: restart it with --remote-debugging-port=PORT and --user-data-dir=DIR, then attach again").WithCause(err)
		}
		// The answer came over a fresh connection: the listener must still be
		// the process just proven (a PID reused meanwhile is refused).
		if !e.reprove() {
			return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint changed owner while it was being proven")
		}
	}
	if !strings.HasPrefix(e.wsPath, "/devtools/browser/") {
		return e, fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint is not a browser-level DevTools endpoint")
	}
	return e, nil
}

// browserPathTimeout bounds asking an endpoint for its browser path, within
// the attach call's own bound; maxBrowserVersion bounds the answer (the real
// one is under 1 KiB).
const (
	browserPathTimeout = 5 * time.Second
	maxBrowserVersion  = 64 << 10
)

// askBrowserPath asks the listener at addr, already proven to be the
// browser, for its browser target path: GET /json/version, the path of its
// webSocketDebuggerUrl. The path is internal: never log it.
func askBrowserPath(ctx context.Context, addr netip.AddrPort) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, browserPathTimeout)
	defer cancel()
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr.String()+"/json/version", nil)
	if err != nil {
		return "", fmt.Errorf("runner: ask browser path: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("runner: ask browser path: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("runner: ask browser path: status %d", resp.StatusCode)
	}
	var v struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBrowserVersion)).Decode(&v); err != nil {
		return "", fmt.Errorf("runner: ask browser path: %w", err)
	}
	u, err := url.Parse(v.WebSocketDebuggerURL)
	if err != nil || u.Scheme != "ws" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("runner: ask browser path: not a WebSocket URL")
	}
	id, ok := strings.CutPrefix(u.Path, "/devtools/browser/")
	if !ok || id == "" || strings.ContainsAny(id, "/?#% ") {
		return "", errors.New("runner: ask browser path: not a browser target")
	}
	return u.Path, nil
}

// ownerTries bounds the re-reads of a listener's owner while it is
// transiently unclear: a browser forking a child can, for an instant, show
// the listening socket in two processes, or in none while /proc changes.
const ownerTries = 5

// listenerOwner is platform.ListenerOwner with a bounded retry of those
// transient answers; a listener owned by another process is never retried
// into a match.
func listenerOwner(addr netip.AddrPort) (int, error) {
	var err error
	for i := 0; i < ownerTries; i++ {
		var pid int
		pid, err = platform.ListenerOwner(addr)
		if err == nil || !(errors.Is(err, platform.ErrListenerShared) || errors.Is(err, platform.ErrListenerHidden)) {
			return pid, err
		}
		time.Sleep(50 * time.Millisecond) // /proc has no change notification
	}
	return 0, err
}

// reprove checks the endpoint is still owned by the same process.
func (e endpoint) reprove() bool {
	pid, err := listenerOwner(e.addr)
	if err != nil || pid != e.fp.PID {
		return false
	}
	return e.fp.Alive()
}

// Attach attaches to a person's running browser: owner proof, approval,
// then one browser-level socket under the consent machine.
func (r *Runner) Attach(ctx context.Context, req localapi.AttachRequest) (res localapi.AttachResult, err error) {
	defer func() { r.auditBrowser(ctx, res.Browser.ID, "attach", err) }()
	e, err := resolveEndpoint(ctx, req)
	if err != nil {
		return localapi.AttachResult{}, err
	}
	for _, b := range r.browserList() {
		if _, ok := b.life.(*attachedBrowser); ok && b.ep.key() == e.key() {
			return localapi.AttachResult{}, fsm.Refuse(fsm.LeaseHeld, "this browser is already attached; use its browser id, or close it first")
		}
	}
	grant, err := r.grantFor(ctx, e, req)
	if err != nil {
		return localapi.AttachResult{}, err
	}
	gate, dropped := origin.New(origin.Attached, req.Allow)
	for range dropped {
		r.logf("runner: an --allow entry was dropped")
	}
	b := &Browser{r: r, id: newID("b"), created: time.Now(), pages: map[string]*Page{},
		done: make(chan struct{}), stop: make(chan struct{}), ep: e, grant: grant, gate: gate, allowEvaluate: req.AllowEvaluate, req: req}
	a := newAttachedBrowser(b)
	b.life = a
	err = r.connectUnderConsent(ctx, b)
	if err == nil {
		err = r.register(ctx, b)
	}
	if err != nil { // failed: release_attachment closes what the attempt opened
		if ferr := a.teardown(ctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return localapi.AttachResult{}, err
	}
	r.logf("runner: attached browser %s (%s)", b.id, e.product)
	return localapi.AttachResult{
		Browser: b.info(ctx), Product: e.product, CapabilitiesInvalidated: true, NextAction: "list pages (webcodex pages BROWSER)",
		EndpointOwnership: "listening_socket_pid",
		SideEffects: map[string]bool{"launched_browser": false, "restarted_browser": false, "created_profile": false,
			"copied_profile_data": false, "changed_preferences": false},
	}, nil
}

// dial opens the one browser-level socket, through Options.NetDialContext
// when a test injects one.
func (r *Runner) dial(ctx context.Context, e endpoint) (cdp.Socket, error) {
	return cdp.DialWebSocket(ctx, e.wsURL(), cdp.DialOptions{NetDialContext: r.opts.NetDialContext})
}

func isHandshakeStatus(err error, status int) bool {
	var he *cdp.HandshakeError
	return errors.As(err, &he) && he.Status == status
}

func (r *Runner) countHandshake() {
	r.mu.Lock()
	r.handshakes++
	r.mu.Unlock()
}

func refusalCode(err error) string {
	if ref, ok := fsm.AsRefusal(err); ok {
		return string(ref.Code)
	}
	return "failure"
}

// Reconnect forces a reconnect of an attached browser (or joins the one
// running); the other kinds refuse, each saying why.
func (r *Runner) Reconnect(ctx context.Context, req localapi.BrowserRequest) (_ localapi.ReconnectResult, err error) {
	defer func() { r.auditBrowser(ctx, req.Browser, "reconnect", err) }()
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.ReconnectResult{}, err
	}
	res, err := b.life.reconnect(ctx)
	if err != nil {
		return localapi.ReconnectResult{}, err
	}
	return localapi.ReconnectResult{Browser: b.id, Generation: uint64(res.Generation), CapabilitiesInvalidated: res.CapabilitiesInvalidated, Attempts: res.Attempts}, nil
}

// detach is the only teardown of a browser that is the person's: detach
// our sessions and close our socket. Never Browser.close, never a tab or
// window we did not open, never a signal.
func (b *Browser) detach(ctx context.Context) {
	b.releaseAgentTabs(ctx) // the agent's own tabs only (tabs.go)
	for _, p := range b.pageList() {
		cdproto.Call(ctx, b.c().Browser(), target.DetachFromTarget, target.DetachFromTargetParams{SessionID: target.SessionID(p.sess.ID())})
	}
	b.c().Close()
}

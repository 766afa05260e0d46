// Package runner is the composition root: the one long-lived process that
// owns every browser connection, grant, lease, identity and machine, and the
// one tool surface the CLI (through the local API) and MCP both call.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"sort"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/secret"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/extension/bridge"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/lifetime"
	"github.com/webcodex/webcodex/platform"
)

// Options configures a Runner.
type Options struct {
	StateDir string // private state root (see StateDir)
	Version  string
	// Logf logs lifecycle events; it never receives ports, URLs, paths,
	// tokens or page text. Nil discards.
	Logf func(format string, args ...any)
	// LogWhere says where Logf's lines go, for the errors that send the
	// reader there ("runner.log in ~/.local/state/webcodex"); empty means
	// "the Runner's log".
	LogWhere string
	// Chrome overrides Chromium discovery (tests).
	Chrome string
	// UploadDir is the one directory uploads may come from; empty refuses.
	UploadDir string
	// Secrets are the values an agent may have typed by placeholder, each
	// only into its bound origins; every answer, error, audit record and
	// log line of the Runner passes their redaction. Nil: none.
	Secrets *secret.Set
	// Stop asks the process serving this Runner to stop (the "stop" route).
	Stop func()
	// StartTimeout bounds an owned browser's start-up; zero means
	// platform.DefaultStartTimeout. Tests stretch it with the machine's
	// load.
	StartTimeout time.Duration
	// CallBound bounds one call that reaches a browser; zero means
	// DefaultCallBound. Tests shorten it.
	CallBound time.Duration
	// MaxDownloadBytes bounds one download of an owned browser; zero means
	// DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
	// ConsentDeadline bounds the wait for the person to answer Chrome's
	// prompt; zero means DefaultConsentDeadline.
	ConsentDeadline time.Duration
	// ConsentUI observes and presses the browser's own consent prompt while
	// a handshake is held, for a browser whose grant lets webcodex press it;
	// nil means the platform's (Linux: AT-SPI on this process's desktop
	// session). Every other browser's prompt the person answers.
	ConsentUI consent.ConsentUI
	// PressDelay is how long the adapter lets a prompt stand before pressing
	// it, so the person may answer it first; never below
	// consent.MinPressDelay, which is also the default.
	PressDelay time.Duration
	// NetDialContext dials attached browsers' endpoints; nil means a plain
	// dialer. Fault-injection tests wrap the real socket with it.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// IdleExit, when positive, makes [Serve] exit after that long with no
	// browser and no client connected. The CLI starts its background
	// Runner with one (10 minutes unless WEBCODEX_IDLE_EXIT says otherwise);
	// `webcodex serve` by hand runs until stopped.
	IdleExit time.Duration
	// ApprovalAccount is the login whose password approves an attach at a
	// terminal; empty means the user this Runner runs as (the only one the
	// local API lets in). Tests name an account they created: a Runner run
	// by root may check any login's password, one run by a user only its own.
	ApprovalAccount string
}

// Runner owns browsers. Safe for concurrent use.
type Runner struct {
	opts    Options
	started time.Time
	env     map[string]string // fingerprint of the environment it started with
	broker  *consent.Broker
	gates   *lease.Gates
	ledger  *lease.Ledger
	auditMu sync.Mutex // serializes appends to the audit trail

	// life is the Runner's own machine (lifetime.RunnerSpec): whether it
	// still registers browsers is its state, never a flag beside it.
	life runnerOwner
	// released is closed by release_runner, so a second stop waits for the
	// first to finish.
	released chan struct{}

	mu       sync.Mutex // mu guards the fields that follow
	browsers map[string]*Browser
	pages    map[string]*Page // every live page, by opaque id
	// issued holds every page id this Runner minted: an issued id that is
	// not live is stale (refused as binding_stale, never reused); an id
	// never issued is unknown. Liveness is r.pages, not a second flag.
	issued map[string]struct{}
	// handshakes counts browser-level WebSockets opened to attached
	// browsers: each one may prompt the person, so tests count them.
	handshakes int

	sessions sessionTable // MCP sessions bound to their processes (session.go)

	ext *bridge.Server // the extension bridge's listener (bridge.go); nil unless installed; guarded by mu
}

// StateDir returns the state root (see localapi.StateDir).
func StateDir() (string, error) { return localapi.StateDir() }

// New prepares a Runner: it makes the state root private and reaps what an
// earlier Runner that died left behind.
func New(opts Options) (*Runner, error) {
	if opts.ConsentUI == nil {
		opts.ConsentUI = defaultConsentUI()
	}
	if opts.ApprovalAccount == "" {
		if u, err := user.Current(); err == nil {
			opts.ApprovalAccount = u.Username
		} // else unknown: approvals fall back to the terminal and say why
	}
	if err := platform.EnsurePrivateDir(opts.StateDir); err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			// Say which directory: the detail alone reads like a profile's.
			sr := fsm.Refuse(ref.Code, "the state directory is not private: "+ref.Detail).WithCause(err)
			sr.Next = "make it yours and private as the detail says (`webcodex doctor` names it), then run the command again"
			return nil, sr
		}
		return nil, fmt.Errorf("runner: state root: %w", err)
	}
	r := newRunner(opts)
	r.reapOrphans()
	r.startBridge()
	if sb := platform.Sandbox(); !sb.Enabled {
		r.logf("runner: owned browsers run without Chromium's sandbox: %s", sb.Reason)
	}
	return r, nil
}

type runnerOwner = *fsm.Owner[lifetime.RunnerState, lifetime.RunnerTrigger, struct{}]

type runnerStep = fsm.Step[lifetime.RunnerState, lifetime.RunnerTrigger]

// newRunner builds a Runner's registry and its own machine; New adds what
// touches the system.
func newRunner(opts Options) *Runner {
	r := &Runner{
		opts: opts, started: time.Now(), env: localapi.EnvFingerprint(),
		broker: consent.NewBroker(), gates: lease.NewGates(), ledger: lease.NewLedger(),
		browsers: map[string]*Browser{}, pages: map[string]*Page{}, issued: map[string]struct{}{},
		released: make(chan struct{}),
	}
	r.life = fsm.NewOwner(lifetime.RunnerSpec, fsm.Effects[lifetime.RunnerState, lifetime.RunnerTrigger]{
		lifetime.EffectCloseBrowsers: r.closeBrowsers,
		lifetime.EffectReleaseRunner: r.release,
	})
	return r
}

// serving reports whether the Runner still registers browsers and
// sessions.
func (r *Runner) serving() bool { return r.life.State() == lifetime.RunnerServing }

func (r *Runner) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf("%s", r.opts.Secrets.Redact(fmt.Sprintf(format, args...)))
	}
}

// newID mints an opaque identity with a kind prefix ("b", "p").
func newID(kind string) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Errorf("runner: crypto/rand: %w", err))
	}
	return kind + "-" + hex.EncodeToString(b[:])
}

// Shutdown closes every owned browser cleanly and detaches from attached
// ones; grants are discarded. Safe to call twice: the machine refuses the
// second stop, which waits for the first.
func (r *Runner) Shutdown(ctx context.Context) { r.end(ctx, lifetime.RunnerStop) }

// end fires stop or idle; it reports whether this call drained the Runner
// (false: another call did or does, and it has finished or ctx ended).
func (r *Runner) end(ctx context.Context, t lifetime.RunnerTrigger) bool {
	if _, err := r.life.Fire(ctx, t); err != nil {
		if _, refused := fsm.AsRefusal(err); !refused {
			r.logf("runner: %s: %v", t, err)
		}
		select {
		case <-r.released:
		case <-ctx.Done():
		}
		return false
	}
	return true
}

// closeBrowsers is close_browsers: every listed browser closed or
// detached by its own attachment machine, at once.
func (r *Runner) closeBrowsers(ctx context.Context, _ runnerStep) (lifetime.RunnerTrigger, error) {
	var wg sync.WaitGroup
	for _, b := range r.browserList() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.closeBrowser(ctx, b)
		}()
	}
	wg.Wait()
	return lifetime.RunnerDrained, nil
}

// release is release_runner: the bridge, the session watcher, the grants
// and the consent adapter's bus connection.
func (r *Runner) release(context.Context, runnerStep) (lifetime.RunnerTrigger, error) {
	defer close(r.released)
	r.stopBridge()
	r.sessions.close()
	r.broker.Discard()
	if c, ok := r.opts.ConsentUI.(interface{ Close() error }); ok {
		c.Close()
	}
	return "", nil
}

// Status reports the Runner and its browsers.
func (r *Runner) Status(ctx context.Context) (localapi.Status, error) {
	st := localapi.Status{
		Runner: localapi.RunnerInfo{Version: r.opts.Version, PID: os.Getpid(), Started: r.started,
			Sandbox: sandboxInfo(), IdleExitMs: r.opts.IdleExit.Milliseconds(), Env: r.env},
		Browsers:     []localapi.BrowserInfo{},
		Capabilities: r.Capabilities(),
	}
	st.Runner.PromptPress = promptPressStatus(ctx)
	st.Capabilities["browser_consent_press"] = st.Runner.PromptPress.Available
	// Browsers are asked at once, each within statusBound: status answers
	// in that bound whatever any of them does.
	var visible []*Browser
	for _, b := range r.browserList() {
		if b.visibleTo(ctx) {
			visible = append(visible, b)
		}
	}
	infos := make([]localapi.BrowserInfo, len(visible))
	var wg sync.WaitGroup
	for i, b := range visible {
		wg.Add(1)
		go func() {
			defer wg.Done()
			infos[i] = b.info(ctx)
		}()
	}
	wg.Wait()
	st.Browsers = append(st.Browsers, infos...)
	return st, nil
}

// sandboxInfo is [platform.Sandbox] on the wire.
func sandboxInfo() localapi.Sandbox {
	sb := platform.Sandbox()
	return localapi.Sandbox{Enabled: sb.Enabled, Reason: sb.Reason}
}

// Capabilities are true only when this Runner really supports them.
func (r *Runner) Capabilities() map[string]bool {
	return map[string]bool{
		"browser_managed_profile":  true,
		"browser_extension_bridge": r.bridgeReachable(),
		"browser_surface_handoff":  false, // no handoff of a visible surface on Linux
	}
}

func (r *Runner) browserList() []*Browser {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Browser, 0, len(r.browsers))
	for _, b := range r.browsers {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].created.Before(out[j].created) })
	return out
}

// browser looks up a live browser. Unknown, retired and (later) unauthorized
// ids are refused identically.
func (r *Runner) browser(id string) (*Browser, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.browsers[id]; b != nil {
		return b, nil
	}
	return nil, fsm.Refuse(fsm.NotFound, "no such browser")
}

// page looks up a live page. A page of an older generation is stale.
func (r *Runner) page(id string) (*Page, error) {
	r.mu.Lock()
	p := r.pages[id]
	_, issued := r.issued[id]
	r.mu.Unlock()
	if p == nil {
		if issued {
			return nil, fsm.Refuse(fsm.BindingStale, "this page handle is from an earlier connection or a closed page; list pages again")
		}
		return nil, fsm.Refuse(fsm.NotFound, "no such page")
	}
	if p.browser.lost() {
		return nil, fsm.Refuse(fsm.AttachmentLost, "the browser of this page was lost (it crashed or its connection dropped); close it and launch another")
	}
	if err := p.browser.gens.Check(p.gen); err != nil {
		return nil, err
	}
	select {
	case <-p.sess.Done():
		return nil, fsm.Refuse(fsm.PageClosed, "the page is closed")
	default:
	}
	return p, nil
}

// retireLocked forgets a live page id for good: it stays issued, so it is
// refused as stale.
func (r *Runner) retireLocked(id string) {
	delete(r.pages, id)
}

var errClosed = errors.New("runner: shutting down")

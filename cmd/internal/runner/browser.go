package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/netguard"
	"github.com/webcodex/webcodex/platform"
	"github.com/webcodex/webcodex/reconnect"
)

// Browser is one browser the Runner drives: what every kind shares. Its
// life (lifecycle.go) is its kind's, owning the attachment machine; fields
// are guarded by mu.
type Browser struct {
	r        *Runner
	id       string
	profile  string // a managed profile's name; "" otherwise
	headless bool
	created  time.Time
	gens     reconnect.Generations
	life     lifecycle // owned, attached or a shared tab; set before b is listed

	// Attached browsers (endpoint) only: the proven endpoint and the grant
	// it was approved under, read by the consent and reconnect owners.
	ep            endpoint
	grant         *consent.Grant
	req           localapi.AttachRequest
	allowEvaluate bool

	gate    *origin.Gate       // the owner's allowlist for this browser
	creator *localapi.Boundary // the creating client's boundary; nil: the owner at a terminal

	closing  sync.Once
	attachMu sync.Mutex    // serializes attachPage: a target is attached once per generation
	done     chan struct{} // closed when teardown finished
	stop     chan struct{} // closed at teardown: ends the page goroutines below
	// watchWG counts the page goroutines (targets, raw sessions, request
	// interception); closeBrowser waits for them. The lifecycle's own
	// watcher is its own.
	watchWG sync.WaitGroup

	mu    sync.Mutex
	conn  *cdp.Conn        // the one socket of the current generation
	pages map[string]*Page // by opaque id
	// session is the MCP session that owns b ("" none: the owner at a
	// terminal, or released); keep asks that b outlive it (session.go).
	session string
	keep    bool
	pageSeq uint64         // pages in the order they were attached
	dl      *netguard.Jail // owned: the download jail (downloads.go)
}

// c returns the connection of the current generation.
func (b *Browser) c() *cdp.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conn
}

// Page is one page of a Browser.
type Page struct {
	id      string
	browser *Browser
	target  target.ID
	sess    *cdp.Session
	surf    *surface.Page
	gen     reconnect.Generation
	opened  bool // webcodex opened it (attached browsers: may be closed by close_page)
	// handedOver: an opened tab the agent gave to the person; it stays open
	// at detach (tabs.go). Guarded by browser.mu.
	handedOver bool
	// navFailed: the last goto failed in the browser (a network error),
	// so its error page is reported as that, not as leaving the allowlist.
	navFailed atomic.Bool

	raw *rawSession // raw CDP's own session (rawsession.go)

	// What the browser last said of the page, for a listing it does not
	// answer in time, and its place in listings (attach order); guarded
	// by browser.mu.
	lastURL, lastTitle string
	seq                uint64
}

var profileName = regexp.MustCompile(`^[a-z0-9-]{1,48}$`)

// Launch starts a browser webcodex owns: ephemeral (headless, temporary
// profile) by default, or the managed profile req.Managed (visible unless
// headless).
func (r *Runner) Launch(ctx context.Context, req localapi.LaunchRequest) (bi localapi.BrowserInfo, err error) {
	defer func() { r.auditBrowser(ctx, bi.ID, "launch", err) }()
	// Chromium's start-up is not a call on a page: a Runner whose calls are
	// bounded shorter still gives it the default bound.
	ctx, settle := r.call(ctx, "", "the launch", max(r.callBound(), DefaultCallBound))
	defer func() { err = settle(err) }()
	if !r.serving() {
		return localapi.BrowserInfo{}, errClosed
	}
	exe := r.opts.Chrome
	if exe == "" {
		var err error
		if exe, err = platform.FindChromium(); err != nil {
			return localapi.BrowserInfo{}, err
		}
	}
	b := &Browser{r: r, id: newID("b"), created: time.Now(), pages: map[string]*Page{}, done: make(chan struct{}), stop: make(chan struct{}), keep: req.Keep}
	o := newOwnedBrowser(b)
	b.life = o
	var dropped []origin.Dropped
	b.gate, dropped = origin.New(origin.Owned, req.Allow)
	for range dropped {
		r.logf("runner: an --allow entry was dropped")
	}
	lopts := platform.LaunchOptions{Exec: exe, StartTimeout: r.opts.StartTimeout}
	if req.Managed == "" {
		b.headless = true
		if req.Headless != nil && !*req.Headless {
			b.headless = false
		}
		lopts.RemoveUserDataDir = true // made in the launch directory below
	} else {
		if !profileName.MatchString(req.Managed) {
			return localapi.BrowserInfo{}, fsm.Refuse(fsm.InvalidArgument, "a managed profile name is 1 to 48 of a-z, 0-9 and '-', not a path")
		}
		b.profile, b.headless = req.Managed, req.Headless != nil && *req.Headless
		dir, lk, err := r.leaseManaged(req.Managed)
		if err != nil {
			return localapi.BrowserInfo{}, err
		}
		lopts.UserDataDir, o.procLease = dir, lk
	}
	// From here every failure aborts into the machine's declared teardown:
	// failed reaps what started (reap_process_tree), then
	// release_attachment frees what the launch made so far.
	abort := func(err error) (localapi.BrowserInfo, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if ferr := o.teardown(cctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return localapi.BrowserInfo{}, err
	}
	if err := o.prepareLaunch(&lopts); err != nil {
		return abort(err)
	}
	proc, err := platform.Launch(ctx, lopts)
	if err != nil {
		r.logLaunchFailure(err, o.launchDir, lopts.UserDataDir)
		return abort(r.launchFailed(err, exe))
	}
	o.proc = proc
	if ln := proc.PrivateNetworkListener(); ln != nil {
		o.egress = netguard.ServeProxy(b.gate, ln)
	}
	o.record = r.writeRecord(o, lopts)
	if err := b.connect(proc); err != nil {
		return abort(err)
	}
	if err := b.jailDownloads(ctx, o.launchDir); err != nil {
		return abort(err)
	}
	if err := r.register(ctx, b); err != nil {
		return abort(err)
	}
	r.logf("runner: launched browser %s (%s)", b.id, b.mode())
	return b.info(ctx), nil
}

// prepareLaunch makes what the browser is started with: the launch
// directory, the orphan record, an ephemeral profile and the egress proxy
// (each freed by release_attachment, whatever fails after).
func (o *ownedBrowser) prepareLaunch(lopts *platform.LaunchOptions) error {
	// What a launch makes in the temporary directory (the ephemeral
	// profile, the browser's TMPDIR) lives in one directory, recorded
	// before the browser starts: what a Runner killed mid-launch leaves,
	// the next Runner reclaims.
	launchDir, err := platform.ShortTempDir("webcodex-", platform.TempParentRoom)
	if err != nil {
		return fmt.Errorf("runner: temporary directory: %w", err)
	}
	o.launchDir, lopts.TempParent = launchDir, launchDir
	o.record = o.b.r.writeRecord(o, *lopts)
	if lopts.RemoveUserDataDir {
		lopts.UserDataDir = filepath.Join(launchDir, "profile")
		if err := os.Mkdir(lopts.UserDataDir, 0o700); err != nil {
			return fmt.Errorf("runner: temporary profile: %w", err)
		}
	}
	lopts.Headless = o.b.headless
	if !o.b.headless && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return fsm.Refuse(fsm.RequiresSetup, "a visible browser needs a display; pass --headless")
	}
	switch {
	case o.b.gate.OpenWeb():
	case platform.PrivateNetwork().Enabled:
		// The proxy serves the listener the launch hands back.
		lopts.PrivateNetwork = true
		lopts.ExtraArgs = append(lopts.ExtraArgs, netguard.ProxyLaunchArgs(platform.PrivateNetworkProxyAddr)...)
	default:
		egress, err := netguard.StartProxy(o.b.gate)
		if err != nil {
			return err
		}
		o.egress = egress
		lopts.ExtraArgs = append(lopts.ExtraArgs, netguard.ProxyLaunchArgs(egress.Addr())...)
	}
	return nil
}

// register moves a connected browser to ready, lists it, adopts its pages
// and starts its lifecycle's watcher.
func (r *Runner) register(ctx context.Context, b *Browser) error {
	r.mu.Lock()
	// Under r.mu, which close_browsers takes to list the browsers after the
	// machine left serving: a browser listed here is one it closes.
	if !r.serving() {
		r.mu.Unlock()
		return errClosed
	}
	b.setCreator(ctx)
	b.setSession(ctx)
	r.browsers[b.id] = b
	r.mu.Unlock()
	if err := b.life.prepare(ctx); err != nil {
		r.unlist(b)
		return err
	}
	if _, err := b.life.machine().Fire(ctx, lease.AttachUp); err != nil {
		r.unlist(b)
		return err
	}
	if err := b.adoptPages(ctx); err != nil {
		r.logf("runner: browser %s: listing pages: %s", b.id, refusalCode(err))
	}
	b.life.start()
	return nil
}

// unlist drops a browser that failed before it was ready: its caller fires
// failed and frees what it made. It takes closeBrowser's once, so a
// Shutdown that listed b meanwhile waits for this instead.
func (r *Runner) unlist(b *Browser) {
	b.closing.Do(func() {
		defer close(b.done)
		close(b.stop) // its page goroutines end
		r.mu.Lock()
		delete(r.browsers, b.id)
		r.mu.Unlock()
	})
	b.watchWG.Wait()
}

// leaseManaged checks the managed profile's directories and takes its
// process lease.
func (r *Runner) leaseManaged(name string) (string, *lease.ProcessLease, error) {
	root := filepath.Join(r.opts.StateDir, "browser", "profiles", name)
	data := filepath.Join(root, "data")
	if err := platform.EnsurePrivateDir(data); err != nil {
		return "", nil, err
	}
	state, err := platform.InspectSingletonLock(data)
	if err != nil {
		return "", nil, err
	}
	lk, err := lease.AcquireProcess(filepath.Join(root, "lease"), lockState(state), func() error { return platform.RemoveStaleLock(data) })
	if err != nil {
		return "", nil, err
	}
	return data, lk, nil
}

func lockState(s platform.LockState) lease.LockState {
	switch s {
	case platform.LockNone:
		return lease.LockAbsent
	case platform.LockStale:
		return lease.LockStale
	case platform.LockLive:
		return lease.LockLive
	}
	return lease.LockForeign // unknown states are never adopted
}

// connect takes the launched browser's DevTools pipe, its one connection:
// an owned browser listens on no port, so there is nothing to dial and no
// second generation (closing the pipe ends the browser).
func (b *Browser) connect(proc *platform.Process) error {
	from, to := proc.Pipe()
	if from == nil || to == nil {
		return errors.New("runner: connect to the browser: it has no DevTools pipe")
	}
	b.mu.Lock()
	b.conn = cdp.NewConn(cdp.NewPipeSocket(from, to, cdp.PipeOptions{}), cdp.ConnOptions{})
	b.mu.Unlock()
	return nil
}

// adoptPages registers the browser's existing page targets and follows
// new ones (a link that opens a tab, window.open) on this generation's
// connection.
func (b *Browser) adoptPages(ctx context.Context) error {
	conn := b.c()
	created, stopCreated := conn.Browser().Subscribe("Target.targetCreated")
	destroyed, stopDestroyed := conn.Browser().Subscribe("Target.targetDestroyed")
	if _, err := cdproto.Call(ctx, conn.Browser(), target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		stopCreated()
		stopDestroyed()
		return err
	}
	b.watchWG.Add(1)
	go func() {
		defer b.watchWG.Done()
		defer stopCreated()
		defer stopDestroyed()
		b.followTargets(conn, created, destroyed)
	}()
	res, err := cdproto.Call(ctx, conn.Browser(), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return err
	}
	for _, ti := range res.TargetInfos {
		if err := b.adopt(ctx, ti); err != nil {
			return err
		}
	}
	return nil
}

// adopt attaches to a page target unless it is not a page or, for an
// attached browser, its site is not allowed (unauthorized tabs are never
// attached, never listed).
func (b *Browser) adopt(ctx context.Context, ti *target.Info) error {
	if ti == nil || ti.Type != "page" {
		return nil // browser_ui and workers are not pages
	}
	if b.attached() && !b.gate.Allowed(ti.URL) {
		return nil
	}
	_, err := b.attachPage(ctx, ti.TargetID, false)
	return err
}

// followTargets attaches new pages and retires closed ones until the
// connection ends or the browser is torn down.
func (b *Browser) followTargets(conn *cdp.Conn, created, destroyed <-chan jsonv2.Value) {
	for {
		select {
		case raw, ok := <-created:
			if !ok {
				return
			}
			var ev target.EventTargetCreated
			if jsonv2.Unmarshal(raw, &ev) != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := b.adopt(ctx, ev.TargetInfo); err != nil {
				b.r.logf("runner: browser %s: adopting a new page: %s", b.id, refusalCode(err))
			}
			cancel()
		case raw, ok := <-destroyed:
			if !ok {
				return
			}
			var ev target.EventTargetDestroyed
			if jsonv2.Unmarshal(raw, &ev) == nil {
				b.forgetTarget(ev.TargetID)
			}
		case <-conn.Done():
			return
		case <-b.stop:
			return
		}
	}
}

// forgetTarget retires the page of a target that closed.
func (b *Browser) forgetTarget(id target.ID) {
	b.mu.Lock()
	var gone *Page
	for pid, p := range b.pages {
		if p.target == id {
			gone = p
			delete(b.pages, pid)
		}
	}
	b.mu.Unlock()
	if gone == nil {
		return
	}
	b.r.mu.Lock()
	b.r.retireLocked(gone.id)
	b.r.mu.Unlock()
	gone.surf.Close()
	gone.raw.close()
}

// attachPage attaches a flattened session to a page target and registers
// it; a target already attached in this generation returns its page.
func (b *Browser) attachPage(ctx context.Context, id target.ID, opened bool) (*Page, error) {
	b.attachMu.Lock()
	defer b.attachMu.Unlock()
	if p := b.pageOf(id); p != nil {
		if opened {
			b.mu.Lock()
			p.opened = true
			b.mu.Unlock()
		}
		return p, nil
	}
	sess, err := b.c().AttachTarget(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("runner: attach page: %w", err)
	}
	gen := b.gens.Current()
	p := &Page{id: newID("p"), browser: b, target: id, sess: sess, gen: gen, opened: opened}
	p.raw = newRawSession(p)
	surf, err := surface.New(ctx, b.gatedSession(sess, cdproto.FrameID(id)), surface.Options{
		Child:      b.gatedChild(sess),
		Generation: uint64(gen),
		Gate:       gateAdapter{g: b.r.gates, key: lease.GateKey{Browser: b.id, Target: string(id)}},
		UploadDir:  b.r.opts.UploadDir,
		Judge:      p.judge,
	})
	if err != nil {
		return nil, fmt.Errorf("runner: prepare page: %w", err)
	}
	p.surf = surf
	b.mu.Lock()
	b.pageSeq++
	p.seq = b.pageSeq
	b.pages[p.id] = p
	b.mu.Unlock()
	b.r.mu.Lock()
	b.r.pages[p.id] = p
	b.r.issued[p.id] = struct{}{}
	b.r.mu.Unlock()
	return p, nil
}

func (b *Browser) pageOf(id target.ID) *Page {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pages {
		if p.target == id {
			return p
		}
	}
	return nil
}

// gateAdapter gives surface the mutation gate of one target.
type gateAdapter struct {
	g   *lease.Gates
	key lease.GateKey
}

func (a gateAdapter) Acquire(ctx context.Context) (func(), error) {
	t, err := a.g.Acquire(ctx, a.key)
	if err != nil {
		return nil, err
	}
	if err := t.Check(); err != nil {
		t.Release()
		return nil, err
	}
	return t.Release, nil
}

// lost reports whether b is lost (an owned browser that crashed or
// dropped its connection, not yet closed).
func (b *Browser) lost() bool { return b.state() == lease.AttachLost }

// Close closes (owned) or detaches from (attached) a browser.
// Its answer carries the audit trail's head hash after the close record.
func (r *Runner) Close(ctx context.Context, req localapi.BrowserRequest) (localapi.CloseResult, error) {
	b, err := r.browser(req.Browser)
	if err != nil {
		r.auditBrowser(ctx, req.Browser, "close", err)
		return localapi.CloseResult{}, err
	}
	r.closeBrowser(ctx, b)
	head := r.auditBrowser(ctx, req.Browser, "close", nil)
	// How it ended is the machine's final state: closed (owned) or
	// detached (the person's).
	return localapi.CloseResult{Browser: b.id, Mode: b.mode(), Teardown: string(b.state()), AuditHead: head}, nil
}

// closeBrowser tears b down once, by its kind's declared teardown (owned:
// Browser.close, reap the process tree; attached: detach; then every kind
// releases the connection, the download jail, the pages, the gates and the
// registry entry, and an owned browser what its launch made). Every
// goroutine of b has ended when it returns.
func (r *Runner) closeBrowser(ctx context.Context, b *Browser) {
	b.closing.Do(func() {
		defer close(b.done)
		close(b.stop)
		b.life.stop() // its watcher has ended: the machine is at rest
		if err := b.life.teardown(ctx); err != nil {
			r.logf("runner: browser %s: %s", b.id, refusalCode(err))
		}
	})
	<-b.done
	b.watchWG.Wait()
}

// retirePages retires every page of b: unlisted, their ids stale, their
// surfaces and raw sessions closed. It is the one way a browser's pages go:
// at teardown, when an attached browser's connection is lost for good, and
// when a shared tab ends.
func (b *Browser) retirePages() {
	b.mu.Lock()
	pages := b.pages
	b.pages = map[string]*Page{}
	b.mu.Unlock()
	b.r.mu.Lock()
	for id := range pages {
		b.r.retireLocked(id)
	}
	b.r.mu.Unlock()
	for _, p := range pages {
		p.surf.Close()
		p.raw.close()
	}
}

// info describes b within statusBound whatever the browser does: its pages
// come from one Target.getTargets, answered by the browser process; when
// that does not answer in time, each page is listed with what was last
// known of it and marked unresponsive, never left out.
func (b *Browser) info(ctx context.Context) localapi.BrowserInfo {
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	bi := localapi.BrowserInfo{
		ID: b.id, Mode: b.mode(), Profile: b.profile, State: string(b.state()),
		Generation: uint64(b.gens.Current()), Headless: b.headless, Pages: []localapi.PageInfo{},
		Session: session,
	}
	b.life.describe(&bi)
	if b.lost() {
		bi.LostReason = b.life.lostReason() // its pages went with it
		return bi
	}
	pages, answered := b.pageInfos(ctx)
	bi.Pages, bi.Unresponsive = pages, !answered
	return bi
}

// pageInfos lists b's visible pages within statusBound, and reports whether
// the browser answered.
func (b *Browser) pageInfos(ctx context.Context) ([]localapi.PageInfo, bool) {
	if b.lost() {
		return []localapi.PageInfo{}, false // its pages went with it
	}
	ictx, cancel := context.WithTimeout(ctx, statusBound)
	defer cancel()
	var infos map[target.ID]*target.Info
	answered := false
	if c := b.c(); c != nil {
		if res, err := cdproto.Call(ictx, c.Browser(), target.GetTargets, target.GetTargetsParams{}); err == nil {
			answered = true
			infos = make(map[target.ID]*target.Info, len(res.TargetInfos))
			for _, ti := range res.TargetInfos {
				if ti != nil {
					infos[ti.TargetID] = ti
				}
			}
		}
	}
	out := []localapi.PageInfo{}
	pages := b.pageList()
	b.mu.Lock()
	sort.Slice(pages, func(i, j int) bool { return pages[i].seq < pages[j].seq })
	b.mu.Unlock()
	for _, p := range pages {
		pi := localapi.PageInfo{ID: p.id, Browser: b.id}
		b.mu.Lock()
		switch ti := infos[p.target]; {
		case ti != nil:
			p.lastURL, p.lastTitle = ti.URL, ti.Title
			pi.URL, pi.Title = ti.URL, ti.Title
		case answered:
			b.mu.Unlock()
			continue // closed meanwhile: followTargets retires it
		default:
			pi.URL, pi.Title, pi.Unresponsive = p.lastURL, p.lastTitle, true
		}
		b.mu.Unlock()
		if p.visible(pi) {
			out = append(out, pi)
		}
	}
	return out, answered
}

func (b *Browser) pageList() []*Page {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*Page, 0, len(b.pages))
	for _, p := range b.pages {
		out = append(out, p)
	}
	return out
}

package runner

import (
	"context"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// Sessions own their browsers. An MCP session (embedded, or a `webcodex mcp
// --runner` server, named by localapi.CallerHeader) sees and acts only on
// the browsers it launched or attached, or one it adopted by id; nothing
// falls back to another session's browser or page. The owner at a terminal
// (a request that names no session) sees every browser. This rule is finer
// than, and applies on top of, the creator boundary (boundary.go).
//
// A session id is bound to the process that first used it (its PID and
// start time), so another process cannot speak for it. When that process
// is gone, or the server ends the session itself, the browsers it launched
// are closed (those it asked to keep are released for adoption) and those
// it attached are detached.

// Bounds of the session table.
const (
	maxSessions       = 64              // live sessions with a process bound to them
	sessionPoll       = 2 * time.Second // how often the bound processes are checked
	sessionEndTimeout = 30 * time.Second
)

// mcpSession is one session bound to its process.
type mcpSession struct {
	peer platform.Fingerprint
}

// sessionTable holds the sessions bound to processes. Its zero value is
// ready to use; its watcher starts with the first bound session.
type sessionTable struct {
	mu   sync.Mutex // guards the fields that follow
	m    map[string]*mcpSession
	stop chan struct{} // nil until the watcher starts, with the first session
	wg   sync.WaitGroup
}

// sessionOf returns the session the request speaks for ("" for none: the
// owner at a terminal), and false when the request claims a session bound
// to another process: such a request owns nothing and sees nothing.
func (r *Runner) sessionOf(ctx context.Context) (string, bool) {
	c, ok := localapi.CallerFrom(ctx)
	if !ok {
		return "", true
	}
	peer, ok := localapi.PeerFrom(ctx)
	if !ok {
		return c.Session, true // in-process (the embedded Runner): one session
	}
	fp, err := platform.FingerprintOf(peer.PID)
	if err != nil {
		return c.Session, false
	}
	return c.Session, r.sessions.bind(r, c.Session, fp)
}

// bind binds session to the process fp on first sight and reports whether
// fp is the process bound to it.
func (t *sessionTable) bind(r *Runner, session string, fp platform.Fingerprint) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[session]; s != nil {
		return s.peer == fp
	}
	// The Runner's machine, not a flag of the table, says whether sessions
	// are still bound: release_runner stops the watcher after it left
	// serving, so none starts after.
	if !r.serving() || len(t.m) >= maxSessions {
		return false
	}
	if t.m == nil {
		t.m = map[string]*mcpSession{}
	}
	t.m[session] = &mcpSession{peer: fp}
	if t.stop == nil {
		t.stop = make(chan struct{})
		t.wg.Add(1)
		go t.watch(r)
	}
	return true
}

// watch ends the sessions whose process is gone, until the Runner shuts
// down.
func (t *sessionTable) watch(r *Runner) {
	defer t.wg.Done()
	tick := time.NewTicker(sessionPoll)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		var gone []string
		for id, s := range t.m {
			if !s.peer.Alive() {
				gone = append(gone, id)
			}
		}
		t.mu.Unlock()
		for _, id := range gone {
			ctx, cancel := context.WithTimeout(context.Background(), sessionEndTimeout)
			n := r.endSession(ctx, id)
			cancel()
			r.logf("runner: session %s ended with its process: %d browsers closed or detached", id, n)
		}
	}
}

// close stops the watcher and waits for it. release_runner calls it once,
// as the Runner's machine leaves draining.
func (t *sessionTable) close() {
	t.mu.Lock()
	if t.stop != nil {
		close(t.stop)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// forget drops a session from the table.
func (t *sessionTable) forget(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, session)
}

// ownedBy reports whether the session of the request may see b: its own
// browsers, or every browser for the owner at a terminal.
func (b *Browser) ownedBy(ctx context.Context) bool {
	s, ok := b.r.sessionOf(ctx)
	switch {
	case !ok:
		return false
	case s == "":
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session == s
}

// setSession records the session creating b.
func (b *Browser) setSession(ctx context.Context) {
	if s, ok := b.r.sessionOf(ctx); ok {
		b.mu.Lock()
		b.session = s
		b.mu.Unlock()
	}
}

// endSession closes the browsers session launched, releases those it asked
// to keep and detaches those it attached; it returns how many it closed or
// detached.
func (r *Runner) endSession(ctx context.Context, session string) int {
	r.sessions.forget(session)
	var ended []*Browser
	for _, b := range r.browserList() {
		b.mu.Lock()
		mine, keep := b.session == session, b.keep
		if mine && keep {
			b.session, b.keep = "", false // released: adoptable by id
		}
		b.mu.Unlock()
		if mine && !keep {
			ended = append(ended, b)
		}
	}
	var wg sync.WaitGroup
	for _, b := range ended {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.closeBrowser(ctx, b)
			r.auditBrowser(ctx, b.id, "session_end", nil)
		}()
	}
	wg.Wait()
	return len(ended)
}

// EndSession ends the caller's session (a `webcodex mcp --runner` server
// that is shutting down): see endSession.
func (r *Runner) EndSession(ctx context.Context, _ struct{}) (localapi.EndSessionResult, error) {
	s, ok := r.sessionOf(ctx)
	if !ok || s == "" {
		return localapi.EndSessionResult{}, fsm.Refuse(fsm.InvalidArgument, "end_session needs the caller's own session")
	}
	return localapi.EndSessionResult{Ended: r.endSession(ctx, s)}, nil
}

// Adopt makes a browser that no session owns (released by a session that
// asked to keep it) the caller's, by its id, within the creator boundary: a
// browser created under another boundary is refused like an unknown id, and
// so is one another session owns.
func (r *Runner) Adopt(ctx context.Context, req localapi.BrowserRequest) (_ localapi.BrowserInfo, err error) {
	defer func() { r.auditBrowser(ctx, req.Browser, "adopt", err) }()
	s, ok := r.sessionOf(ctx)
	if !ok || s == "" {
		return localapi.BrowserInfo{}, fsm.Refuse(fsm.InvalidArgument, "adopt is for an MCP session; the owner at a terminal sees every browser already")
	}
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.BrowserInfo{}, err
	}
	if !b.creatorAdmits(ctx) {
		return localapi.BrowserInfo{}, fsm.Refuse(fsm.NotFound, "no such browser")
	}
	b.mu.Lock()
	free := b.session == "" || b.session == s
	if free {
		b.session = s
	}
	b.mu.Unlock()
	if !free {
		return localapi.BrowserInfo{}, fsm.Refuse(fsm.NotFound, "no such browser")
	}
	ictx, cancel := context.WithTimeout(ctx, statusBound)
	defer cancel()
	return b.info(ictx), nil
}

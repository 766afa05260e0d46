package runner

import (
	"context"
	"errors"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/extension/bridge"
	"github.com/webcodex/webcodex/extension/install"
	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/reconnect"
)

// ViaExtension is BrowserInfo.Via for a tab shared from the extension.
const ViaExtension = "extension"

// startBridge opens the extension bridge's loopback listener when the
// bridge is installed (webcodex install-bridge wrote the installation
// record): a Runner without it listens on no TCP port at all.
func (r *Runner) startBridge() {
	if !install.Installed(r.opts.StateDir) {
		return
	}
	srv, err := bridge.Listen(bridge.Options{StateDir: r.opts.StateDir, Logf: r.opts.Logf})
	if err != nil {
		r.logf("runner: the extension bridge did not start: %s", refusalCode(err))
		return
	}
	r.mu.Lock()
	r.ext = srv
	r.mu.Unlock()
}

// stopBridge closes the listener: every shared tab's lease ends, and the
// native hosts exit when their connection goes.
func (r *Runner) stopBridge() {
	r.mu.Lock()
	srv := r.ext
	r.ext = nil
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

func (r *Runner) bridgeServer() *bridge.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ext
}

// bridgeReachable is the extension_bridge capability: this Runner owns a
// live listener for an installed bridge. It does not mean a tab is shared
// or that Chrome has loaded the extension.
func (r *Runner) bridgeReachable() bool {
	srv := r.bridgeServer()
	return srv != nil && srv.Status().Listening
}

// BridgeStatus reports the bridge (counts only: no token, port or URL).
func (r *Runner) BridgeStatus(ctx context.Context, _ struct{}) (localapi.BridgeStatus, error) {
	st := localapi.BridgeStatus{Installed: install.Installed(r.opts.StateDir)}
	srv := r.bridgeServer()
	switch {
	case !st.Installed:
		st.Why = "webcodex install-bridge has not been run for this Runner's state directory"
		st.Next = "run webcodex install-bridge, then load the extension (chrome://extensions, developer mode, Load unpacked: extension/)"
	case srv == nil:
		st.Why = "this Runner started before the bridge was installed, so it opened no bridge"
		st.Next = "restart the Runner (webcodex stop) so it opens the bridge"
	default:
		s := srv.Status()
		st.Listening, st.Peers, st.Connected, st.Offers, st.Attached = s.Listening, s.Peers, s.Verified, s.Offers, s.Routes
		if s.Verified == 0 {
			st.Why, st.Next = r.whyNoHost()
		} else if s.Offers > 0 {
			st.Next = "webcodex discover lists the shared tabs; webcodex attach --offer ID attaches one"
		}
	}
	return st, nil
}

// whyNoHost says why no native host is connected to a listening bridge,
// and what to do: from the host's record of its last start in this state
// root (a host Chrome started for another state root writes nothing here)
// and whether the installed manifest starts the host for this Runner.
func (r *Runner) whyNoHost() (why, next string) {
	share := "in Chrome, open the webcodex extension's popup and press \"Share current tab\""
	reinstall := "run webcodex install-bridge in this Runner's environment (the same WEBCODEX_STATE_DIR), restart Chrome's extension (or Chrome), then press Share again"
	run, err := rendezvous.ReadHostRun(r.opts.StateDir)
	at := ""
	if err == nil {
		at = time.Unix(run.At, 0).Local().Format(time.TimeOnly)
	}
	switch {
	case err == nil && run.Outcome == rendezvous.HostRunnerAbsent:
		return "the native host last started at " + at + " and found no Runner listening for this state directory", share
	case err == nil && run.Outcome == rendezvous.HostWrongOrigin:
		return "the native host last started at " + at + " for an extension other than the one installed", "run webcodex install-bridge --extension-id ID with the id chrome://extensions shows, then press Share again"
	case err == nil && run.Outcome == rendezvous.HostNotInstalled:
		return "the native host last started at " + at + " and found no valid installation record", reinstall
	case err == nil && run.Outcome == rendezvous.HostNotBrowser:
		return "the native host last started at " + at + " from a process that is not a Chromium-family browser", "let Chrome start the host: press Share in the extension's popup"
	case err == nil && run.Outcome == rendezvous.HostHandshakeFail:
		return "the native host last started at " + at + " and this Runner did not accept its handshake in time", share
	}
	for _, browser := range []string{"chromium", "chrome"} {
		if install.ManifestState("", browser, r.opts.StateDir) == "other" {
			return "the native messaging manifest for " + browser + " starts a host for another state directory (installed with another WEBCODEX_STATE_DIR, or by an older webcodex)", reinstall
		}
	}
	if err == nil && run.Outcome == rendezvous.HostConnected {
		return "the native host connected at " + at + " and has since disconnected (the extension closed its port, or Chrome exited)", share
	}
	return "no native host has started for this Runner: Chrome has not started it (the extension is not loaded, or Share was not pressed)", share
}

// discoverOffers lists the pending offers for Discover. A client with a
// boundary (an MCP server's allowlist) sees an offer's origin and title
// only when its allowlist allows the tab's URL; the id alone is always
// listed. The owner at a terminal, who shared the tabs, sees them all.
func (r *Runner) discoverOffers(ctx context.Context) []localapi.BridgeOffer {
	if b, ok := localapi.BoundaryFrom(ctx); ok {
		return r.BridgeOffers(b.Allow, false)
	}
	return r.BridgeOffers(nil, true)
}

// BridgeOffers lists the pending offers, with origin and title where allow
// allows the tab's URL (or everywhere when all is set).
func (r *Runner) BridgeOffers(allow []string, all bool) []localapi.BridgeOffer {
	srv := r.bridgeServer()
	out := []localapi.BridgeOffer{}
	if srv == nil {
		return out
	}
	gate, _ := origin.New(origin.Attached, allow)
	for _, o := range srv.Offers() {
		bo := localapi.BridgeOffer{ID: o.ID, Expires: o.Expires}
		if all || gate.Allowed(o.URL) {
			bo.Origin, _ = gate.Origin(o.URL) // never its path
			bo.Title = capTitle(o.Title)
		}
		out = append(out, bo)
	}
	return out
}

func capTitle(s string) string {
	const max = 200
	if r := []rune(s); len(r) > max {
		return string(r[:max])
	}
	return s
}

// AttachOffer attaches the tab a person shared from the extension, by its
// exact offer id: an attached_external browser whose one page is that tab,
// driven through the bridge Socket by the same Conn, surface, fences,
// refusals and bounds as any page. Teardown only detaches; a revoke, a
// closed tab, a detach or a lost native host leaves the browser lost with
// the fixed reason, and a new Share is needed.
func (r *Runner) AttachOffer(ctx context.Context, req localapi.AttachOfferRequest) (res localapi.AttachResult, err error) {
	defer func() { r.auditBrowser(ctx, res.Browser.ID, "attach_offer", err) }()
	srv := r.bridgeServer()
	if srv == nil {
		return localapi.AttachResult{}, fsm.Refuse(fsm.RequiresSetup, "the extension bridge is not installed here: run webcodex install-bridge, load the extension, then share a tab")
	}
	if req.Offer == "" {
		return localapi.AttachResult{}, fsm.Refuse(fsm.InvalidArgument, "name the offer to attach (webcodex discover lists them)")
	}
	gate, dropped := origin.New(origin.Attached, req.Allow)
	for range dropped {
		r.logf("runner: an --allow entry was dropped")
	}
	// The shared tab's origin is judged before the offer is consumed: an
	// offer this caller may not see stays for one that may.
	var found bool
	for _, o := range srv.Offers() {
		if o.ID == req.Offer {
			found = true
			if gate.Check(o.URL) != nil {
				// Never the gate's own refusal: it names the origin, which
				// this caller may not see (discover hides it too).
				return localapi.AttachResult{}, fsm.Refuse(fsm.OriginDenied, "the shared tab's origin is outside the origins this session may reach; the person shares a tab it may reach, or the owner widens --allow")
			}
		}
	}
	if !found {
		return localapi.AttachResult{}, fsm.Refuse(fsm.NotFound, "no such live offer: the person shares the tab again from the extension")
	}
	actx, cancel := context.WithTimeout(ctx, r.callBound())
	defer cancel()
	sock, err := srv.Attach(actx, req.Offer)
	if err != nil {
		return localapi.AttachResult{}, err
	}
	b := &Browser{r: r, id: newID("b"), created: time.Now(), pages: map[string]*Page{},
		done: make(chan struct{}), stop: make(chan struct{}), gate: gate, allowEvaluate: req.AllowEvaluate}
	b.life = newSharedTab(b, sock)
	b.gens.Advance()
	b.mu.Lock()
	b.conn = cdp.NewConn(sock, cdp.ConnOptions{})
	b.mu.Unlock()
	if err := r.register(ctx, b); err != nil {
		if ferr := b.life.teardown(ctx); ferr != nil { // releases the socket: the tab is the person's
			err = errors.Join(err, ferr)
		}
		return localapi.AttachResult{}, err
	}
	r.logf("runner: attached browser %s (a tab shared from the extension)", b.id)
	return localapi.AttachResult{
		Browser: b.info(ctx), Product: ViaExtension, CapabilitiesInvalidated: false,
		NextAction: "list pages (webcodex pages BROWSER) and snapshot the shared tab", EndpointOwnership: "extension_offer",
		SideEffects: map[string]bool{"launched_browser": false, "restarted_browser": false, "created_profile": false,
			"copied_profile_data": false, "changed_preferences": false},
	}, nil
}

// sharedTab is the life of a tab shared from the extension, by
// lease.SharedTabSpec: a shared tab never reconnects by itself (a new Share
// is a new offer), so when its socket ends the machine moves straight to
// lost, its effect retiring the pages, and the browser keeps the share's
// fixed reason. Teardown only detaches.
type sharedTab struct {
	b    *Browser
	m    attachmentOwner
	w    watcher
	sock *bridge.Socket
}

func newSharedTab(b *Browser, sock *bridge.Socket) *sharedTab {
	s := &sharedTab{b: b, w: newWatcher(), sock: sock}
	s.m = fsm.NewOwner(lease.SharedTabSpec, attachmentEffects{
		lease.EffectRetirePages:    s.retirePages,
		lease.EffectDetachDebugger: s.detachDebugger,
		lease.EffectRelease:        b.release,
	})
	return s
}

func (s *sharedTab) machine() attachmentOwner      { return s.m }
func (s *sharedTab) prepare(context.Context) error { return nil }
func (s *sharedTab) start()                        { s.w.run(s.watch) }
func (s *sharedTab) stop()                         { s.w.end() }

func (s *sharedTab) watch() {
	b := s.b
	select {
	case <-b.c().Done():
	case <-s.w.quit:
		return
	}
	select {
	case <-s.w.quit:
		return // our own teardown closed it
	default:
	}
	if _, err := b.fire(context.Background(), lease.AttachSocketLost); err != nil {
		return // logged
	}
	b.r.logf("runner: browser %s: the shared tab ended (%s)", b.id, s.lostReason())
}

// lostReason is the socket's own: why the extension ended the share.
func (s *sharedTab) lostReason() string {
	if reason := s.sock.Reason(); reason != "" {
		return reason
	}
	return "connection_lost"
}

// retirePages is retire_pages: the share ended, so its pages are retired
// (their ids stay refused as closed) and nothing re-attaches them.
func (s *sharedTab) retirePages(context.Context, attachmentStep) (lease.AttachTrigger, error) {
	s.b.retirePages()
	return "", nil
}

func (s *sharedTab) detachDebugger(ctx context.Context, _ attachmentStep) (lease.AttachTrigger, error) {
	s.b.detach(ctx)
	return "", nil
}

// teardown is lease.DetachTeardown: detach the debugger, then release.
func (s *sharedTab) teardown(ctx context.Context) error {
	return s.b.tearDown(ctx, lease.DetachTeardown)
}

func (s *sharedTab) reconnect(context.Context) (reconnect.Result, error) {
	return reconnect.Result{}, fsm.Refuse(fsm.RouteUnavailable, "a tab shared from the extension does not reconnect: the person shares it again")
}

func (s *sharedTab) describe(bi *localapi.BrowserInfo) { bi.Via = ViaExtension }

func (s *sharedTab) mode() string { return localapi.ModeAttached }

// offersWaiting reports whether a shared tab waits to be attached: the
// Runner is not idle while a person's Share is pending (ten minutes at
// most).
func (r *Runner) offersWaiting() bool {
	srv := r.bridgeServer()
	return srv != nil && srv.Status().Offers > 0
}

package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/reconnect"
)

// attachedBrowser is the life of the person's browser attached through its
// debugging endpoint, by lease.ExternalAttachmentSpec: a lost socket starts
// the reconnect machine (its Coordinator), and teardown only detaches.
type attachedBrowser struct {
	b     *Browser
	m     attachmentOwner
	w     watcher
	coord *reconnect.Coordinator

	// lostConn is the connection whose loss the watcher is reporting; only
	// the watcher goroutine (and the effect it runs) touches it.
	lostConn *cdp.Conn
}

func newAttachedBrowser(b *Browser) *attachedBrowser {
	a := &attachedBrowser{b: b, w: newWatcher()}
	a.m = fsm.NewOwner(lease.ExternalAttachmentSpec, attachmentEffects{
		lease.EffectReconnect:      a.startReconnect,
		lease.EffectDetachDebugger: a.detachDebugger,
		lease.EffectRelease:        b.release,
	})
	a.coord = reconnect.NewCoordinator(a.reconnectHooks(), &b.gens)
	return a
}

func (a *attachedBrowser) machine() attachmentOwner { return a.m }

// prepare installs nothing: the person's own browsing is never blocked.
func (a *attachedBrowser) prepare(context.Context) error { return nil }

func (a *attachedBrowser) start() { a.w.run(a.watch) }

// stop cancels a running reconnect (the session ended), then waits for the
// watcher, which sees the reconnect give up.
func (a *attachedBrowser) stop() {
	a.coord.Close()
	a.w.end()
}

// watch reports each loss of the socket to the machine, whose effect
// reconnects; an exhausted or revoked reconnect leaves the browser lost
// (never closed: it is the person's).
func (a *attachedBrowser) watch() {
	b := a.b
	for {
		conn := b.c()
		select {
		case <-conn.Done():
		case <-a.w.quit:
			return
		}
		select {
		case <-a.w.quit:
			return // our own teardown closed the socket
		default:
		}
		b.r.logf("runner: browser %s: connection lost; reconnecting", b.id)
		a.lostConn = conn
		step, err := b.fire(context.Background(), lease.AttachSocketLost)
		if err != nil || step.To != lease.AttachReady {
			return // lost (or refused, logged): nothing more to watch
		}
	}
}

// startReconnect is start_reconnect: it runs the reconnect machine (or
// joins the flight a forced Reconnect started) and answers reconnected or
// gave_up.
func (a *attachedBrowser) startReconnect(ctx context.Context, _ attachmentStep) (lease.AttachTrigger, error) {
	b := a.b
	if cur := b.c(); cur != a.lostConn {
		select {
		case <-cur.Done():
		default:
			return lease.AttachReconnected, nil // a forced Reconnect already rebound
		}
	}
	rctx, cancel := context.WithTimeout(ctx, reconnect.DefaultDeadline+5*time.Second)
	defer cancel()
	if _, err := a.coord.Reconnect(rctx); err != nil {
		a.invalidate() // nothing of a lost connection stays usable
		b.r.logf("runner: browser %s: reconnect ended: %s", b.id, refusalCode(err))
		return lease.AttachGiveUp, nil
	}
	return lease.AttachReconnected, nil
}

// detachDebugger is detach_debugger, the only teardown.
func (a *attachedBrowser) detachDebugger(ctx context.Context, _ attachmentStep) (lease.AttachTrigger, error) {
	a.b.detach(ctx)
	return "", nil
}

// teardown is lease.DetachTeardown: detach the debugger, then release.
func (a *attachedBrowser) teardown(ctx context.Context) error {
	return a.b.tearDown(ctx, lease.DetachTeardown)
}

// lostReason: an attached browser is lost only when its connection went
// and the reconnect machine gave up.
func (a *attachedBrowser) lostReason() string { return "connection_lost" }

func (a *attachedBrowser) reconnect(ctx context.Context) (reconnect.Result, error) {
	return a.coord.Reconnect(ctx)
}

func (a *attachedBrowser) describe(bi *localapi.BrowserInfo) {
	if a.b.grant != nil {
		exp := a.b.grant.Expiry()
		left := a.coord.AttemptsLeft()
		bi.GrantExpires, bi.AttemptsLeft = &exp, &left
	}
}

// invalidate retires every page of the connection that was lost.
func (a *attachedBrowser) invalidate() { a.b.retirePages() }

// reconnectHooks are the effects of the reconnect machine for b.
func (a *attachedBrowser) reconnectHooks() reconnect.Hooks {
	b, r := a.b, a.b.r
	return reconnect.Hooks{
		CloseGates: func() { r.gates.CloseBrowser(b.id) },
		Revalidate: func(context.Context) (bool, error) {
			if err := r.broker.Revalidate(b.ep.key(), b.grant); err != nil {
				return false, err
			}
			return b.ep.reprove(), nil
		},
		Dial: func(ctx context.Context, attempt int, prompt reconnect.Prompt) (reconnect.Dialed, error) {
			b.mu.Lock()
			old := b.conn
			b.mu.Unlock()
			old.Close() // one socket per generation: the old one is gone for good
			sock, err := r.dialPressing(ctx, b, prompt)
			if err != nil {
				if isHandshakeStatus(err, 403) {
					return reconnect.Dialed{}, fmt.Errorf("%w: %v", reconnect.ErrDismissed, err)
				}
				return reconnect.Dialed{}, err
			}
			return reconnect.Dialed{
				OwnerReproved: b.ep.reprove(), // on the live socket: a PID or port reused since the loss is refused
				Adopt: func() {
					r.countHandshake()
					b.mu.Lock()
					b.conn = cdp.NewConn(sock, cdp.ConnOptions{})
					b.mu.Unlock()
				},
				Close: func() { sock.Close() },
			}, nil
		},
		Invalidate: func(reconnect.Generation) { a.invalidate() },
		ReopenGates: func() {
			r.gates.ReopenBrowser(b.id)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := b.adoptPages(ctx); err != nil {
				r.logf("runner: browser %s: listing pages after reconnect: %v", b.id, err)
			}
		},
		RevokeGrant: func() { r.broker.RevokeBrowser(b.ep.key()) },
	}
}

func (a *attachedBrowser) mode() string { return localapi.ModeAttached }

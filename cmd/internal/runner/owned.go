package runner

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/netguard"
	"github.com/webcodex/webcodex/platform"
	"github.com/webcodex/webcodex/reconnect"
)

// ownedBrowser is the life of a browser webcodex launched (ephemeral or
// managed), by lease.OwnedAttachmentSpec. Its one connection is the
// DevTools pipe of the process it started: nothing listens on a port, so
// there is nothing to dial again. A pipe that drops means the process is
// gone or wedged, and either way it is torn down: the machine has no
// reconnecting state, and Reconnect refuses.
type ownedBrowser struct {
	b *Browser
	m attachmentOwner
	w watcher

	proc      *platform.Process
	procLease *lease.ProcessLease
	record    string // orphan record path
	launchDir string // the temporary directory of this launch
	egress    *netguard.Proxy
}

func newOwnedBrowser(b *Browser) *ownedBrowser {
	o := &ownedBrowser{b: b, w: newWatcher()}
	o.m = fsm.NewOwner(lease.OwnedAttachmentSpec, attachmentEffects{
		lease.EffectReap:         o.reap,
		lease.EffectCloseBrowser: o.closeBrowser,
		lease.EffectRelease:      o.release,
	})
	return o
}

func (o *ownedBrowser) machine() attachmentOwner { return o.m }

// prepare blocks denied requests before any page is adopted: from here no
// request of the browser reaches an origin the allowlist denies.
func (o *ownedBrowser) prepare(ctx context.Context) error {
	return o.b.blockDeniedRequests(ctx, o.b.c())
}

func (o *ownedBrowser) start() { o.w.run(o.watch) }
func (o *ownedBrowser) stop()  { o.w.end() }

// lostExitWait bounds the wait for an owned browser whose pipe dropped to
// exit by itself before its group is reaped.
const lostExitWait = 5 * time.Second

// watch moves the browser to lost when its process exits or its pipe
// drops; the edge's effect reaps what is left of its group (and closes the
// pipe and the page surfaces with it), and it stays listed, lost with the
// reason, until someone closes it.
func (o *ownedBrowser) watch() {
	b := o.b
	trigger := lease.AttachExited
	select {
	case <-o.proc.Exited():
		b.r.logf("runner: browser %s exited on its own", b.id)
	case <-b.c().Done():
		b.r.logf("runner: browser %s: connection lost", b.id)
		t := time.NewTimer(lostExitWait)
		select { // a browser whose pipe dropped is on its way out
		case <-o.proc.Exited(): // it went by itself: the pipe was only the first sign
		case <-t.C:
			trigger = lease.AttachSocketLost // alive without its pipe: wedged
		case <-o.w.quit:
			t.Stop()
			return
		}
		t.Stop()
	case <-o.w.quit:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := b.fire(ctx, trigger); err != nil {
		return // refused (logged by fire): closing already, and teardown reaps
	}
}

// reap is reap_process_tree: no process of the group remains, and the pipe
// and the page surfaces go with it. A launch that failed before its process
// ran has none (platform.Launch reaped what it started); after
// close_browser it only waits for that teardown, since Close runs once.
func (o *ownedBrowser) reap(ctx context.Context, _ attachmentStep) (lease.AttachTrigger, error) {
	b := o.b
	if o.proc != nil {
		if err := o.proc.Close(ctx, nil); err != nil {
			b.r.logf("runner: browser %s: reaping its processes: %s", b.id, refusalCode(err))
		}
	}
	if c := b.c(); c != nil {
		c.Close()
	}
	for _, p := range b.pageList() {
		p.surf.Close()
	}
	return "", nil
}

// closeBrowser is close_browser: Browser.close, so cookies flush, then the
// group is reaped as the process ends; the machine moves on to closed.
func (o *ownedBrowser) closeBrowser(ctx context.Context, _ attachmentStep) (lease.AttachTrigger, error) {
	browserClose := func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, o.b.c().Browser(), browser.Close, cdproto.Empty{})
		if errors.Is(err, cdp.ErrClosed) {
			return nil // the browser closed the pipe as it went
		}
		return err
	}
	if err := o.proc.Close(ctx, browserClose); err != nil {
		o.b.r.logf("runner: browser %s: closing: %s", o.b.id, refusalCode(err))
	}
	return lease.AttachClosedDone, nil
}

// teardown is lease.OwnedTeardown: a ready browser is closed
// (Browser.close, reap), a lost one or a failed launch finished, and then
// release_attachment frees what it held. A process that exited unnoticed
// is first moved to lost, so the machine says so.
func (o *ownedBrowser) teardown(ctx context.Context) error {
	if o.m.State() == lease.AttachReady {
		select {
		case <-o.proc.Exited():
			if _, err := o.b.fire(ctx, lease.AttachExited); err != nil {
				return err
			}
		default:
		}
	}
	return o.b.tearDown(ctx, lease.OwnedTeardown)
}

// lostReason is read from the step that took the machine to lost: the
// process exited (crashed), or it lived on without its pipe (wedged).
func (o *ownedBrowser) lostReason() string {
	if arrivedBy(o.m, lease.AttachLost) == lease.AttachSocketLost {
		return "connection_lost"
	}
	return "crashed"
}

// mode is ephemeral, or managed for a named profile.
func (o *ownedBrowser) mode() string {
	if o.b.profile != "" {
		return localapi.ModeManaged
	}
	return localapi.ModeEphemeral
}

// release is release_attachment for an owned browser: what every kind
// holds (Browser.release), then what the launch made: the egress proxy,
// the profile lease, the temporary directory (an ephemeral profile is
// inside it) and the orphan record.
func (o *ownedBrowser) release(ctx context.Context, step attachmentStep) (lease.AttachTrigger, error) {
	o.b.release(ctx, step)
	if o.egress != nil {
		o.egress.Close()
	}
	if o.procLease != nil {
		o.procLease.Release()
	}
	if o.launchDir != "" {
		os.RemoveAll(o.launchDir)
	}
	o.b.r.removeRecord(o.record)
	return "", nil
}

func (o *ownedBrowser) reconnect(context.Context) (reconnect.Result, error) {
	return reconnect.Result{}, fsm.Refuse(fsm.RouteUnavailable,
		"an owned browser does not reconnect: its one connection is the DevTools pipe of the process webcodex started, "+
			"and a lost pipe means that process is gone or wedged; close it and launch another")
}

func (o *ownedBrowser) describe(*localapi.BrowserInfo) {}

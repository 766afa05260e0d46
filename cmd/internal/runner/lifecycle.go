package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/reconnect"
)

// lifecycle is what differs between the kinds of browser the Runner
// drives: how one comes up, what it does when its connection goes, how it
// reconnects and how it is torn down. Each kind owns its attachment machine
// through an [fsm.Owner], so its effects run only when the machine returns
// them. The Runner keeps the registry, the operations and the audit; a
// Browser keeps what every kind shares (pages, gate, connection).
//
// The kinds: [ownedBrowser] (launched by webcodex, on its DevTools pipe),
// [attachedBrowser] (the person's browser, through its debugging endpoint)
// and [sharedTab] (one tab shared from the extension).
type lifecycle interface {
	// machine is the attachment machine's owner.
	machine() attachmentOwner
	// prepare runs after the connection is made and before the machine
	// moves to ready.
	prepare(ctx context.Context) error
	// start starts the goroutine that watches the connection (and, for an
	// owned browser, the process); stop ends it and waits for it.
	start()
	stop()
	// teardown drives the machine through its kind's declared teardown
	// (lease.OwnedTeardown, lease.DetachTeardown) to its terminal state,
	// the edges' effects freeing what the browser held; how it ended is the
	// machine's final state. It is also how an aborted launch or attach
	// frees what it made.
	teardown(ctx context.Context) error
	// lostReason says why the machine is in lost, read from the step that
	// took it there or from the connection's own reason.
	lostReason() string
	// mode is the ownership mode on the wire (localapi.Mode*).
	mode() string
	// reconnect forces a reconnect, or refuses one the kind cannot make.
	reconnect(ctx context.Context) (reconnect.Result, error)
	// describe adds what only this kind knows to bi.
	describe(bi *localapi.BrowserInfo)
}

type attachmentOwner = *fsm.Owner[lease.AttachState, lease.AttachTrigger, struct{}]

type attachmentEffects = fsm.Effects[lease.AttachState, lease.AttachTrigger]

type attachmentStep = fsm.Step[lease.AttachState, lease.AttachTrigger]

// watcher is a lifecycle's one watch goroutine and the wait for it. A
// watcher ended before it ran (a Shutdown racing a registration) never
// starts its goroutine: quit, closed once by end, says so.
type watcher struct {
	wg   sync.WaitGroup
	quit chan struct{}
	mu   sync.Mutex // serializes run and end
}

func newWatcher() watcher { return watcher{quit: make(chan struct{})} }

func (w *watcher) run(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.quit:
		return
	default:
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}

// end asks the goroutine to stop and waits for it.
func (w *watcher) end() {
	w.mu.Lock()
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// state returns b's attachment state.
func (b *Browser) state() lease.AttachState { return b.life.machine().State() }

// mode is b's ownership mode on the wire, answered by its kind.
func (b *Browser) mode() string { return b.life.mode() }

// managed reports whether b runs a managed (persistent) profile.
func (b *Browser) managed() bool { return b.life.mode() == localapi.ModeManaged }

// arrivedBy is the trigger that last moved m into st, or "": a reason rides
// on the step the machine took, not in a field beside it.
func arrivedBy(m attachmentOwner, st lease.AttachState) lease.AttachTrigger {
	tr := m.Trace()
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].To == string(st) {
			return lease.AttachTrigger(tr[i].On)
		}
	}
	return ""
}

// attached reports whether b is the person's (an endpoint attachment or a
// shared tab): its unauthorized tabs are never adopted, and teardown only
// detaches.
func (b *Browser) attached() bool {
	_, owned := b.life.(*ownedBrowser)
	return !owned
}

// fire fires t on b's machine (running the effects it returns) and logs a
// refusal or an effect's failure.
func (b *Browser) fire(ctx context.Context, t lease.AttachTrigger) (attachmentStep, error) {
	step, err := b.life.machine().Fire(ctx, t)
	if err != nil {
		b.r.logf("runner: browser %s: %s in %s: %s", b.id, t, b.state(), refusalCode(err))
	}
	return step, err
}

// tearDown runs b's machine through next, its kind's declared teardown,
// to its terminal state: the owner fires, stops when the machine refuses,
// and runs only the effects the edges declare (close or detach, reap,
// release_attachment), each once. A machine torn down already fires
// nothing.
func (b *Browser) tearDown(ctx context.Context, next map[lease.AttachState]lease.AttachTrigger) error {
	_, err := b.life.machine().Run(ctx, next, func(error) lease.AttachTrigger { return "" })
	if err != nil {
		return fmt.Errorf("runner: browser teardown in %s: %w", b.state(), err)
	}
	return nil
}

// release is release_attachment, the edge into every kind's terminal
// state: the connection, the download jail, the pages, the registry entry
// and the mutation gates go. The machine takes one edge into its terminal
// state, so this runs once.
func (b *Browser) release(_ context.Context, step attachmentStep) (lease.AttachTrigger, error) {
	if c := b.c(); c != nil {
		c.Close()
	}
	b.mu.Lock()
	dl := b.dl
	b.mu.Unlock()
	dl.Close()
	b.retirePages()
	b.r.mu.Lock()
	delete(b.r.browsers, b.id)
	b.r.mu.Unlock()
	b.r.gates.Forget(b.id)
	b.r.logf("runner: browser %s %s", b.id, step.To)
	return "", nil
}

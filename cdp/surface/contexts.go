package surface

import (
	"context"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/runtime"
)

// An execution context id names a context only within one renderer
// process: after a cross-process navigation the next document's contexts
// reuse the ids of the last one's (Chromium 156 evaluated a stale world's
// id in the new site's iframe). Everything the surface runs in a page is
// therefore addressed by the context's system-unique id, which this file
// learns from Runtime.executionContextCreated, read in wire order on a
// subscription of its own per session.

// maxContextEvents bounds the creations a watch remembers: enough to find
// the one a Page.createIsolatedWorld just caused.
const maxContextEvents = 256

// contextWaitTimeout bounds the wait for the creation event of a world
// just made. The event precedes the command's response on the wire, so the
// wait is only the event goroutine's lag.
const contextWaitTimeout = 5 * time.Second

// ctxCreated is one Runtime.executionContextCreated, numbered in the order
// its session delivered it.
type ctxCreated struct {
	seq       uint64
	id        runtime.ExecutionContextID
	unique    string
	frame     cdproto.FrameID
	isDefault bool
	name      string
}

// contextWatch follows the execution contexts of one session.
type contextWatch struct {
	mu      sync.Mutex
	seq     uint64
	recent  []ctxCreated                   // newest last, at most maxContextEvents
	main    map[cdproto.FrameID]ctxCreated // live default (main-world) context by frame
	changed chan struct{}                  // closed and replaced on every event
	ended   bool
}

// contextWatches holds a Page's watches by session; guarded by Page.mu.
type contextWatches map[Session]*contextWatch

// contextEvents are the events a contextWatch reads, in wire order.
var contextEvents = newEventTable(
	on(runtime.ExecutionContextCreated, (*contextWatch).created),
	on(runtime.ExecutionContextDestroyed, (*contextWatch).destroyed),
	on(runtime.ExecutionContextsCleared, func(cw *contextWatch, _ *runtime.EventExecutionContextsCleared) { clear(cw.main) }),
)

// watchContexts returns the watch of session s, starting it when s has
// none. enable asks for Runtime.enable after subscribing (a child session;
// the page session enables Runtime in setup, after New started its
// watch).
func (p *Page) watchContexts(ctx context.Context, s Session, enable bool) *contextWatch {
	p.mu.Lock()
	if p.ctxs == nil {
		p.ctxs = contextWatches{}
	}
	if cw, ok := p.ctxs[s]; ok {
		p.mu.Unlock()
		return cw
	}
	cw := &contextWatch{main: map[cdproto.FrameID]ctxCreated{}, changed: make(chan struct{})}
	p.ctxs[s] = cw
	ch, cancel := contextEvents.subscribe(s)
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		defer cancel()
		defer cw.end()
		for {
			select {
			case <-p.life.Done():
				return
			case ev, ok := <-ch:
				if !ok {
					return
				}
				cw.handle(ev)
			}
		}
	}()
	if enable {
		// Replays the creation of every existing context; an error leaves
		// the watch without events and world creation then fails closed.
		_ = s.Call(ctx, "Runtime.enable", nil, nil)
	}
	return cw
}

// handle records one event and wakes the waits on the watch.
func (cw *contextWatch) handle(ev any) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if contextEvents.dispatch(cw, ev) {
		close(cw.changed)
		cw.changed = make(chan struct{})
	}
}

// contextAux is the part of a context's auxData (a free-form object the
// protocol does not type) that names its frame.
type contextAux struct {
	IsDefault bool            `json:"isDefault"`
	FrameID   cdproto.FrameID `json:"frameId"`
}

func (cw *contextWatch) created(e *runtime.EventExecutionContextCreated) {
	if e.Context == nil {
		return
	}
	var aux contextAux
	_ = jsonv2.Unmarshal(e.Context.AuxData, &aux)
	cw.seq++
	c := ctxCreated{seq: cw.seq, id: e.Context.ID, unique: e.Context.UniqueID, frame: aux.FrameID, isDefault: aux.IsDefault, name: e.Context.Name}
	cw.recent = append(cw.recent, c)
	if len(cw.recent) > maxContextEvents {
		cw.recent = append(cw.recent[:0:0], cw.recent[len(cw.recent)-maxContextEvents:]...)
	}
	if c.isDefault && c.frame != "" {
		cw.main[c.frame] = c
	}
}

func (cw *contextWatch) destroyed(e *runtime.EventExecutionContextDestroyed) {
	for f, c := range cw.main {
		if c.unique == e.ExecutionContextUniqueID {
			delete(cw.main, f)
		}
	}
}

func (cw *contextWatch) end() {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.ended = true
	close(cw.changed)
	cw.changed = make(chan struct{})
}

// latest returns the newest creation of an isolated context with id in
// frame and named name, and a channel closed at the next event. Chromium
// keeps an isolated world per frame and name and makes its context in every
// new document, so Page.createIsolatedWorld may answer with a context whose
// creation was reported before the command was sent; a newer creation with
// the same id is another process's context.
func (cw *contextWatch) latest(id runtime.ExecutionContextID, frame cdproto.FrameID, name string) (c ctxCreated, ok bool, next <-chan struct{}, ended bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for i := len(cw.recent) - 1; i >= 0; i-- {
		r := cw.recent[i]
		if r.id == id && r.frame == frame && !r.isDefault && r.name == name {
			c, ok = r, true
			break
		}
	}
	return c, ok, cw.changed, cw.ended
}

// mainContext returns the live default context of frame, if known.
func (cw *contextWatch) mainContext(frame cdproto.FrameID) (ctxCreated, bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	c, ok := cw.main[frame]
	return c, ok
}

package surface

import (
	"context"
	"errors"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/cdp"
)

// What an action caused, beyond its own element: a navigation of the main
// frame, a new tab, a download. The page session's events are recorded in
// order with a sequence number; an action notes the number before it
// dispatches and reads what came after, once the events the browser sent
// before the action's acknowledgement have been handled (sync).

// Navigation is a main-frame navigation an action caused. URL and Title are
// empty when the Judge refuses the new document.
type Navigation struct {
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// SameDocument reports a history or fragment change without a new
	// document (refs stay valid).
	SameDocument bool `json:"sameDocument,omitempty"`
	// Pending reports that the navigation was requested but had not
	// committed when the action returned.
	Pending bool `json:"pending,omitempty"`
}

// NewTab is a window the page opened during an action (window.open, a link
// with a target). URL is empty when the Judge refuses it.
type NewTab struct {
	URL string `json:"url,omitempty"`
}

// DownloadStart is a download that began during an action. The download
// itself (its file, progress, completion) belongs to the caller that set the
// browser's download behaviour; the surface only reports that one began.
type DownloadStart struct {
	GUID              string `json:"guid"`
	URL               string `json:"url,omitempty"`
	SuggestedFilename string `json:"suggestedFilename,omitempty"`
}

// Bounds of the wait for what an action started.
const (
	// navCommitWait bounds the wait for a requested main-frame navigation
	// to commit (or turn into a download) before the action returns.
	navCommitWait = 5 * time.Second
	// navTitleWait bounds the wait, after a commit, for the load to stop so
	// that the title is the new document's.
	navTitleWait = 2 * time.Second
	// maxEffectEvents bounds the recorded events.
	maxEffectEvents = 64
)

type effectKind int

const (
	effNavRequested effectKind = iota + 1
	effNavCommitted
	effNavSameDoc
	effWindowOpen
	effDownload
)

type effectEvent struct {
	seq  uint64
	kind effectKind
	url  string
	guid string
	name string
}

// effectLog is guarded by Page.mu.
type effectLog struct {
	seq    uint64
	events []effectEvent // newest last, at most maxEffectEvents
	wake   chan struct{} // closed and replaced on each event
}

func (l *effectLog) addLocked(e effectEvent) {
	l.seq++
	e.seq = l.seq
	l.events = append(l.events, e)
	if len(l.events) > maxEffectEvents {
		l.events = append(l.events[:0:0], l.events[len(l.events)-maxEffectEvents:]...)
	}
	if l.wake != nil {
		close(l.wake)
	}
	l.wake = make(chan struct{})
}

// effectEvents are the events, beside the main frame's navigations
// (surface.go), that an action in progress reports.
var effectEvents = []eventHandler[*Page]{
	on(page.FrameRequestedNavigation, func(p *Page, ev *page.EventFrameRequestedNavigation) {
		if ev.FrameID != p.main {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.effects.addLocked(effectEvent{kind: effNavRequested, url: ev.URL})
	}),
	on(page.WindowOpen, func(p *Page, ev *page.EventWindowOpen) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.effects.addLocked(effectEvent{kind: effWindowOpen, url: ev.URL})
	}),
	on(cdp.PageDownloadWillBegin, func(p *Page, ev *cdp.EventPageDownloadWillBegin) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.noteDownloadLocked(ev.GUID, ev.URL, ev.SuggestedFilename)
	}),
}

func (p *Page) noteDownloadLocked(guid, url, name string) {
	for _, e := range p.effects.events {
		if e.kind == effDownload && e.guid == guid {
			return // told by both the page and the browser
		}
	}
	p.effects.addLocked(effectEvent{kind: effDownload, url: url, guid: guid, name: name})
}

// NoteDownload tells the page that a download began in one of its frames
// (from Browser.downloadWillBegin, which arrives on the browser session of
// whoever set the download behaviour). frameID is the event's frame; a
// download of a frame of another page is ignored. An action in progress
// reports it.
func (p *Page) NoteDownload(frameID, guid, url, suggestedFilename string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ownsFrameLocked(frameID) {
		return
	}
	p.noteDownloadLocked(guid, url, suggestedFilename)
}

func (p *Page) ownsFrameLocked(frameID string) bool {
	if frameID == string(p.main) {
		return true
	}
	for k := range p.worlds {
		if string(k.frame) == frameID {
			return true
		}
	}
	_, ok := p.frameKeys[cdproto.FrameID(frameID)]
	return ok
}

// mark is where an action's effects start: the sequence number of the last
// recorded event, the main frame's URL and, when known, the main
// document's own count of the navigations it started (navState).
type mark struct {
	seq    uint64
	url    string
	doc    *world // the main world navSeq was read in; nil when unknown
	navSeq int
}

// withNav adds the navigation count prepare read in w, when w is the main
// world.
func (p *Page) withNav(m mark, w *world, res *prepResult) mark {
	if w != nil && res != nil && w.sess == p.sess && w.frame == p.main {
		m.doc, m.navSeq = w, res.NavSeq
	}
	return m
}

// withNavRead reads the main document's navigation count, when the main
// world exists (an action without a target: nothing read it yet).
func (p *Page) withNavRead(ctx context.Context, m mark) mark {
	p.mu.Lock()
	w := p.worlds[worldKey{p.sess, p.main}]
	p.mu.Unlock()
	if w == nil || w.dead.Load() {
		return m
	}
	if st, err := invoke(ctx, p, w, jsNavState, none{}); err == nil && st.Err == "" {
		m.doc, m.navSeq = w, st.Seq
	}
	return m
}

func (p *Page) effectMark() mark {
	p.mu.Lock()
	defer p.mu.Unlock()
	return mark{seq: p.effects.seq, url: p.mainURL}
}

func (p *Page) effectsSince(mark uint64) ([]effectEvent, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []effectEvent
	for _, e := range p.effects.events {
		if e.seq > mark {
			out = append(out, e)
		}
	}
	if p.effects.wake == nil {
		p.effects.wake = make(chan struct{})
	}
	return out, p.effects.wake
}

// errNavigating is a call abandoned because the main frame started a
// navigation: Chromium holds a frame's commands while its navigation is
// pending, until the navigation commits (or forever, if it never does).
var errNavigating = errors.New("surface: the main frame is navigating")

// untilNavigation runs call, and abandons it (cancels and waits for it)
// when the browser tells that the main frame started or committed a
// navigation after m: the call would wait for that navigation.
func untilNavigation[R any](ctx context.Context, p *Page, m mark, call func(context.Context) (R, error)) (R, error) {
	type result struct {
		v   R
		err error
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		v, err := call(cctx)
		done <- result{v, err}
	}()
	for {
		evs, wake := p.effectsSince(m.seq)
		for _, e := range evs {
			if e.kind == effNavRequested || e.kind == effNavCommitted {
				cancel()
				<-done // the call returns once cancelled: it is not left running
				var zero R
				return zero, errNavigating
			}
		}
		select {
		case r := <-done:
			return r.v, r.err
		case <-wake:
		}
	}
}

// sync returns once the event goroutine has handled every event queued
// before the call: events the browser sent before an acknowledgement the
// caller has received are then recorded.
func (p *Page) sync(ctx context.Context) {
	done := make(chan struct{})
	select {
	case p.barrier <- done:
	case <-ctx.Done():
		return
	case <-p.life.Done():
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-p.life.Done():
	}
}

// collectEffects fills out with what happened since mark: it waits (within
// its bounds) for a requested main-frame navigation to commit and for the
// new document's title. Nothing is reported that did not happen.
func (p *Page) collectEffects(ctx context.Context, m mark, out *ActionResult) {
	p.collectEffectsRead(ctx, m, out, nil)
}

// collectEffectsRead is collectEffects with the main document's navigation
// state already read after the action (nil: read it here).
func (p *Page) collectEffectsRead(ctx context.Context, m mark, out *ActionResult, read *navStateResult) {
	if out.Dialog != nil {
		return // the page is blocked in the dialog: nothing else moves
	}
	p.sync(ctx)
	// The document says whether it started a navigation: the browser's
	// events of one may still be on their way.
	var same, started *Navigation
	requested := false
	if m.doc != nil {
		var st navStateResult
		var err error
		if read != nil {
			st = *read
		} else {
			st, err = untilNavigation(ctx, p, m, func(ctx context.Context) (navStateResult, error) {
				return invoke(ctx, p, m.doc, jsNavState, none{})
			})
		}
		switch {
		case errors.Is(err, errWorldGone), errors.Is(err, errNavigating):
			requested = true // the document is already replaced
		case err == nil && st.Err == "" && st.Seq > m.navSeq && st.Last != nil:
			if st.Last.SameDocument {
				if st.URL != m.url {
					same = &Navigation{URL: st.URL, Title: capString(st.Title, 200), SameDocument: true}
				}
			} else {
				requested = true
				started = &Navigation{URL: st.Last.URL, Pending: true}
			}
		}
	}
	evs, wake := p.effectsSince(m.seq)
	committed, settled := false, func(evs []effectEvent) bool {
		for _, e := range evs {
			if e.kind == effNavCommitted || e.kind == effDownload || e.kind == effNavSameDoc {
				return true
			}
		}
		return false
	}
	for _, e := range evs {
		requested = requested || e.kind == effNavRequested
	}
	if requested && !settled(evs) {
		timer := time.NewTimer(p.limits.navCommit)
		defer timer.Stop()
	wait:
		for !settled(evs) {
			select {
			case <-wake:
				evs, wake = p.effectsSince(m.seq)
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			case <-p.gone:
				break wait
			}
		}
	}
	var nav *Navigation
	for _, e := range evs {
		switch e.kind {
		case effNavRequested:
			if nav == nil {
				nav = &Navigation{URL: e.url, Pending: true}
			}
		case effNavCommitted:
			nav = &Navigation{URL: e.url}
			committed = true
		case effNavSameDoc:
			if !committed {
				nav = &Navigation{URL: e.url, SameDocument: true}
			}
		case effWindowOpen:
			out.NewTab = &NewTab{URL: p.allowedURL(e.url)}
		case effDownload:
			out.Download = &DownloadStart{GUID: e.guid, URL: p.allowedURL(e.url), SuggestedFilename: e.name}
			if nav != nil && nav.Pending {
				nav = nil // the requested navigation became this download
			}
		}
	}
	if nav == nil || (nav.Pending && same != nil) {
		nav = same
	}
	if nav == nil && out.Download == nil {
		nav = started // started, and neither committed nor a download yet
	}
	if nav == nil && m.doc == nil {
		// The browser tells of a history change (pushState, a fragment)
		// after the input's acknowledgement, not before: the document
		// itself says whether its URL moved.
		nav, _ = untilNavigation(ctx, p, m, func(ctx context.Context) (*Navigation, error) {
			return p.sameDocumentMove(ctx, m.url), nil
		})
	}
	if nav == nil {
		return
	}
	if p.judge(nav.URL) != nil {
		out.Navigation = &Navigation{SameDocument: nav.SameDocument, Pending: nav.Pending}
		return
	}
	if !nav.Pending && nav.Title == "" {
		if committed {
			p.waitLoaded(ctx, p.limits.navTitle)
		}
		if id, err := p.Identity(ctx); err == nil && id.URL == nav.URL {
			nav.Title = capString(id.Title, 200)
		}
	}
	out.Navigation = nav
}

// sameDocumentMove reads the main document's URL from its world, when it
// has one already, and reports a same-document navigation when the URL is
// no longer before.
func (p *Page) sameDocumentMove(ctx context.Context, before string) *Navigation {
	p.mu.Lock()
	w := p.worlds[worldKey{p.sess, p.main}]
	p.mu.Unlock()
	if w == nil || w.dead.Load() {
		return nil
	}
	r, err := invoke(ctx, p, w, jsIdentity, none{})
	if err != nil || r.Err != "" || r.URL == before {
		return nil
	}
	return &Navigation{URL: r.URL, Title: capString(r.Title, 200), SameDocument: true}
}

// allowedURL is u when the Judge allows it, else empty.
func (p *Page) allowedURL(u string) string {
	if p.judge(u) != nil {
		return ""
	}
	return u
}

// waitLoaded waits, within d, until the main frame stops loading.
func (p *Page) waitLoaded(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		p.mu.Lock()
		loading, ch := p.loading, p.loadCh
		p.mu.Unlock()
		if !loading {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-p.gone:
			return
		}
	}
}

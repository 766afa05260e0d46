package surface

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// Diagnostic bounds.
const (
	// DiagCapacity is how many entries each diagnostic log keeps.
	DiagCapacity = 200
	// DiagReadChars bounds the characters of one read.
	DiagReadChars = 20000
	// diagEntryChars bounds one entry's text.
	diagEntryChars = 1000
	// diagInFlightCap bounds the set of network requests tracked as in
	// flight; beyond it the log counts as discarded.
	diagInFlightCap = 2000
	// diagContextCap bounds the execution contexts whose origins are known;
	// a message from a context beyond it has no known origin.
	diagContextCap = 4096
	// diagURLChars bounds a URL an entry shows.
	diagURLChars = 500
)

// DiagEntry is one console message, JavaScript exception, browser log entry
// or network request. Origin is the origin of the document that produced it;
// under a Judge every entry read is of an allowed origin.
type DiagEntry struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`  // console, exception, log, request
	Level  string `json:"level"` // log, info, warning, error, debug
	Origin string `json:"origin,omitempty"`
	Text   string `json:"text,omitempty"`
	URL    string `json:"url,omitempty"`
	Method string `json:"method,omitempty"`
	Status int64  `json:"status,omitempty"`
	Failed string `json:"failed,omitempty"` // the network error, for a failed request
	Type   string `json:"type,omitempty"`   // resource type of a request

	reqID string // CDP request id: internal, never shown
	// detail is a request's headers and bodies (netdetail.go), read only
	// by RequestDetails.
	detail *requestDetail
	// doc and url are what the Judge sees at read time, never shown: the
	// producing document's origin ("" when unknown: withheld under a Judge)
	// and the scheme and authority of URL, taken before URL was shortened.
	doc, url string
}

func (e *DiagEntry) isError() bool {
	return e.Level == "error" || e.Kind == "exception" || e.Failed != "" || e.Status >= 400
}

func (e *DiagEntry) size() int { return len(e.Text) + len(e.URL) + len(e.Method) + len(e.Failed) + 48 }

// DiagOptions selects what a diagnostics read returns.
type DiagOptions struct {
	// Since returns only entries with a larger Seq (a cursor: pass the
	// previous read's Next).
	Since uint64
	// ErrorsOnly keeps console errors, exceptions, failed requests and HTTP
	// errors (status >= 400).
	ErrorsOnly bool
	// MaxChars bounds the read; 0 or more than DiagReadChars means
	// DiagReadChars.
	MaxChars int
	// SinceNavigation returns only entries logged after the main frame's
	// last navigation (as Playwright MCP's console does by default).
	SinceNavigation bool
}

// DiagRead is one bounded read of a diagnostic log.
type DiagRead struct {
	Entries []DiagEntry `json:"entries"`
	// Next is the cursor for the following read.
	Next uint64 `json:"next"`
	// More reports that entries remain after Next (the read was bounded).
	More bool `json:"more,omitempty"`
	// Discarded is fsm.DiagnosticsDiscarded when the log dropped entries
	// since the last Clear; nobody may then claim the log is complete (or the
	// network quiet).
	Discarded fsm.Code `json:"discarded,omitempty"`
	// InFlight counts network requests without a response end (network
	// reads only).
	InFlight int `json:"inFlight,omitempty"`
}

type ring struct {
	entries   []DiagEntry // oldest first, at most DiagCapacity
	discarded bool
}

func (r *ring) add(e DiagEntry) {
	if len(r.entries) >= DiagCapacity {
		copy(r.entries, r.entries[1:])
		r.entries = r.entries[:len(r.entries)-1]
		r.discarded = true
	}
	r.entries = append(r.entries, e)
}

type diagnostics struct {
	mu       sync.Mutex
	seq      uint64
	console  ring
	network  ring
	requests map[string]inflight // requests without a response end, by request id
	overflow bool
	navSeq   uint64        // the last Seq before the main frame's last navigation
	dropBase uint64        // the session's dropped-event count at the last clear
	changed  chan struct{} // closed and replaced when a request ends
	logged   chan struct{} // closed and replaced when a console entry arrives

	// contexts maps a live execution context to its origin. Events arrive
	// in wire order, so a console message is credited to the context that
	// made it, not to a later one reusing its id in another renderer.
	contexts  map[runtime.ExecutionContextID]liveContext
	contextOf map[string]runtime.ExecutionContextID // by the context's unique id, which its destruction names
}

// liveContext is an execution context the diagnostics know.
type liveContext struct {
	unique, origin string
}

// inflight is a request without a response end: its entry's Seq and what the
// Judge sees of it.
type inflight struct {
	seq      uint64
	doc, url string
}

func (d *diagnostics) init() {
	d.requests = map[string]inflight{}
	d.contexts = map[runtime.ExecutionContextID]liveContext{}
	d.contextOf = map[string]runtime.ExecutionContextID{}
	d.changed = make(chan struct{})
	d.logged = make(chan struct{})
}

// waitConsole waits up to d for a console entry to arrive.
func (d *diagnostics) waitConsole(ctx context.Context, dur time.Duration) bool {
	d.mu.Lock()
	ch := d.logged
	d.mu.Unlock()
	return waitChan(ch, time.Now().Add(dur), ctx)
}

func (d *diagnostics) endedLocked(id string) {
	delete(d.requests, id)
	close(d.changed)
	d.changed = make(chan struct{})
}

func argText(a *runtime.RemoteObject) string {
	if len(a.Value) > 0 {
		var s string
		if jsonv2.Unmarshal(a.Value, &s) == nil {
			return s
		}
		return string(a.Value)
	}
	if a.UnserializableValue != "" {
		return string(a.UnserializableValue)
	}
	if a.Description != "" {
		return a.Description
	}
	return string(a.Type)
}

func consoleLevel(t runtime.ConsoleAPICalledType) string {
	switch t {
	case "error", "assert":
		return "error"
	case "warning":
		return "warning"
	case "debug":
		return "debug"
	case "info":
		return "info"
	}
	return "log"
}

// diagEvents are the events the diagnostics record (part of pageEvents).
var diagEvents = []eventHandler[*Page]{
	on(runtime.ExecutionContextCreated, func(p *Page, ev *runtime.EventExecutionContextCreated) { p.diag.contextCreated(ev) }),
	on(runtime.ExecutionContextDestroyed, func(p *Page, ev *runtime.EventExecutionContextDestroyed) { p.diag.contextDestroyed(ev) }),
	on(runtime.ExecutionContextsCleared, func(p *Page, _ *runtime.EventExecutionContextsCleared) { p.diag.contextsCleared() }),
	on(runtime.ConsoleAPICalled, func(p *Page, ev *runtime.EventConsoleAPICalled) { p.diag.consoleAPICalled(ev) }),
	on(runtime.ExceptionThrown, func(p *Page, ev *runtime.EventExceptionThrown) { p.diag.exceptionThrown(ev) }),
	on(log.EntryAdded, func(p *Page, ev *log.EventEntryAdded) { p.diag.entryAdded(ev) }),
	on(network.RequestWillBeSent, func(p *Page, ev *network.EventRequestWillBeSent) { p.diag.requestWillBeSent(ev) }),
	on(network.ResponseReceived, func(p *Page, ev *network.EventResponseReceived) { p.diag.responseReceived(ev) }),
	on(network.LoadingFinished, func(p *Page, ev *network.EventLoadingFinished) { p.diag.loadingFinished(ev) }),
	on(network.LoadingFailed, func(p *Page, ev *network.EventLoadingFailed) { p.diag.loadingFailed(ev) }),
}

func (d *diagnostics) contextCreated(ev *runtime.EventExecutionContextCreated) {
	if ev.Context == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.contexts) < diagContextCap {
		d.contexts[ev.Context.ID] = liveContext{unique: ev.Context.UniqueID, origin: ev.Context.Origin}
		d.contextOf[ev.Context.UniqueID] = ev.Context.ID
	}
}

func (d *diagnostics) contextDestroyed(ev *runtime.EventExecutionContextDestroyed) {
	d.mu.Lock()
	defer d.mu.Unlock()
	id, ok := d.contextOf[ev.ExecutionContextUniqueID]
	if !ok {
		return
	}
	delete(d.contextOf, ev.ExecutionContextUniqueID)
	if d.contexts[id].unique == ev.ExecutionContextUniqueID {
		delete(d.contexts, id) // not a later context that reuses the id
	}
}

func (d *diagnostics) contextsCleared() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.contexts)
	clear(d.contextOf)
}

func (d *diagnostics) consoleAPICalled(ev *runtime.EventConsoleAPICalled) {
	var b strings.Builder
	for i, a := range ev.Args {
		if a == nil {
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(argText(a))
		if b.Len() > diagEntryChars {
			break
		}
	}
	d.addConsole(DiagEntry{Kind: "console", Level: consoleLevel(ev.Type), Text: capString(b.String(), diagEntryChars)}, ev.ExecutionContextID)
}

func (d *diagnostics) exceptionThrown(ev *runtime.EventExceptionThrown) {
	x := ev.ExceptionDetails
	if x == nil {
		return
	}
	text := x.Text
	if x.Exception != nil && x.Exception.Description != "" {
		text = x.Exception.Description
	}
	e := DiagEntry{Kind: "exception", Level: "error", Text: capString(text, diagEntryChars)}
	e.setURL(x.URL)
	d.addConsole(e, x.ExecutionContextID)
}

func (d *diagnostics) entryAdded(ev *log.EventEntryAdded) {
	if ev.Entry == nil {
		return
	}
	lvl := string(ev.Entry.Level)
	if lvl == "verbose" {
		lvl = "debug"
	}
	e := DiagEntry{Kind: "log", Level: lvl, Text: capString(ev.Entry.Text, diagEntryChars)}
	e.setURL(ev.Entry.URL)
	// A log entry names no document. One about a request belongs to the
	// request's document; otherwise its URL (the page's, or the resource's
	// or script's) is the best attribution there is.
	d.mu.Lock()
	doc, ok := d.requestDocLocked(string(ev.Entry.NetworkRequestID))
	d.mu.Unlock()
	if !ok && ev.Entry.URL != "" {
		doc = originKey(ev.Entry.URL)
	}
	e.setDoc(doc)
	d.addConsole(e, 0)
}

func (d *diagnostics) requestWillBeSent(ev *network.EventRequestWillBeSent) {
	if ev.Request == nil {
		return
	}
	id := string(ev.RequestID)
	e := DiagEntry{Kind: "request", Level: "info", Method: ev.Request.Method, Type: string(ev.Type), reqID: id}
	e.setURL(ev.Request.URL)
	noteRequest(&e, ev.Request)
	if ev.DocumentURL != "" {
		e.setDoc(originKey(ev.DocumentURL))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	e.Seq = d.seq
	d.network.add(e)
	if len(d.requests) < diagInFlightCap {
		d.requests[id] = inflight{seq: e.Seq, doc: e.doc, url: e.url}
	} else {
		d.overflow = true
	}
}

func (d *diagnostics) responseReceived(ev *network.EventResponseReceived) {
	if ev.Response == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.findLocked(string(ev.RequestID)); e != nil {
		e.Status = ev.Response.Status
		noteResponse(e, ev.Response)
		if e.Status >= 400 {
			e.Level = "error"
		}
	}
}

func (d *diagnostics) loadingFinished(ev *network.EventLoadingFinished) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endedLocked(string(ev.RequestID))
}

func (d *diagnostics) loadingFailed(ev *network.EventLoadingFailed) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.findLocked(string(ev.RequestID)); e != nil {
		e.Failed = capString(ev.ErrorText, 200)
		if ev.Canceled {
			e.Failed = "canceled"
		}
		e.Level = "error"
	}
	d.endedLocked(string(ev.RequestID))
}

// setURL records the URL an entry shows (shortened) and the key it is
// judged by (taken from the whole URL).
func (e *DiagEntry) setURL(raw string) {
	if raw == "" {
		return
	}
	e.URL = capString(raw, diagURLChars)
	e.url = originKey(raw)
}

// setDoc records the producing document's origin key and the origin shown.
func (e *DiagEntry) setDoc(key string) {
	e.doc = key
	e.Origin = displayOrigin(key)
}

func (d *diagnostics) findLocked(id string) *DiagEntry {
	r, ok := d.requests[id]
	if !ok {
		return nil
	}
	es := d.network.entries
	// Entries are in Seq order: search from the newest.
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Seq == r.seq {
			return &es[i]
		}
		if es[i].Seq < r.seq {
			break
		}
	}
	return nil
}

// requestDocLocked returns the document key of the request id, whether in
// flight or still in the log.
func (d *diagnostics) requestDocLocked(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	if r, ok := d.requests[id]; ok {
		return r.doc, true
	}
	es := d.network.entries
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].reqID == id {
			return es[i].doc, true
		}
	}
	return "", false
}

// addConsole appends a console-log entry. ctxID, when not 0, names the
// execution context that produced it, whose origin is the entry's.
func (d *diagnostics) addConsole(e DiagEntry, ctxID runtime.ExecutionContextID) {
	d.mu.Lock()
	if ctxID != 0 {
		e.setDoc(d.contextOriginLocked(ctxID))
	}
	d.seq++
	e.Seq = d.seq
	d.console.add(e)
	close(d.logged)
	d.logged = make(chan struct{})
	d.mu.Unlock()
}

// contextOriginLocked returns the origin of a live execution context, or ""
// when it is not known.
func (d *diagnostics) contextOriginLocked(id runtime.ExecutionContextID) string {
	o := d.contexts[id].origin
	if o == "://" { // Chromium's origin of the initial about:blank
		return ""
	}
	return o
}

// originKey returns the part of a URL that decides its origin: the scheme
// and authority of a hierarchical URL ("http://host:port/"; a blob: URL
// keeps its inner one), and otherwise the URL's start, which keeps its
// scheme. The Judge decides on the origin, so judging the key judges the
// URL, and the key survives the shortening of what is shown.
func originKey(raw string) string {
	if i := strings.Index(raw, "://"); i > 0 {
		rest := raw[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		return raw[:i+3+end] + "/"
	}
	return capString(raw, 64)
}

// displayOrigin is the origin shown for an origin key: scheme://host[:port],
// about:blank, or "null" for an opaque origin.
func displayOrigin(key string) string {
	if key == "" {
		return ""
	}
	u, err := url.Parse(key)
	if err != nil {
		return "null"
	}
	switch {
	case u.Scheme == "blob":
		return displayOrigin(u.Opaque)
	case u.Host != "":
		return u.Scheme + "://" + u.Host
	case u.Scheme == "about" && u.Opaque == "blank":
		return "about:blank"
	}
	return "null"
}

// deniedURL stands in for a URL of a denied origin in an entry's text.
const deniedURL = "[URL of a denied origin]"

// textURL finds URLs in free text. Chromium percent-encodes spaces, quotes,
// angle brackets and backticks in the URLs it writes, so a match runs to
// the URL's end and takes its query with it.
var textURL = regexp.MustCompile("(?i)[a-z][a-z0-9+.-]*://[^\\s'\"<>`]*")

// verdicts judges the URLs of one read, once each.
type verdicts struct {
	judge func(string) error
	seen  map[string]bool
}

func newVerdicts(judge func(string) error) *verdicts {
	return &verdicts{judge: judge, seen: map[string]bool{}}
}

// allowed reports whether the Judge allows the origin key; an unknown
// origin ("") is refused.
func (v *verdicts) allowed(key string) bool {
	if v.judge == nil {
		return true
	}
	if key == "" {
		return false
	}
	ok, hit := v.seen[key]
	if !hit {
		ok = v.judge(key) == nil
		v.seen[key] = ok
	}
	return ok
}

// visible reports whether an entry may be read: the document that produced
// it and the URL it names (a request's own URL) are both allowed.
func (v *verdicts) visible(e *DiagEntry) bool {
	if v.judge == nil {
		return true
	}
	return v.allowed(e.doc) && (e.URL == "" || v.allowed(e.url))
}

// redact replaces the URLs of denied origins in free text (a browser
// message on an allowed page may quote a denied URL with its query).
func (v *verdicts) redact(s string) string {
	if v.judge == nil || !strings.Contains(s, "://") {
		return s
	}
	return textURL.ReplaceAllStringFunc(s, func(u string) string {
		if v.allowed(originKey(u)) {
			return u
		}
		return deniedURL
	})
}

func (d *diagnostics) read(r *ring, o DiagOptions, network bool, dropped uint64, judge func(string) error) DiagRead {
	max := o.MaxChars
	if max <= 0 || max > DiagReadChars {
		max = DiagReadChars
	}
	v := newVerdicts(judge)
	d.mu.Lock()
	defer d.mu.Unlock()
	out := DiagRead{Next: o.Since, Entries: []DiagEntry{}}
	from := o.Since
	if o.SinceNavigation && d.navSeq > from {
		from = d.navSeq
	}
	used := 0
	for _, e := range r.entries {
		if e.Seq <= from {
			continue
		}
		if !v.visible(&e) || (o.ErrorsOnly && !e.isError()) {
			out.Next = e.Seq
			continue
		}
		e.Text = v.redact(e.Text)
		if used+e.size() > max {
			out.More = true
			break
		}
		used += e.size()
		out.Entries = append(out.Entries, e)
		out.Next = e.Seq
	}
	if r.discarded || (network && d.overflow) || dropped > d.dropBase {
		out.Discarded = fsm.DiagnosticsDiscarded
	}
	if network {
		out.InFlight = d.inFlightLocked(v)
	}
	return out
}

// inFlightLocked counts the open requests the Judge allows: a denied
// document's requests neither show nor keep a probe from settling.
func (d *diagnostics) inFlightLocked(v *verdicts) int {
	if v.judge == nil {
		return len(d.requests)
	}
	n := 0
	for _, r := range d.requests {
		if v.allowed(r.doc) && v.allowed(r.url) {
			n++
		}
	}
	return n
}

func (d *diagnostics) inFlight(judge func(string) error) (int, bool) {
	v := newVerdicts(judge)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inFlightLocked(v), d.network.discarded || d.overflow
}

// markNavigation notes that the main frame navigated: entries logged so far
// are from before it.
func (d *diagnostics) markNavigation() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.navSeq = d.seq
}

func (d *diagnostics) cursor() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq
}

func (d *diagnostics) clear(dropped uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropBase = dropped
	d.console = ring{}
	d.network = ring{}
	d.overflow = false
	// Requests still in flight stay tracked: clearing the log does not make
	// the network quiet.
}

// Console returns console messages, JavaScript exceptions and browser log
// entries, bounded by opts. Under a Judge it returns only entries whose
// document and named URL it allows, judged now (not when they were logged):
// an entry of a denied origin stays hidden after the page comes back, and
// URLs of denied origins in a message's text are replaced.
func (p *Page) Console(opts DiagOptions) DiagRead {
	return p.diag.read(&p.diag.console, opts, false, p.dropped(), p.opts.Judge)
}

// Network returns network requests, bounded by opts. InFlight counts the
// requests still open. Under a Judge a request is returned (and counted)
// only when both its document and its own URL are allowed.
func (p *Page) Network(opts DiagOptions) DiagRead {
	return p.diag.read(&p.diag.network, opts, true, p.dropped(), p.opts.Judge)
}

// ClearDiagnostics empties both logs and resets their discarded flags.
func (p *Page) ClearDiagnostics() { p.diag.clear(p.dropped()) }

// dropped returns how many events the transport dropped on the page
// session (its queues are bounded), when it says; any drop makes the logs
// incomplete.
func (p *Page) dropped() uint64 {
	if d, ok := p.sess.(interface{ Dropped() uint64 }); ok {
		return d.Dropped()
	}
	return 0
}

package surface

import (
	"context"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

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
)

// DiagEntry is one console message, JavaScript exception, or network
// request.
type DiagEntry struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`  // console, exception, log, request
	Level  string `json:"level"` // log, info, warning, error, debug
	Text   string `json:"text,omitempty"`
	URL    string `json:"url,omitempty"`
	Method string `json:"method,omitempty"`
	Status int64  `json:"status,omitempty"`
	Failed string `json:"failed,omitempty"` // the network error, for a failed request
	Type   string `json:"type,omitempty"`   // resource type of a request

	reqID string // CDP request id: internal, never shown
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
	requests map[string]int // request id -> Seq of its network entry (in flight)
	overflow bool
	dropBase uint64        // the session's dropped-event count at the last clear
	changed  chan struct{} // closed and replaced when a request ends
	logged   chan struct{} // closed and replaced when a console entry arrives
}

func (d *diagnostics) init() {
	d.requests = map[string]int{}
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

// waitChange waits until a request ends, the deadline passes or ctx ends.
func (d *diagnostics) waitChange(deadline time.Time, ctx context.Context) bool {
	d.mu.Lock()
	ch := d.changed
	d.mu.Unlock()
	return waitChan(ch, deadline, ctx)
}

type remoteArg struct {
	Type        string       `json:"type"`
	Value       jsonv2.Value `json:"value"`
	Description string       `json:"description"`
	Unser       string       `json:"unserializableValue"`
}

func argText(a remoteArg) string {
	if len(a.Value) > 0 {
		var s string
		if jsonv2.Unmarshal(a.Value, &s) == nil {
			return s
		}
		return string(a.Value)
	}
	if a.Unser != "" {
		return a.Unser
	}
	if a.Description != "" {
		return a.Description
	}
	return a.Type
}

func consoleLevel(t string) string {
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

func (d *diagnostics) handle(method string, raw jsonv2.Value) {
	switch method {
	case "Runtime.consoleAPICalled":
		var ev struct {
			Type string      `json:"type"`
			Args []remoteArg `json:"args"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		var b strings.Builder
		for i, a := range ev.Args {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(argText(a))
			if b.Len() > diagEntryChars {
				break
			}
		}
		d.addConsole(DiagEntry{Kind: "console", Level: consoleLevel(ev.Type), Text: capString(b.String(), diagEntryChars)})
	case "Runtime.exceptionThrown":
		var ev struct {
			Details struct {
				Text      string     `json:"text"`
				URL       string     `json:"url"`
				Exception *remoteArg `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		text := ev.Details.Text
		if ev.Details.Exception != nil && ev.Details.Exception.Description != "" {
			text = ev.Details.Exception.Description
		}
		d.addConsole(DiagEntry{Kind: "exception", Level: "error", Text: capString(text, diagEntryChars), URL: capString(ev.Details.URL, 500)})
	case "Log.entryAdded":
		var ev struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		lvl := ev.Entry.Level
		if lvl == "verbose" {
			lvl = "debug"
		}
		d.addConsole(DiagEntry{Kind: "log", Level: lvl, Text: capString(ev.Entry.Text, diagEntryChars), URL: capString(ev.Entry.URL, 500)})
	case "Network.requestWillBeSent":
		var ev struct {
			RequestID string `json:"requestId"`
			Type      string `json:"type"`
			Request   struct {
				URL    string `json:"url"`
				Method string `json:"method"`
			} `json:"request"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		d.mu.Lock()
		d.seq++
		e := DiagEntry{Seq: d.seq, Kind: "request", Level: "info", URL: capString(ev.Request.URL, 500), Method: ev.Request.Method, Type: ev.Type, reqID: ev.RequestID}
		d.network.add(e)
		if len(d.requests) < diagInFlightCap {
			d.requests[ev.RequestID] = int(e.Seq)
		} else {
			d.overflow = true
		}
		d.mu.Unlock()
	case "Network.responseReceived":
		var ev struct {
			RequestID string `json:"requestId"`
			Response  struct {
				Status int64 `json:"status"`
			} `json:"response"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		d.mu.Lock()
		if e := d.findLocked(ev.RequestID); e != nil {
			e.Status = ev.Response.Status
			if e.Status >= 400 {
				e.Level = "error"
			}
		}
		d.mu.Unlock()
	case "Network.loadingFinished":
		var ev struct {
			RequestID string `json:"requestId"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		d.mu.Lock()
		d.endedLocked(ev.RequestID)
		d.mu.Unlock()
	case "Network.loadingFailed":
		var ev struct {
			RequestID string `json:"requestId"`
			ErrorText string `json:"errorText"`
			Canceled  bool   `json:"canceled"`
		}
		if jsonv2.Unmarshal(raw, &ev) != nil {
			return
		}
		d.mu.Lock()
		if e := d.findLocked(ev.RequestID); e != nil {
			e.Failed = capString(ev.ErrorText, 200)
			if ev.Canceled {
				e.Failed = "canceled"
			}
			e.Level = "error"
		}
		d.endedLocked(ev.RequestID)
		d.mu.Unlock()
	}
}

func (d *diagnostics) findLocked(id string) *DiagEntry {
	seq, ok := d.requests[id]
	if !ok {
		return nil
	}
	es := d.network.entries
	// Entries are in Seq order: search from the newest.
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Seq == uint64(seq) {
			return &es[i]
		}
		if es[i].Seq < uint64(seq) {
			break
		}
	}
	return nil
}

func (d *diagnostics) addConsole(e DiagEntry) {
	d.mu.Lock()
	d.seq++
	e.Seq = d.seq
	d.console.add(e)
	close(d.logged)
	d.logged = make(chan struct{})
	d.mu.Unlock()
}

func (d *diagnostics) read(r *ring, o DiagOptions, network bool, dropped uint64) DiagRead {
	max := o.MaxChars
	if max <= 0 || max > DiagReadChars {
		max = DiagReadChars
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := DiagRead{Next: o.Since, Entries: []DiagEntry{}}
	used := 0
	for _, e := range r.entries {
		if e.Seq <= o.Since {
			continue
		}
		if o.ErrorsOnly && !e.isError() {
			out.Next = e.Seq
			continue
		}
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
		out.InFlight = len(d.requests)
	}
	return out
}

func (d *diagnostics) inFlight() (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.requests), d.network.discarded || d.overflow
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
// entries, bounded by opts.
func (p *Page) Console(opts DiagOptions) DiagRead {
	return p.diag.read(&p.diag.console, opts, false, p.dropped())
}

// Network returns network requests, bounded by opts. InFlight counts the
// requests still open.
func (p *Page) Network(opts DiagOptions) DiagRead {
	return p.diag.read(&p.diag.network, opts, true, p.dropped())
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

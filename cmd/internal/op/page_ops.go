package op

import "time"

// The operations on one page besides its actions and diagnostics: reads
// of what it shows, waits, navigation, JavaScript, its dialog and the tab
// itself.

// ReadIn reads a page's visible text, bounded.
type ReadIn struct {
	OnPage
	MaxChars int `json:"maxChars,omitempty" flag:"max" usage:"at most this many characters (default 20,000)"`
}

// ReadResult is bounded visible text.
type ReadResult struct {
	Page      string `json:"page"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Chars     int    `json:"totalChars"`
}

// ScreenshotIn captures the viewport, the whole page or one element.
type ScreenshotIn struct {
	OnPage
	FullPage bool `json:"fullPage,omitempty" flag:"full-page" usage:"capture the whole page, not just the viewport"`
	Element
}

// ScreenshotResult is a PNG.
type ScreenshotResult struct {
	Page   string `json:"page"`
	PNG    []byte `json:"png"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// PDFIn prints a page of a browser webcodex owns.
type PDFIn struct {
	OnPage
}

// PDFResult is a page printed as PDF (an owned, headless browser's page
// that holds no frame of a denied origin).
type PDFResult struct {
	Page string `json:"page"`
	PDF  []byte `json:"pdf"`
}

// SnapshotIn takes a page outline, or its next chunk with Cursor.
type SnapshotIn struct {
	OnPage
	Scope       *Target `json:"scope,omitempty"`
	Interactive bool    `json:"interactive,omitempty"`
	Since       string  `json:"since,omitempty"`
	MaxChars    int     `json:"maxChars,omitempty"`
	Cursor      string  `json:"cursor,omitempty"`
	// Query outlines only the elements that match (a snapshot of its own
	// id), for a page too big to read whole.
	Query *Query `json:"query,omitempty"`
}

// SnapshotResult is one chunk of a page outline.
type SnapshotResult struct {
	Page string `json:"page"`
	Snapshot
}

// WaitIn waits for a condition: load, url, text, text_gone, visible,
// hidden or enabled. A timeout is a result (found: false).
type WaitIn struct {
	OnPage
	Condition   string  `json:"condition"`
	Text        string  `json:"text,omitempty"`
	Target      *Target `json:"target,omitempty"`
	URL         string  `json:"url,omitempty"`
	URLIncludes string  `json:"urlIncludes,omitempty"`
	TimeoutMS   int     `json:"timeoutMs,omitempty"`
}

// WaitFor is the wait asked for, at most MaxWait.
func (in WaitIn) WaitFor() time.Duration {
	return min(time.Duration(in.TimeoutMS)*time.Millisecond, MaxWait)
}

// WaitResult is the outcome of a wait on a page; a timeout is found: false.
type WaitResult struct {
	Page string `json:"page"`
	WaitOutcome
}

// The reads of what a page shows, and the wait.
var (
	ReadText = declare[ReadIn, ReadResult](Meta{Name: "read", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPageText,
		CLI: &Verb{Name: "read", Use: "read PAGE", Short: "Print the page's visible text (bounded, with a truncation marker)"}})
	Screenshot = declare[ScreenshotIn, ScreenshotResult](Meta{Name: "screenshot", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPixels,
		MCP: []Tool{{Name: "browser_take_screenshot", Desc: "An image of the viewport, the whole page or an element."}},
		CLI: &Verb{Name: "screenshot", Use: "screenshot PAGE -o FILE", Short: "Save a PNG of the page (viewport, or --full-page)"}})
	PDF = declare[PDFIn, PDFResult](Meta{Name: "pdf", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPixels,
		MCP: []Tool{{Name: "browser_pdf_save", Group: CapPDF, Desc: "Save the page as PDF into this session's output directory; a page with frames of denied origins is refused."}}})
	TakeSnapshot = declare[SnapshotIn, SnapshotResult](Meta{Name: "snapshot", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{
			{Name: "browser_snapshot", Desc: "The page as an outline: role \"name\" [states] per line, [e5] refs on actionable lines, similar rows folded. query finds elements on a big page."},
			{Name: "browser_find", Desc: "Find text or regex in a fresh snapshot: matching lines with refs, under their path."},
		},
		CLI: &Verb{Name: "snapshot", Use: "snapshot PAGE", Short: "Print a bounded outline of the page with refs eN for actionable elements"}})
	Wait = declare[WaitIn, WaitResult](Meta{Name: "wait", Scope: Read, Bound: WaitBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_wait_for", Desc: "Wait time seconds, then for textGone, text, an element's condition, the url or the load; running out of timeout is an error."}},
		CLI: &Verb{Name: "wait", Use: "wait PAGE [TARGET] --for load|url|text|text_gone|visible|hidden|enabled", Short: "Wait for a condition; one that does not hold within --timeout is refused timeout (exit 3)", Target: OptionalTarget}})
)

// EvalIn evaluates an expression in the page.
type EvalIn struct {
	OnPage
	Expr string `json:"expr"`
	// Target, when set, makes Expr a function called with that element
	// (in the main frame's document).
	Target *Target `json:"target,omitempty"`
	Keyed
}

// AuditAction names it as the audit trail always has.
func (EvalIn) AuditAction() string { return "evaluate" }

// EvalResult is a bounded JSON value.
type EvalResult struct {
	Page      string `json:"page"`
	Value     any    `json:"value"`
	Truncated bool   `json:"truncated"`
}

// DialogIn reports the page's open JavaScript dialog, or answers it when
// Accept is set: accept (true) or dismiss.
type DialogIn struct {
	OnPage
	Accept *bool  `json:"accept,omitempty"`
	Text   string `json:"text,omitempty"` // a prompt's answer
	Keyed
}

// DialogResult is the page's dialog (null when none is open) and, when
// answered, how.
type DialogResult struct {
	Page     string  `json:"page"`
	Dialog   *Dialog `json:"dialog"`
	Accepted *bool   `json:"accepted,omitempty"`
}

// JavaScript in the page, and its dialog.
var (
	Eval = declare[EvalIn, EvalResult](Meta{Name: "eval", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_evaluate", Desc: "Run JavaScript in the page, or a function on an element (target); returns its value, bounded. Off for attached browsers unless allowed."}},
		CLI: &Verb{Name: "eval", Use: "eval PAGE EXPR", Short: "Evaluate a JavaScript expression in the page (owned browsers; bounded result)"}})
	// HandleDialog is judged by the URL the browser reports for the
	// target: a dialog blocks every script of the page.
	HandleDialog = declare[DialogIn, DialogResult](Meta{Name: "dialog", Scope: Control, Effect: true, Bound: CallBound, Judge: JudgeTarget, Audit: AuditActed, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_handle_dialog", Desc: "Accept or dismiss the page's open dialog; without accept, report it."}},
		CLI: &Verb{Name: "dialog", Use: "dialog PAGE [--accept|--dismiss] [--value PROMPT]", Short: "Report an open JavaScript dialog, or accept or dismiss it"}})
)

// GotoIn navigates a page to URL.
type GotoIn struct {
	OnPage
	URL string `json:"url"`
	Keyed
}

// AuditAction names it as the audit trail always has.
func (GotoIn) AuditAction() string { return "navigate" }

// AuditURL: a navigation is recorded on the origin it goes to.
func (in GotoIn) AuditURL() string { return in.URL }

// HistoryIn moves a page through its history (back, forward) or reloads
// it.
type HistoryIn struct {
	OnPage
	Keyed
}

// NavResult is the page after a navigation, read live from the page.
type NavResult struct {
	Page  string `json:"page"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Status is the HTTP status of the document's response, when there was
	// one (0 for about:blank, a fragment change or a cached history entry).
	Status int `json:"status,omitempty"`
	// Loading: the document committed but had not loaded by the call's
	// bound (a huge page); URL and title are what the browser knew then.
	Loading bool `json:"loading,omitempty"`
}

// Navigation: the origin gate judges where a page goes before it moves,
// and the document it lands on again.
var (
	Goto = declare[GotoIn, NavResult](Meta{Name: "goto", Scope: Control, Effect: true, Bound: CallBound, Judge: JudgeNavigable, Audit: AuditActed, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_navigate", Desc: "Load a URL in the current tab, launching a browser if none; only allowed origins load."}},
		CLI: &Verb{Name: "goto", Use: "goto PAGE URL", Short: "Navigate a page and wait for its load event"}})
	Back = declare[HistoryIn, NavResult](Meta{Name: "back", Scope: Control, Effect: true, Bound: CallBound, Judge: JudgeNavigable, Audit: AuditLanded, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_navigate_back", Desc: "Go back one entry in the tab's history; reads url and title."}},
		CLI: &Verb{Name: "back", Use: "back PAGE", Short: "Go back one entry in the page's history (an entry off the allowed origins is refused)"}})
	Forward = declare[HistoryIn, NavResult](Meta{Name: "forward", Scope: Control, Effect: true, Bound: CallBound, Judge: JudgeNavigable, Audit: AuditLanded, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_navigate_forward", Desc: "Go forward one entry in the tab's history; reads url and title."}},
		CLI: &Verb{Name: "forward", Use: "forward PAGE", Short: "Go forward one entry in the page's history (an entry off the allowed origins is refused)"}})
	// Reload loads the current URL again: the page must be readable.
	Reload = declare[HistoryIn, NavResult](Meta{Name: "reload", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditLanded, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_reload", Desc: "Reload the tab and read its url and title back."}},
		CLI: &Verb{Name: "reload", Use: "reload PAGE", Short: "Reload the page"}})
)

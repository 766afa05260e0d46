package op

import "github.com/webcodex/webcodex/fsm"

// The wire types the operations carry. They mirror the page surface's own
// (cdp/surface) field for field, so the Runner converts between them with a
// Go conversion that stops compiling when either side changes; their JSON
// names are the stable `--json` output of the CLI.

// Target is a semantic element target: a ref from a snapshot, or one way of
// finding the element on the live page, optionally with the index of one
// of several visible matches.
type Target struct {
	Ref         string `json:"ref,omitempty"`
	SnapshotID  string `json:"snapshotId,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testId,omitempty"`
	CSS         string `json:"css,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

// Viewport is the size of a page's viewport in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// ActResult is what one page action did, under the page's id.
type ActResult struct {
	Page string `json:"page"`
	ActionResult
}

// ActionResult reports what an action did. Fields that do not apply to the
// action are zero. Typed values are never echoed: only character counts.
type ActionResult struct {
	Action string `json:"action"`
	Role   string `json:"role,omitempty"`
	Tag    string `json:"tag,omitempty"`
	// Rebound: the ref's element had been re-rendered and the action went
	// to its unique, strongly equivalent replacement.
	Rebound bool `json:"rebound,omitempty"`
	// NoOp: the element was already in the requested state.
	NoOp bool `json:"noop,omitempty"`
	// Requested and Delivered count characters (code points) of type/fill.
	Requested int `json:"requested,omitempty"`
	Delivered int `json:"delivered,omitempty"`
	// Length is the field's text length (code points) after type/fill.
	Length   int      `json:"length,omitempty"`
	Checked  *bool    `json:"checked,omitempty"`
	Selected []string `json:"selected,omitempty"`
	// Files holds the base names of uploaded files.
	Files []string `json:"files,omitempty"`
	// Dialog is set when a JavaScript dialog opened during the action.
	Dialog   *Dialog           `json:"dialog,omitempty"`
	Scroll   *ScrollState      `json:"scroll,omitempty"`
	Viewport *Viewport         `json:"viewport,omitempty"`
	Media    map[string]string `json:"media,omitempty"`
	// Dropped: whether the page took the drop of a drag or drop that
	// delivered HTML drag events (nil: none were delivered).
	Dropped *bool `json:"dropped,omitempty"`
	// Navigation, NewTab and Download report what the action caused, each
	// only when it happened.
	Navigation *Navigation    `json:"navigation,omitempty"`
	NewTab     *NewTab        `json:"newTab,omitempty"`
	Download   *DownloadStart `json:"download,omitempty"`
}

// Dialog is a JavaScript dialog open on the page.
type Dialog struct {
	Type          string `json:"type"`
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt,omitempty"`
}

// ScrollState is a scroll position of the main document.
type ScrollState struct {
	AtBottom bool `json:"atBottom"`
	AtTop    bool `json:"atTop"`
	Y        int  `json:"y"`
	Height   int  `json:"height"`
	Viewport int  `json:"viewport"`
}

// Navigation is a main-frame navigation an action caused.
type Navigation struct {
	URL          string `json:"url,omitempty"`
	Title        string `json:"title,omitempty"`
	SameDocument bool   `json:"sameDocument,omitempty"`
	Pending      bool   `json:"pending,omitempty"`
}

// NewTab is a window the page opened during an action.
type NewTab struct {
	URL string `json:"url,omitempty"`
}

// DownloadStart is a download that began during an action.
type DownloadStart struct {
	GUID              string `json:"guid"`
	URL               string `json:"url,omitempty"`
	SuggestedFilename string `json:"suggestedFilename,omitempty"`
}

// DocIdentity names a main document: an opaque id that changes with every
// new document, and its live URL and title.
type DocIdentity struct {
	Document string `json:"document"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

// DiagEntry is one console message, exception, browser log entry or
// network request.
type DiagEntry struct {
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`
	Level  string `json:"level"`
	Origin string `json:"origin,omitempty"`
	Text   string `json:"text,omitempty"`
	URL    string `json:"url,omitempty"`
	Method string `json:"method,omitempty"`
	Status int64  `json:"status,omitempty"`
	Failed string `json:"failed,omitempty"`
	Type   string `json:"type,omitempty"`
}

// ProbeResult is one action and its observed effect.
type ProbeResult struct {
	Page            string        `json:"page"`
	Before          *DocIdentity  `json:"before"`
	After           *DocIdentity  `json:"after,omitempty"`
	DocumentChanged bool          `json:"documentChanged"`
	Action          *ActionResult `json:"action,omitempty"`
	Refusal         *fsm.Refusal  `json:"refusal,omitempty"`
	ConsoleErrors   []DiagEntry   `json:"consoleErrors"`
	// ConsoleDiscarded is diagnostic_events_discarded when the console log
	// dropped entries: the list above may then be incomplete.
	ConsoleDiscarded fsm.Code `json:"consoleDiscarded,omitempty"`
	Settled          bool     `json:"settled"`
	InFlight         int      `json:"inFlight"`
}

// Query selects elements by role, accessible name and text, as the outline
// shows them (a snapshot of only the elements that match).
type Query struct {
	Role  string `json:"role,omitempty"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text,omitempty"`
	Limit int    `json:"limit,omitempty"` // matches outlined; 0 means 20, at most 200
}

// Snapshot is one chunk of a page outline.
type Snapshot struct {
	// ID names the snapshot; pass it with every ref taken from it.
	ID    string `json:"snapshotId"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Text is the outline chunk: one line per node, "- role "name" [states]
	// [eN]", indented by depth.
	Text        string `json:"text"`
	Cursor      string `json:"cursor,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	Incremental bool   `json:"incremental,omitempty"`
	Unchanged   bool   `json:"unchanged,omitempty"`
	Matches     int    `json:"matches,omitempty"`
	Refs        int    `json:"refs"`
	Lines       int    `json:"lines"`
	Chars       int    `json:"chars"`
	Complete    bool   `json:"complete"`
	Document    string `json:"document"`
}

// WaitOutcome is the outcome of a wait. A timeout is Found false, not an
// error.
type WaitOutcome struct {
	Found     bool   `json:"found"`
	Condition string `json:"condition"`
	URL       string `json:"url,omitempty"`
	ElapsedMS int64  `json:"elapsedMs"`
}

// DiagRead is one bounded read of a diagnostic log.
type DiagRead struct {
	Entries []DiagEntry `json:"entries"`
	// Next is the cursor for the following read.
	Next uint64 `json:"next"`
	// More: entries remain after Next (the read was bounded).
	More bool `json:"more,omitempty"`
	// Discarded is diagnostic_events_discarded when the log dropped
	// entries since the last clear.
	Discarded fsm.Code `json:"discarded,omitempty"`
	// InFlight counts network requests without a response end.
	InFlight int `json:"inFlight,omitempty"`
}

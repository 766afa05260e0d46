package surface

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// Snapshot bounds.
const (
	// DefaultSnapshotChars is the default character budget of one snapshot
	// chunk.
	DefaultSnapshotChars = 20000
	// MaxSnapshotChars bounds the budget a caller may ask for.
	MaxSnapshotChars = 200000
	// maxSnapRecords is how many snapshots a Page keeps for refs, cursors
	// and incremental reads.
	maxSnapRecords = 6
	// maxFrameDepth bounds how deep cross-origin frames are entered.
	maxFrameDepth = 3
	// maxFramesPerSnapshot bounds the cross-origin frames one snapshot
	// enters, and maxFrameLines the lines each contributes.
	maxFramesPerSnapshot = 16
	maxFrameLines        = 2000
	// maxOutlineLines bounds the lines of one frame's outline walk.
	maxOutlineLines = 60000
	// maxClosedChecks bounds the DOM.describeNode calls that confirm closed
	// shadow roots per frame.
	maxClosedChecks = 8
	// maxDiffEdits bounds the incremental diff; a larger change returns the
	// whole snapshot.
	maxDiffEdits = 1000
)

// SnapshotOptions selects what a snapshot shows.
type SnapshotOptions struct {
	// Scope limits the outline to one subtree: a ref (with its snapshot id)
	// or a CSS selector. Other target kinds are refused.
	Scope *Target
	// Interactive lists only actionable nodes.
	Interactive bool
	// Since, a snapshot id of this page, makes the result incremental: only
	// the lines that changed, or Unchanged. The baseline must be Complete
	// (it fit one chunk, was read to its end, or was itself incremental);
	// otherwise the whole new outline is returned. An incremental snapshot
	// walks the whole page.
	Since string
	// MaxChars is the chunk budget; 0 means DefaultSnapshotChars.
	MaxChars int
	// Full shows every node: runs of same-shaped siblings (rows, list
	// items, cards) are not folded, even when the outline does not fit one
	// chunk (see Folds).
	Full bool
	// Query, instead of the whole page, outlines only the elements that
	// match it (with their subtrees); it excludes Scope.
	Query *Query
}

// Query selects elements by role, accessible name and text, as the outline
// shows them. Each given field must match: Role exactly (lower case, as the
// outline writes it), Name and Text as case-insensitive substrings of the
// element's name and rendered text. Of nested matches only the innermost
// counts, so {Role: "row", Text: "Item 42"} is the row, not its table. The
// main document, its open shadow roots and same-origin frames are searched.
type Query struct {
	Role  string `json:"role,omitempty"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text,omitempty"`
	Limit int    `json:"limit,omitempty"` // matches outlined; 0 means 20, at most 200
}

// Folds: a snapshot whose outline does not fit its chunk budget shows each
// run of at least 20 same-shaped siblings as its first two items and one
// line for the rest (a page that fits is shown whole):
//
//	… 2998 more row like the 2 above (items 3–3000 of 3000; refs e3–e3000) [fold 1]
//
// The refs in the range are live refs of the snapshot (they act like the
// ones shown); [Page.Expand] outlines any range of the folded items.

// ExpandOptions names a folded run of a snapshot and the items to show.
type ExpandOptions struct {
	SnapshotID string
	// Fold is the fold's name from its line: "3" in the main document,
	// "f1:3" in frame f1.
	Fold string
	// From and To are 1-based item numbers as the fold line counts them
	// (To inclusive); zero means the fold's first or last item.
	From, To int
	// MaxChars bounds the result; 0 means DefaultSnapshotChars.
	MaxChars int
}

// Snapshot is one chunk of a page outline.
type Snapshot struct {
	// ID names the snapshot; pass it with every ref taken from it.
	ID    string `json:"snapshotId"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Text is the outline chunk: one line per node, "- role "name" [states]
	// [eN]", indented by depth. A truncated chunk ends with a marker line.
	Text string `json:"text"`
	// Cursor, when set, reads the next chunk (Page.SnapshotNext).
	Cursor string `json:"cursor,omitempty"`
	// Truncated reports that Text is not the whole outline.
	Truncated bool `json:"truncated,omitempty"`
	// Incremental reports that Text is a diff since SnapshotOptions.Since:
	// "+ " added lines, "- " removed lines, "@@" hunk headers.
	Incremental bool `json:"incremental,omitempty"`
	// Unchanged reports that nothing changed since SnapshotOptions.Since.
	Unchanged bool `json:"unchanged,omitempty"`
	// Matches counts the elements that matched SnapshotOptions.Query
	// (more than the outline shows when over its limit).
	Matches int `json:"matches,omitempty"`
	// Refs, Lines and Chars measure the outline read so far, which is the
	// whole outline when Complete.
	Refs     int  `json:"refs"`
	Lines    int  `json:"lines"`
	Chars    int  `json:"chars"`
	Complete bool `json:"complete"`
	// Document is an opaque id of the main document the snapshot saw.
	Document string `json:"document"`
}

// snapRecord is the Go-side ref table of one snapshot: which world (frame
// document) each ref prefix belongs to, the ids it listed, and its lines for
// cursors and diffs.
type snapRecord struct {
	id     string
	gen    uint64
	root   *world // the world the walk runs in
	prefix string // its ref prefix

	// mu guards the fields that follow: the outline read so far and its
	// ref table.
	mu          sync.Mutex
	worlds      map[string]*world       // ref prefix ("e", "f1e") -> world
	refs        map[string]map[int]bool // ref prefix -> ids
	lines       []string
	complete    bool // the page walk has ended
	frames      int  // cross-origin frames entered
	interactive bool // the outline lists actionable nodes only
}

type pageSnap struct {
	Done   bool     `json:"done"`
	Text   string   `json:"text"`
	Lines  []string `json:"-"`
	Frames []struct {
		Key   string `json:"key"`
		Line  int    `json:"line"`
		Depth int    `json:"depth"`
	} `json:"frames"`
	Closed []struct {
		Line  int `json:"line"`
		Depth int `json:"depth"`
		I     int `json:"i"`
	} `json:"closed"`
	IDs       []int  `json:"ids"`
	Matches   int    `json:"matches"`
	Refs      int    `json:"refs"`
	Truncated bool   `json:"truncated"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	pageErr
}

func (p *Page) newSnapID() string {
	return fmt.Sprintf("s%d.%d.%s", p.opts.Generation, p.snapSeq.Add(1), p.tag)
}

// parseSnapGen returns the generation a snapshot id was minted in.
func parseSnapGen(id string) (uint64, bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "s") {
		return 0, false
	}
	g, err := strconv.ParseUint(parts[0][1:], 10, 64)
	return g, err == nil
}

// record looks a snapshot up, refusing ids from another generation, page or
// an evicted snapshot as stale.
func (p *Page) record(id string) (*snapRecord, error) {
	if id == "" {
		return nil, fsm.Refuse(fsm.InvalidArgument, "a ref needs the snapshot id it came from")
	}
	g, ok := parseSnapGen(id)
	if !ok {
		return nil, fsm.Refuse(fsm.InvalidArgument, "malformed snapshot id")
	}
	if g != p.opts.Generation {
		return nil, fsm.Refusef(fsm.BindingStale, "snapshot from connection generation %d; this page is generation %d", g, p.opts.Generation)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.snaps {
		if r.id == id {
			return r, nil
		}
	}
	return nil, fsm.Refuse(fsm.BindingStale, "unknown or expired snapshot id")
}

// SnapshotOf returns the id of the newest snapshot kept for this page that
// lists ref (a snapshot or a Find), for a caller given a ref without its
// snapshot id. Refs are numbered per document, so the newest snapshot
// listing one names the same element as any other; the ref stays fenced to
// that snapshot's document. A ref none lists is browser_element_not_found,
// or browser_binding_stale when the snapshots it could come from are of a
// document that was replaced.
func (p *Page) SnapshotOf(ref string) (string, error) {
	prefix, n, err := splitRef(ref)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	snaps := append([]*snapRecord(nil), p.snaps...)
	p.mu.Unlock()
	stale := false
	for i := len(snaps) - 1; i >= 0; i-- {
		r := snaps[i]
		r.mu.Lock()
		w, listed := r.worlds[prefix], r.refs[prefix][n]
		r.mu.Unlock()
		if !listed {
			continue
		}
		if w.dead.Load() {
			stale = true
			continue
		}
		return r.id, nil
	}
	if stale {
		return "", fsm.Refusef(fsm.BindingStale, "ref %s is from a document that was replaced; take a new snapshot", ref)
	}
	return "", fsm.Refusef(fsm.ElementNotFound, "no snapshot of this page lists ref %s; take a snapshot and use a ref it lists", ref)
}

func (p *Page) keep(r *snapRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snaps = append(p.snaps, r)
	if len(p.snaps) > maxSnapRecords {
		p.snaps = append(p.snaps[:0:0], p.snaps[len(p.snaps)-maxSnapRecords:]...)
	}
}

// Snapshot computes the page outline in the page and returns its first
// chunk. It is read-only: when the document is replaced while it runs, it
// re-observes the new document once.
func (p *Page) Snapshot(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	budget := opts.MaxChars
	if budget <= 0 {
		budget = DefaultSnapshotChars
	}
	if budget > MaxSnapshotChars {
		budget = MaxSnapshotChars
	}
	var prev *snapRecord
	if opts.Since != "" {
		r, err := p.record(opts.Since)
		if err != nil {
			return nil, err
		}
		prev = r
	}
	arg := snapArgs{Interactive: opts.Interactive, Full: opts.Full, FoldAt: budget}
	var scopeWorld *world
	if opts.Query != nil {
		if opts.Scope != nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "give a query or a scope, not both")
		}
		q := *opts.Query
		if q.Role == "" && q.Name == "" && q.Text == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "a query needs a role, a name or a text")
		}
		if q.Limit < 0 {
			return nil, fsm.Refuse(fsm.InvalidArgument, "a query's limit must be zero or more")
		}
		arg.Query = &q
	}
	if opts.Scope != nil {
		s := *opts.Scope
		switch {
		case s.Ref != "":
			if err := p.fillSnapshot(&s); err != nil {
				return nil, err
			}
			r, err := p.record(s.SnapshotID)
			if err != nil {
				return nil, err
			}
			prefix, _, err := splitRef(s.Ref)
			if err != nil {
				return nil, err
			}
			r.mu.Lock()
			scopeWorld = r.worlds[prefix]
			r.mu.Unlock()
			if scopeWorld == nil {
				return nil, fsm.Refuse(fsm.BindingStale, "ref not in that snapshot")
			}
			arg.ScopeRef, arg.ScopeSnap = s.Ref, s.SnapshotID
		case s.CSS != "":
			arg.ScopeCSS = s.CSS
		default:
			return nil, fsm.Refuse(fsm.InvalidArgument, "a snapshot scope is a ref or a CSS selector")
		}
	}
	if prev != nil {
		arg.Budget = 0 // a diff needs the whole outline
	} else {
		arg.Budget = budget
	}
	var rec *snapRecord
	var ps *pageSnap
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		rec, ps, err = p.snapshotOnce(ctx, arg, scopeWorld)
		if !errors.Is(err, errWorldGone) || scopeWorld != nil {
			break
		}
	}
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	rec.interactive = opts.Interactive
	p.keep(rec)
	out := &Snapshot{ID: rec.id, URL: ps.URL, Title: ps.Title, Document: rec.root.doc, Matches: ps.Matches}
	if prev != nil {
		prev.mu.Lock()
		base, baseDone := prev.lines, prev.complete
		prev.mu.Unlock()
		if baseDone {
			rec.measure(out)
			if equalLines(base, rec.lines) {
				out.Unchanged, out.Incremental, out.Text = true, true, "unchanged"
				return out, nil
			}
			if d, ok := diffLines(base, rec.lines); ok {
				out.Incremental = true
				text, more := chunk(d, 0, budget, "", true)
				out.Text = text
				out.Truncated = more >= 0
				return out, nil
			}
		}
		// An incomplete baseline cannot be compared: the whole outline
		// follows.
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.fill(out, 0, budget)
	return out, nil
}

// measure fills the totals of the outline read so far. The caller holds
// r.mu or owns r.
func (r *snapRecord) measure(out *Snapshot) {
	out.Refs, out.Lines, out.Chars, out.Complete = countRefs(r), len(r.lines), 0, r.complete
	for _, l := range r.lines {
		out.Chars += len(l) + 1
	}
}

// fill puts the chunk at line off into out. The caller holds r.mu.
func (r *snapRecord) fill(out *Snapshot, off, budget int) {
	r.measure(out)
	text, next := chunk(r.lines[off:], 0, budget, r.id, r.complete)
	out.Text = text
	if next >= 0 {
		out.Truncated = true
		out.Cursor = fmt.Sprintf("%s:%d", r.id, off+next)
	}
}

// Find outlines the elements that match q, with refs usable like those of
// any snapshot (the result is a snapshot of its own id).
func (p *Page) Find(ctx context.Context, q Query) (*Snapshot, error) {
	return p.Snapshot(ctx, SnapshotOptions{Query: &q})
}

// Expand outlines items of a folded run of a snapshot. Their refs belong to
// that snapshot; the snapshot's document must still be the frame's (else
// browser_binding_stale). Items that left the document are counted in a
// limit line.
func (p *Page) Expand(ctx context.Context, o ExpandOptions) (*Snapshot, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	rec, err := p.record(o.SnapshotID)
	if err != nil {
		return nil, err
	}
	prefix, n := "e", 0
	fold := o.Fold
	if i := strings.IndexByte(fold, ':'); i >= 0 {
		prefix, fold = fold[:i]+"e", fold[i+1:]
		if _, _, err := splitRef(prefix + "1"); err != nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "malformed fold (want N or fK:N)")
		}
	}
	if n, err = strconv.Atoi(fold); err != nil || n < 1 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "malformed fold (want N or fK:N)")
	}
	if o.From < 0 || o.To < 0 || (o.To > 0 && o.To < o.From) {
		return nil, fsm.Refuse(fsm.InvalidArgument, "from and to are item numbers, from <= to")
	}
	budget := o.MaxChars
	if budget <= 0 {
		budget = DefaultSnapshotChars
	}
	budget = min(budget, MaxSnapshotChars)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	w := rec.worlds[prefix]
	if w == nil {
		return nil, fsm.Refuse(fsm.NotFound, "no such fold in that snapshot")
	}
	var ps pageSnap
	err = p.admitted1(ctx, w, func() error {
		var err error
		ps, err = invoke(ctx, p, w, jsExpand, expandArgs{Snap: rec.id, Fold: n, From: o.From, To: o.To,
			Prefix: prefix, Interactive: rec.interactive, MaxLines: p.limits.lines})
		return err
	})
	if err != nil {
		if errors.Is(err, errWorldGone) {
			return nil, fsm.Refuse(fsm.BindingStale, "the snapshot's document was replaced; take a new snapshot").WithCause(err)
		}
		return nil, p.readErr(ctx, err)
	}
	if ps.Err != "" {
		return nil, ps.refusal()
	}
	ids := rec.refs[prefix]
	for _, id := range ps.IDs {
		ids[id] = true
	}
	var lines []string
	if ps.Text != "" {
		lines = strings.Split(ps.Text, "\n")
	}
	out := &Snapshot{ID: rec.id, URL: ps.URL, Title: ps.Title, Document: rec.root.doc, Complete: true}
	text, next := chunk(lines, 0, budget, "", true)
	if next >= 0 {
		// The marker chunk writes speaks of snapshots: say how to see the
		// rest of a fold instead.
		text = text[:strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1] +
			fmt.Sprintf("… truncated: %d more lines; expand a narrower range (from, to) to see them\n", len(lines)-next)
	}
	out.Text, out.Truncated = text, next >= 0
	out.Lines, out.Refs = len(lines), strings.Count(ps.Text, "["+prefix)
	out.Chars = charsFrom(lines, 0)
	return out, nil
}

// admitted1 runs fn in world w between two admissions of its document.
func (p *Page) admitted1(ctx context.Context, w *world, fn func() error) error {
	if err := p.admit(ctx, w); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	return p.admit(ctx, w)
}

// SnapshotNext returns the chunk of a snapshot that a cursor points to.
// Lines already read come from memory; further ones resume the paused walk
// in the page, which must still hold the same document (else
// browser_binding_stale). Refs in the chunk belong to the original snapshot
// id.
func (p *Page) SnapshotNext(ctx context.Context, cursor string, maxChars int) (*Snapshot, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(cursor, ':')
	if i < 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "malformed cursor")
	}
	off, err := strconv.Atoi(cursor[i+1:])
	if err != nil || off < 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "malformed cursor")
	}
	rec, err := p.record(cursor[:i])
	if err != nil {
		return nil, err
	}
	if maxChars <= 0 {
		maxChars = DefaultSnapshotChars
	}
	if maxChars > MaxSnapshotChars {
		maxChars = MaxSnapshotChars
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if off > len(rec.lines) {
		return nil, fsm.Refuse(fsm.InvalidArgument, "cursor past the end")
	}
	for !rec.complete && charsFrom(rec.lines, off) < maxChars {
		lines, ps, err := p.moreChunk(ctx, rec, maxChars)
		if err != nil {
			if errors.Is(err, errWorldGone) {
				return nil, fsm.Refuse(fsm.BindingStale, "the snapshot's document was replaced; take a new snapshot").WithCause(err)
			}
			return nil, p.readErr(ctx, err)
		}
		rec.lines = append(rec.lines, lines...)
		rec.complete = ps.Done
	}
	out := &Snapshot{ID: rec.id, Document: rec.root.doc}
	rec.fill(out, off, maxChars)
	return out, nil
}

// moreChunk resumes the paused walk of rec for one chunk, in rec's
// document, admitted before and after. The caller holds rec.mu.
func (p *Page) moreChunk(ctx context.Context, rec *snapRecord, budget int) ([]string, *pageSnap, error) {
	idx, err := p.admitIndex(ctx, rec.root)
	if err != nil {
		return nil, nil, err
	}
	lines, ps, err := p.frameChunk(ctx, rec.root, rec.prefix, jsMore, snapArgs{Budget: budget}, rec, 0, idx)
	if err != nil {
		return nil, nil, err
	}
	if err := p.admit(ctx, rec.root); err != nil {
		return nil, nil, err
	}
	return lines, ps, nil
}

func charsFrom(lines []string, off int) int {
	n := 0
	for _, l := range lines[off:] {
		n += len(l) + 1
	}
	return n
}

func countRefs(r *snapRecord) int {
	n := 0
	for _, ids := range r.refs {
		n += len(ids)
	}
	return n
}

// chunk joins lines from off within budget characters. It returns the text
// and the offset of the first line left out, or -1 when none was.
func chunk(lines []string, off, budget int, snapID string, complete bool) (string, int) {
	var b strings.Builder
	const reserve = 160 // room for the marker line
	i := off
	for ; i < len(lines); i++ {
		l := lines[i]
		if b.Len()+len(l)+1 > budget-reserve && b.Len() > 0 {
			break
		}
		if b.Len()+len(l)+1 > budget-reserve {
			l = capString(l, budget-reserve-1) // one giant line
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if i >= len(lines) {
		if complete {
			return b.String(), -1
		}
		fmt.Fprintf(&b, "… more follows; continue with cursor %s:%d\n", snapID, i)
		return b.String(), i
	}
	rest := 0
	for _, l := range lines[i:] {
		rest += len(l) + 1
	}
	switch {
	case snapID != "" && !complete:
		fmt.Fprintf(&b, "… truncated: %d more lines read so far, and more follows; continue with cursor %s:%d\n", len(lines)-i, snapID, i)
	case snapID != "":
		fmt.Fprintf(&b, "… truncated: %d more lines (%d chars); continue with cursor %s:%d\n", len(lines)-i, rest, snapID, i)
	default:
		fmt.Fprintf(&b, "… truncated: %d more lines (%d chars); take a full snapshot to see them\n", len(lines)-i, rest)
	}
	return b.String(), i
}

func (p *Page) snapshotOnce(ctx context.Context, arg snapArgs, scopeWorld *world) (*snapRecord, *pageSnap, error) {
	w := scopeWorld
	if w == nil {
		var err error
		if w, err = p.mainWorld(ctx); err != nil {
			return nil, nil, err
		}
	}
	idx, err := p.admitIndex(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	rec := &snapRecord{id: p.newSnapID(), gen: p.opts.Generation, worlds: map[string]*world{}, refs: map[string]map[int]bool{}, root: w, prefix: "e"}
	if w.frame != p.main || w.sess != p.sess {
		rec.prefix = p.frameKey(w.frame) + "e"
	}
	lines, ps, err := p.frameChunk(ctx, w, rec.prefix, jsSnapshot, arg, rec, 0, idx)
	if err != nil {
		return nil, nil, err
	}
	// The outline is shown only if the document it was read from is still
	// the one admitted.
	if err := p.admit(ctx, w); err != nil {
		return nil, nil, err
	}
	rec.lines, rec.complete = lines, ps.Done
	return rec, ps, nil
}

// frameKey returns the stable key ("f1", "f2", ...) of a non-main frame.
func (p *Page) frameKey(f cdproto.FrameID) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	k, ok := p.frameKeys[f]
	if !ok {
		k = fmt.Sprintf("f%d", len(p.frameKeys)+1)
		p.frameKeys[f] = k
	}
	return k
}

func (p *Page) frameByKey(key string) (cdproto.FrameID, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for f, k := range p.frameKeys {
		if k == key {
			return f, true
		}
	}
	return "", false
}

// frameChunk runs fn (snapshot or more) in world w for one chunk of its
// outline, then snapshots whole the cross-origin frames the chunk names and
// splices their lines in after their frame lines. idx, when not nil, is the
// frame index w's admission just read (its child frames are taken from it).
func (p *Page) frameChunk(ctx context.Context, w *world, prefix string, fn jsFn[snapArgs, pageSnap], arg snapArgs, rec *snapRecord, depth int, idx frameIndex) ([]string, *pageSnap, error) {
	children := p.tagChildFramesIn(ctx, w, idx)
	arg.Snap, arg.Prefix, arg.MaxLines = rec.id, prefix, p.limits.lines
	ps, err := invoke(ctx, p, w, fn, arg)
	if err != nil {
		return nil, nil, err
	}
	if ps.Err != "" {
		return nil, nil, ps.refusal()
	}
	if ps.Text != "" {
		ps.Lines = strings.Split(ps.Text, "\n")
	}
	ps.Text = ""
	rec.worlds[prefix] = w
	ids := rec.refs[prefix]
	if ids == nil {
		ids = map[int]bool{}
		rec.refs[prefix] = ids
	}
	for _, id := range ps.IDs {
		ids[id] = true
	}
	type insert struct {
		after int
		lines []string
	}
	var ins []insert
	if ps.Truncated {
		ps.Lines = append(ps.Lines, "- limit: outline stopped at its node bound")
	}
	// Closed shadow roots: confirm the candidates through DOM.describeNode.
	if len(ps.Closed) > 0 {
		closed := p.confirmClosed(ctx, w, len(ps.Closed))
		for _, c := range ps.Closed {
			if c.I < len(closed) && closed[c.I] {
				ins = append(ins, insert{c.Line, []string{strings.Repeat("  ", c.Depth) + "- limit: closed shadow root (its content cannot be read)"}})
			}
		}
	}
	for _, f := range ps.Frames {
		if depth >= maxFrameDepth {
			continue
		}
		fid, ok := children[f.Key]
		if !ok {
			continue
		}
		pad := strings.Repeat("  ", f.Depth)
		if rec.frames >= p.limits.frames {
			ins = append(ins, insert{f.Line, []string{pad + "- limit: frame not expanded (frame budget spent); snapshot it by scope"}})
			continue
		}
		rec.frames++
		had := make(map[string]bool, len(rec.worlds))
		for k := range rec.worlds {
			had[k] = true
		}
		cw, err := p.frameWorld(ctx, fid)
		var sub []string
		if err == nil {
			sub, _, err = p.frameChunk(ctx, cw, f.Key+"e", jsSnapshot, snapArgs{Interactive: arg.Interactive, Full: arg.Full, FoldAt: arg.FoldAt}, rec, depth+1, nil)
		}
		if err == nil {
			// Read from the admitted document, and shown only if the frame
			// still holds it.
			err = p.admit(ctx, cw)
		}
		if err != nil {
			if ctx.Err() != nil || p.isGone() || errors.Is(err, ErrDocumentRefused) {
				return nil, nil, err
			}
			sub = []string{"- limit: frame could not be read"}
			if fsm.IsCode(err, fsm.OriginDenied) {
				sub = []string{"- limit: frame of an origin that is not allowed (not shown)"}
			}
			// Refs of lines not shown are not usable.
			for k := range rec.worlds {
				if !had[k] {
					delete(rec.worlds, k)
					delete(rec.refs, k)
				}
			}
		}
		if n := p.limits.frameLines; len(sub) > n {
			sub = append(sub[:n:n], fmt.Sprintf("- limit: frame outline cut at %d lines", n))
		}
		for i := range sub {
			sub[i] = pad + sub[i]
		}
		ins = append(ins, insert{f.Line, sub})
	}
	if len(ins) == 0 {
		return ps.Lines, &ps, nil
	}
	out := make([]string, 0, len(ps.Lines)+len(ins)*4)
	j := 0
	// Inserts come in line order from two lists: merge by position.
	sortInserts := func() {
		for i := 1; i < len(ins); i++ {
			for k := i; k > 0 && ins[k].after < ins[k-1].after; k-- {
				ins[k], ins[k-1] = ins[k-1], ins[k]
			}
		}
	}
	sortInserts()
	for i, l := range ps.Lines {
		out = append(out, l)
		for j < len(ins) && ins[j].after == i {
			out = append(out, ins[j].lines...)
			j++
		}
	}
	for ; j < len(ins); j++ { // after = -1 (before any line) or past the end
		out = append(out, ins[j].lines...)
	}
	return out, &ps, nil
}

// frameWorld returns our world in a non-main frame: in the iframe target's
// own session for a cross-site (out-of-process) frame, else in the page
// session. The frame and every frame above it are judged first: a frame the
// Judge refuses is never entered, and its refusal is returned.
func (p *Page) frameWorld(ctx context.Context, fid cdproto.FrameID) (*world, error) {
	if err := p.judgeFrame(ctx, fid); err != nil {
		return nil, err
	}
	p.mu.Lock()
	c, ok := p.children[fid]
	p.mu.Unlock()
	s := p.sess
	if ok {
		s = c.sess
	}
	for attempt := 0; ; attempt++ {
		w, err := p.worldIn(ctx, s, fid)
		if err != nil {
			return nil, err
		}
		// A world kept from an earlier document of the frame is replaced.
		if err := p.admit(ctx, w); !errors.Is(err, errWorldGone) || attempt == 1 {
			return w, err
		}
	}
}

// tagChildFrames marks, in world w, the <iframe> element of each child frame
// of w's frame with its key, so the outline can name the frame; it returns
// the keys. Same-origin frames are walked inline by the page script and
// need no key, but tagging them is harmless.
func (p *Page) tagChildFrames(ctx context.Context, w *world) map[string]cdproto.FrameID {
	return p.tagChildFramesIn(ctx, w, nil)
}

// tagChildFramesIn is tagChildFrames with the frame index of w's session
// just read (by admitIndex), or nil to read the frame tree.
func (p *Page) tagChildFramesIn(ctx context.Context, w *world, idx frameIndex) map[string]cdproto.FrameID {
	var kids []cdproto.FrameID
	// Out-of-process children are not in this session's frame tree.
	p.mu.Lock()
	for fid, c := range p.children {
		if c.parent == w.frame {
			kids = append(kids, fid)
		}
	}
	p.mu.Unlock()
	if idx != nil {
		oop := len(kids)
		for fid, n := range idx {
			if n.parent == w.frame && !slices.Contains(kids[:oop], fid) {
				kids = append(kids, fid)
			}
		}
	} else if tree, err := cdproto.Call(ctx, w.sess, page.GetFrameTree, cdproto.Empty{}); err == nil && tree.FrameTree != nil {
		if node := findFrame(tree.FrameTree, w.frame); node != nil {
			for _, c := range node.ChildFrames {
				if c.Frame != nil {
					kids = append(kids, c.Frame.ID)
				}
			}
		}
	}
	if len(kids) == 0 {
		return nil
	}
	out := map[string]cdproto.FrameID{}
	for _, fid := range kids {
		key := p.frameKey(fid)
		out[key] = fid
		p.mu.Lock()
		done := w.tagged[fid]
		p.mu.Unlock()
		if done {
			continue // the <iframe> keeps its tag for the world's life
		}
		owner, err := cdproto.Call(ctx, w.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: fid})
		if err != nil {
			continue
		}
		obj, err := cdproto.Call(ctx, w.sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: owner.BackendNodeID, ExecutionContextID: w.ctx})
		if err != nil || obj.Object == nil {
			continue
		}
		// Run in w, addressed by its unique id, with the element as an
		// argument: the browser refuses an argument from another context
		// (resolveNode's numeric context id could name one after a
		// cross-process navigation).
		call := runtime.CallFunctionOnParams{
			FunctionDeclaration: p.tagFrameFn(),
			Arguments:           []*runtime.CallArgument{{ObjectID: obj.Object.ObjectID}, {Value: []byte(quoteJS(w.nonce))}, {Value: []byte(quoteJS(key))}},
			Silent:              new(true),
			ReturnByValue:       new(true),
		}
		call.UniqueContextID = w.uid
		tr, err := cdproto.Call(ctx, w.sess, runtime.CallFunctionOn, call)
		if err == nil && tr.ExceptionDetails == nil {
			p.mu.Lock()
			if w.tagged == nil {
				w.tagged = map[cdproto.FrameID]bool{}
			}
			w.tagged[fid] = true
			p.mu.Unlock()
		}
		p.release(ctx, w.sess, obj.Object.ObjectID)
	}
	return out
}

func findFrame(t *page.FrameTree, id cdproto.FrameID) *page.FrameTree {
	if t.Frame != nil && t.Frame.ID == id {
		return t
	}
	for _, c := range t.ChildFrames {
		if f := findFrame(c, id); f != nil {
			return f
		}
	}
	return nil
}

// confirmClosed asks the browser, for each candidate host the snapshot
// recorded, whether it holds a closed shadow root.
func (p *Page) confirmClosed(ctx context.Context, w *world, n int) []bool {
	if n > maxClosedChecks {
		n = maxClosedChecks
	}
	hosts, err := p.invokeObject(ctx, w, jsClosedHosts, none{})
	if err != nil || hosts == nil || hosts.ObjectID == "" {
		return nil
	}
	defer p.release(ctx, w.sess, hosts.ObjectID)
	props, err := cdproto.Call(ctx, w.sess, runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: hosts.ObjectID, OwnProperties: new(true)})
	if err != nil {
		return nil
	}
	out := make([]bool, n)
	for _, pr := range props.Result {
		i, err := strconv.Atoi(pr.Name)
		if err != nil || i >= n || pr.Value == nil || pr.Value.ObjectID == "" {
			continue
		}
		d, err := cdproto.Call(ctx, w.sess, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: pr.Value.ObjectID, Depth: new(int64(1)), Pierce: new(true)})
		if err != nil || d.Node == nil {
			continue
		}
		for _, sr := range d.Node.ShadowRoots {
			if sr.ShadowRootType == cdproto.ShadowRootTypeClosed {
				out[i] = true
			}
		}
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

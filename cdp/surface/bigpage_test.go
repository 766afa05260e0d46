package surface

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// wireBytes is the size of a snapshot as a client receives it (JSON).
func wireBytes(t *testing.T, s *Snapshot) int {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

var foldLine = regexp.MustCompile(`… (\d+) more row like the 2 above \(items 3–(\d+) of \d+; refs (e\d+)–(e\d+)\) \[fold (\d+)\]`)

// TestBigPageOneTurn: on the 3,000-row table (a button per row, and "Load
// more" adding 100 rows), the refs of row 2,999's button and of "Load more"
// come in two calls and under 30 KB, and both act on the right element.
func TestBigPageOneTurn(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/table")
	ctx := tctx(t)

	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	m := foldLine.FindStringSubmatch(s.Text)
	if m == nil || m[1] != "2998" || m[2] != "3000" || !s.Complete {
		t.Fatalf("first snapshot not folded (complete %v):\n%s", s.Complete, s.Text)
	}
	more := refOf(t, s, `button "Load more"`)
	f := must(p.Find(ctx, Query{Role: "row", Text: "Item 2999"}))(t)
	if f.Matches != 1 || !strings.Contains(f.Text, `row "2999 | Item 2999" › button "Open"`) {
		t.Fatalf("find: %d matches\n%s", f.Matches, f.Text)
	}
	open := refOf(t, f, `button "Open"`)
	total := wireBytes(t, s) + wireBytes(t, f)
	t.Logf("2 calls, %d bytes (snapshot %d, find %d)", total, wireBytes(t, s), wireBytes(t, f))
	if total > 30000 {
		t.Fatalf("2 calls took %d bytes, over 30 KB", total)
	}

	// Expanding the fold at item 2999 shows the same element's ref.
	x := must(p.Expand(ctx, ExpandOptions{SnapshotID: s.ID, Fold: m[5], From: 2999, To: 2999}))(t)
	if got := refOf(t, x, `button "Open"`); got != open || !strings.Contains(x.Text, `row "2999 | Item 2999" › button "Open"`) || strings.Count(x.Text, "\n") != 1 {
		t.Fatalf("expand item 2999: ref %s, want %s\n%s", got, open, x.Text)
	}
	_, err := p.Expand(ctx, ExpandOptions{SnapshotID: s.ID, Fold: "9"})
	wantCode(t, err, fsm.ElementNotFound)
	for _, bad := range []ExpandOptions{{SnapshotID: s.ID, Fold: "x"}, {SnapshotID: s.ID, Fold: "1", From: 9, To: 3}, {SnapshotID: s.ID, Fold: "f:1"}} {
		_, err = p.Expand(ctx, bad)
		wantCode(t, err, fsm.InvalidArgument)
	}
	// A whole fold expanded within a small budget is cut, and says so.
	x = must(p.Expand(ctx, ExpandOptions{SnapshotID: s.ID, Fold: m[5], MaxChars: 2000}))(t)
	if !x.Truncated || len(x.Text) > 2000 || x.Lines != 2998 || !strings.Contains(x.Text, "expand a narrower range") {
		t.Fatalf("whole fold in 2000 chars: truncated %v, %d chars, %d lines", x.Truncated, len(x.Text), x.Lines)
	}

	// A ref given without its snapshot id is found in the newest snapshot
	// listing it: the find's for the row's button, the first snapshot's
	// for "Load more".
	if id := must(p.SnapshotOf(open))(t); id != f.ID {
		t.Fatalf("SnapshotOf(%s) = %s, want the find's %s", open, id, f.ID)
	}
	if id := must(p.SnapshotOf(more))(t); id != s.ID {
		t.Fatalf("SnapshotOf(%s) = %s, want the snapshot's %s", more, id, s.ID)
	}
	_, err = p.SnapshotOf("e999999")
	wantCode(t, err, fsm.ElementNotFound)

	must(p.Click(ctx, Target{Ref: open, SnapshotID: f.ID}))(t)
	var hits []int
	js(t, p, "window.hits", &hits)
	if len(hits) != 1 || hits[0] != 2999 {
		t.Fatalf("hits = %v, want [2999]", hits)
	}
	// A ref inside the fold's range acts without expanding: the last one
	// is row 3000's button.
	must(p.Click(ctx, Target{Ref: m[4], SnapshotID: s.ID}))(t)
	js(t, p, "window.hits", &hits)
	if len(hits) != 2 || hits[1] != 3000 {
		t.Fatalf("hits = %v, want [2999 3000]", hits)
	}
	must(p.Click(ctx, Target{Ref: more, SnapshotID: s.ID}))(t)
	var rows int
	js(t, p, "document.querySelector('#t tbody').rows.length", &rows)
	if rows != 3100 {
		t.Fatalf("rows after Load more = %d", rows)
	}

	// A reload replaces the document: the refs are stale, never rebound.
	must(p.Navigate(ctx, fixtures(t).url("/table")))(t)
	_, err = p.Click(ctx, Target{Ref: open, SnapshotID: f.ID})
	wantCode(t, err, fsm.BindingStale)
	_, err = p.Expand(ctx, ExpandOptions{SnapshotID: s.ID, Fold: m[5]})
	wantCode(t, err, fsm.BindingStale)
	_, err = p.SnapshotOf(open)
	wantCode(t, err, fsm.BindingStale)
}

// TestBigPageWhole: the whole 3,000-row page, unfolded, in one call whose
// outline (the text an agent reads) is at most a third of 500 KB.
func TestBigPageWhole(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/table")
	ctx := tctx(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{Full: true, MaxChars: MaxSnapshotChars}))(t)
	n := len(s.Text)
	t.Logf("whole page: %d bytes of outline (%d as JSON), %d lines, %d refs", n, wireBytes(t, s), s.Lines, s.Refs)
	if !s.Complete || s.Truncated || s.Refs != 3001 || strings.Contains(s.Text, "[fold") {
		t.Fatalf("whole page: complete %v truncated %v refs %d", s.Complete, s.Truncated, s.Refs)
	}
	if n > 500000/3 {
		t.Fatalf("whole page is %d bytes, over a third of 500 KB", n)
	}
	if !strings.Contains(s.Text, `row "3000 | Item 3000" › button "Open"`) {
		t.Fatalf("last row missing")
	}
}

// TestFoldOnlyWhatDoesNotFit: 30 results fit a chunk and are all shown;
// in a chunk too small for them, they fold.
func TestFoldOnlyWhatDoesNotFit(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "")
	ctx := tctx(t)
	must(p.Navigate(ctx, effectSite(t).URL+"/list"))(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if strings.Contains(s.Text, "[fold") || !strings.Contains(s.Text, `link "Result 30"`) || s.Refs != 30 {
		t.Fatalf("a list that fits:\n%s", s.Text)
	}
	s = must(p.Snapshot(ctx, SnapshotOptions{MaxChars: 400}))(t)
	if !strings.Contains(s.Text, "… 28 more listitem like the 2 above (items 3–30 of 30; refs ") || strings.Contains(s.Text, "Result 30") || s.Refs != 30 || !s.Complete {
		t.Fatalf("a list that does not fit 400 characters:\n%s", s.Text)
	}
	// A diff since the folded snapshot folds the same way: nothing changed.
	d := must(p.Snapshot(ctx, SnapshotOptions{MaxChars: 400, Since: s.ID}))(t)
	if !d.Unchanged {
		t.Fatalf("diff since a folded snapshot:\n%s", d.Text)
	}
}

// TestFindQuery: queries by role, name and text; an empty one is refused.
func TestFindQuery(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/table")
	ctx := tctx(t)
	f := must(p.Find(ctx, Query{Text: "Load more"}))(t)
	if f.Matches != 1 || !strings.Contains(f.Text, `button "Load more"`) {
		t.Fatalf("text query:\n%s", f.Text)
	}
	f = must(p.Find(ctx, Query{Role: "button", Name: "open", Limit: 3}))(t)
	if f.Matches != 3000 || strings.Count(f.Text, `button "Open"`) != 3 {
		t.Fatalf("role+name query: %d matches\n%s", f.Matches, f.Text)
	}
	// The outline of a query is bounded: at most 200 matches shown.
	f = must(p.Find(ctx, Query{Role: "button", Name: "Open", Limit: 5000}))(t)
	if f.Matches != 3000 || strings.Count(f.Text, `button "Open"`) != 200 {
		t.Fatalf("over the query bound: %d matches, %d shown", f.Matches, strings.Count(f.Text, `button "Open"`))
	}
	_, err := p.Find(ctx, Query{})
	wantCode(t, err, fsm.InvalidArgument)
	_, err = p.Find(ctx, Query{Text: "x", Limit: -1})
	wantCode(t, err, fsm.InvalidArgument)
	_, err = p.Snapshot(ctx, SnapshotOptions{Query: &Query{Text: "x"}, Scope: &Target{CSS: "h1"}})
	wantCode(t, err, fsm.InvalidArgument)
}

package surface

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/internal/waitfor"
)

func wantCode(t *testing.T, err error, code fsm.Code) {
	t.Helper()
	if !fsm.IsCode(err, code) {
		t.Fatalf("err = %v, want refusal %s", err, code)
	}
}

// must(f())(t) fails t when f returned an error, else returns f's value.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func idx(i int) *int { return &i }

// refOf finds the ref on the first snapshot line containing needle.
func refOf(t testing.TB, s *Snapshot, needle string) string {
	t.Helper()
	for _, l := range strings.Split(s.Text, "\n") {
		if strings.Contains(l, needle) {
			if m := lineRef.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref on a line with %q in:\n%s", needle, s.Text)
	return ""
}

func TestLoginReactLikeInputs(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/login")
	ctx := tctx(t)
	r := must(p.Type(ctx, Target{Label: "Email"}, "ada@example.org"))(t)
	if r.Requested != 15 || r.Delivered != 15 {
		t.Fatalf("type: requested %d delivered %d", r.Requested, r.Delivered)
	}
	// Typing appends, also in an email field (no selection API there).
	must(p.Fill(ctx, Target{Label: "Email"}, "ada@"))(t)
	must(p.Type(ctx, Target{Label: "Email"}, "example.com"))(t)
	must(p.Fill(ctx, Target{Role: "textbox", Name: "Password"}, "s3cret!!"))(t)
	must(p.Check(ctx, Target{Label: "Remember me"}, true))(t)
	must(p.Click(ctx, Target{Role: "button", Name: "Sign in"}))(t)

	// The page's own tracked state, not the tool's claim.
	var state struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	js(t, p, "window.state", &state)
	if state.Email != "ada@example.com" || state.Password != "s3cret!!" {
		t.Fatalf("page state = %+v", state)
	}
	var direct int
	js(t, p, "window.directWrites", &direct)
	if direct != 0 {
		t.Fatalf("%d direct .value writes: the page would have ignored them", direct)
	}
	if got := jsString(t, p, "document.getElementById('out').textContent"); got != "Signed in as ada@example.com" {
		t.Fatalf("out = %q", got)
	}
	var remember bool
	js(t, p, "document.querySelector('[name=remember]').checked", &remember)
	if !remember {
		t.Fatal("checkbox not checked")
	}
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if strings.Contains(s.Text, "s3cret") {
		t.Fatalf("snapshot shows the password:\n%s", s.Text)
	}
	if !strings.Contains(s.Text, `textbox "Password" [password(8 chars)]`) || !strings.Contains(s.Text, `value="ada@example.com"`) {
		t.Fatalf("snapshot states:\n%s", s.Text)
	}
	if !strings.Contains(s.Text, `checkbox "Remember me" [checked]`) {
		t.Fatalf("checkbox state missing:\n%s", s.Text)
	}
}

func TestShadowRoots(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/shadow")
	ctx := tctx(t)
	must(p.Fill(ctx, Target{Label: "Shadow email"}, "deep@example.com"))(t)
	if got := jsString(t, p, "window.shadowValue"); got != "deep@example.com" {
		t.Fatalf("shadow input = %q", got)
	}
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	must(p.Click(ctx, Target{Ref: refOf(t, s, `button "Shadow go"`), SnapshotID: s.ID}))(t)
	var n int
	js(t, p, "window.shadowClicks", &n)
	if n != 1 {
		t.Fatalf("shadow clicks = %d", n)
	}
	if !strings.Contains(s.Text, "limit: closed shadow root") {
		t.Fatalf("closed shadow root not reported:\n%s", s.Text)
	}
	if strings.Contains(s.Text, "Hidden inside") {
		t.Fatalf("closed shadow content leaked:\n%s", s.Text)
	}
}

func TestFrames(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/frames")
	ctx := tctx(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if !strings.Contains(s.Text, `iframe "Other frame" [frame f`) || !strings.Contains(s.Text, "Cross-site content") {
		t.Fatalf("cross-site frame not included:\n%s", s.Text)
	}
	must(p.Click(ctx, Target{Ref: refOf(t, s, `button "Inner button"`), SnapshotID: s.ID}))(t)
	must(p.Fill(ctx, Target{Ref: refOf(t, s, `textbox "Inner field"`), SnapshotID: s.ID}, "same origin"))(t)
	cross := refOf(t, s, `button "Cross button"`)
	if !strings.HasPrefix(cross, "f") {
		t.Fatalf("cross-site ref %q has no frame prefix", cross)
	}
	must(p.Click(ctx, Target{Ref: cross, SnapshotID: s.ID}))(t)
	must(p.Fill(ctx, Target{Ref: refOf(t, s, `textbox "Cross field"`), SnapshotID: s.ID}, "cross site"))(t)
	// A semantic target found only in cross-origin frames: two of them
	// (cross-site, and same-site on another port, which stays in this
	// process and is reached through an isolated world of the page
	// session). The index counts visible matches across them in order.
	_, err := p.Click(ctx, Target{Role: "button", Name: "Cross button"})
	wantCode(t, err, fsm.ElementAmbiguous)
	must(p.Click(ctx, Target{Role: "button", Name: "Cross button", Index: idx(0)}))(t)

	var inner int
	js(t, p, "window.innerClicks", &inner)
	if inner != 1 || jsString(t, p, "window.innerValue") != "same origin" {
		t.Fatalf("same-origin frame state: clicks %d value %q", inner, jsString(t, p, "window.innerValue"))
	}
	w := must(p.Wait(ctx, WaitOptions{Condition: "url", URLIncludes: "/frames"}))(t)
	if !w.Found {
		t.Fatal("url wait")
	}
	var crossClicks int
	// postMessage is asynchronous: the page's state is polled, then judged.
	waitfor.Start(5 * time.Second).Wait(func() bool { js(t, p, "window.crossClicks", &crossClicks); return crossClicks == 2 })
	if crossClicks != 2 || jsString(t, p, "window.crossTyped") != "cross site" || jsString(t, p, "window.crossFrom") != "localhost" {
		t.Fatalf("cross-site frame state: clicks %d typed %q", crossClicks, jsString(t, p, "window.crossTyped"))
	}
	must(p.Fill(ctx, Target{Label: "Cross field", Index: idx(1)}, "port frame"))(t)
	waitfor.Start(5 * time.Second).Wait(func() bool { return jsString(t, p, "window.crossTyped") == "port frame" })
	if jsString(t, p, "window.crossFrom") != "127.0.0.1" {
		t.Fatalf("index 1 typed into the frame of %q", jsString(t, p, "window.crossFrom"))
	}
}

func TestControls(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/controls")
	ctx := tctx(t)

	must(p.Fill(ctx, Target{Label: "Notes"}, "free text"))(t)
	if got := jsString(t, p, "window.ceText"); got != "free text" {
		t.Fatalf("contenteditable = %q", got)
	}
	r := must(p.Select(ctx, Target{Label: "Color"}, "Green"))(t)
	if len(r.Selected) != 1 || r.Selected[0] != "g" || jsString(t, p, "window.selected") != "g" {
		t.Fatalf("select by label: %+v, page %q", r, jsString(t, p, "window.selected"))
	}
	must(p.Select(ctx, Target{Label: "Color"}, "b"))(t)
	if jsString(t, p, "window.selected") != "b" {
		t.Fatal("select by value")
	}
	_, err := p.Select(ctx, Target{Label: "Color"}, "Purple")
	wantCode(t, err, fsm.ElementNotFound)

	// Two "Save" buttons, one hidden: the visible one is unique.
	must(p.Click(ctx, Target{Role: "button", Name: "Save"}))(t)
	must(p.Click(ctx, Target{Text: "Save"}))(t)
	var clicks []string
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "save-visible,save-visible" {
		t.Fatalf("clicks = %v", clicks)
	}

	_, err = p.Click(ctx, Target{Role: "button", Name: "Delete all"})
	wantCode(t, err, fsm.ElementDisabled)
	_, err = p.Click(ctx, Target{Role: "button", Name: "Covered"})
	wantCode(t, err, fsm.ElementObscured)
	_, err = p.Click(ctx, Target{CSS: "button"})
	wantCode(t, err, fsm.ElementAmbiguous)
	if !strings.Contains(err.Error(), "visible matches") {
		t.Fatalf("ambiguity does not name the count: %v", err)
	}
	_, err = p.Click(ctx, Target{Role: "button", Name: "Nope"})
	wantCode(t, err, fsm.ElementNotFound)
	_, err = p.Click(ctx, Target{CSS: "button.hidden"})
	wantCode(t, err, fsm.ElementHidden)
	_, err = p.Click(ctx, Target{Role: "button", Name: "Save", Index: idx(1)})
	wantCode(t, err, fsm.ElementNotFound) // index counts visible matches only
	_, err = p.Click(ctx, Target{CSS: "##"})
	wantCode(t, err, fsm.InvalidArgument)
	_, err = p.Click(ctx, Target{Role: "button", Label: "x"})
	wantCode(t, err, fsm.InvalidArgument)
	js(t, p, "window.clicks", &clicks)
	if len(clicks) != 2 {
		t.Fatalf("a refused click reached the page: %v", clicks)
	}

	must(p.Click(ctx, Target{TestID: "tid"}))(t)
	must(p.Click(ctx, Target{CSS: "button", Index: idx(0)}))(t)
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "save-visible,save-visible,tid,save-visible" {
		t.Fatalf("clicks = %v", clicks)
	}

	r = must(p.Check(ctx, Target{Label: "I agree"}, true))(t)
	var agreed bool
	js(t, p, "window.agreed", &agreed)
	if !agreed || r.Checked == nil || !*r.Checked {
		t.Fatalf("check: page %v result %+v", agreed, r)
	}
	r = must(p.Check(ctx, Target{Label: "I agree"}, true))(t)
	if !r.NoOp {
		t.Fatal("checking a checked box should do nothing")
	}
	must(p.Check(ctx, Target{Label: "I agree"}, false))(t)
	js(t, p, "window.agreed", &agreed)
	if agreed {
		t.Fatal("uncheck")
	}

	r, err = p.Type(ctx, Target{Label: "Short"}, "abcdef")
	wantCode(t, err, fsm.InputIncomplete)
	if r == nil || r.Requested != 6 || r.Delivered != 3 || jsString(t, p, "window.short") != "abc" {
		t.Fatalf("partial type: %+v page %q", r, jsString(t, p, "window.short"))
	}
	must(p.Hover(ctx, Target{TestID: "tid"}))(t)

	// A click without a separate mouse move still crosses the element's
	// boundary first, as a person's pointer does.
	must(p.Click(ctx, Target{Role: "button", Name: "Enter first"}))(t)
	js(t, p, "window.clicks", &clicks)
	if clicks[len(clicks)-1] != "entered" {
		t.Fatalf("clicks = %v: no mouseenter before the click", clicks)
	}
}

func TestPressKeys(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/controls")
	ctx := tctx(t)
	must(p.Press(ctx, &Target{Label: "Keys"}, "a b Shift+c"))(t)
	if got := jsString(t, p, "window.keysValue"); got != "abC" {
		t.Fatalf("value after keys = %q (double input?)", got)
	}
	must(p.Press(ctx, nil, "Backspace ArrowLeft"))(t)
	if got := jsString(t, p, "window.keysValue"); got != "ab" {
		t.Fatalf("value after Backspace = %q", got)
	}
	var keys []string
	js(t, p, "window.keys", &keys)
	if strings.Join(keys, ",") != "a,b,Shift,C,Backspace,ArrowLeft" {
		t.Fatalf("keys = %v", keys)
	}
	// Arrows move the selection of a focused <select>.
	must(p.Press(ctx, &Target{Label: "Color"}, "ArrowDown"))(t)
	if got := jsString(t, p, "document.getElementById('color').value"); got != "g" {
		t.Fatalf("ArrowDown on select: value %q", got)
	}
	_, err := p.Press(ctx, nil, "Hyper+x")
	wantCode(t, err, fsm.InvalidArgument)
}

func TestFormSubmitNavigatesAndNewTab(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, b := testPage(t, "/form")
	ctx := tctx(t)
	must(p.Type(ctx, Target{Label: "Query"}, "hello world"))(t)
	before := must(p.Identity(ctx))(t)
	must(p.Press(ctx, nil, "Enter"))(t)
	w := must(p.Wait(ctx, WaitOptions{Condition: "load", URLIncludes: "/done?q=hello"}))(t)
	if !w.Found {
		t.Fatal("submit did not navigate")
	}
	after := must(p.Identity(ctx))(t)
	if after.Document == before.Document || after.Title != "Done" {
		t.Fatalf("identity before %+v after %+v", before, after)
	}
	rd := must(p.Read(ctx, 0))(t)
	if !strings.Contains(rd.Text, "hello world") {
		t.Fatalf("read = %q", rd.Text)
	}

	// A link with target=_blank opens a new tab; this page stays.
	must(p.Navigate(ctx, fixtures(t).url("/form")))(t)
	created, stop := b.conn.Browser().Subscribe("Target.targetInfoChanged")
	defer stop()
	if err := b.conn.Browser().Call(ctx, "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	defer b.conn.Browser().Call(context.Background(), "Target.setDiscoverTargets", map[string]any{"discover": false}, nil)
	must(p.Click(ctx, Target{Role: "link", Name: "Open in new tab"}))(t)
	found := ""
	for found == "" {
		select {
		case raw := <-created:
			var ev struct {
				TargetInfo struct {
					TargetID string `json:"targetId"`
					Type     string `json:"type"`
					URL      string `json:"url"`
				} `json:"targetInfo"`
			}
			if jsonUnmarshal(raw, &ev) == nil && ev.TargetInfo.Type == "page" && strings.HasSuffix(ev.TargetInfo.URL, "/done?from=link") {
				found = ev.TargetInfo.TargetID
			}
		case <-ctx.Done():
			t.Fatal("no new tab opened")
		}
	}
	b.closeTarget(targetID(found))
	id := must(p.Identity(ctx))(t)
	if !strings.HasSuffix(id.URL, "/form") {
		t.Fatalf("the opener navigated: %s", id.URL)
	}
}

func TestLateContentWaits(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/late")
	ctx := tctx(t)
	// The page adds the text 1.5 s after its load event, by its own clock
	// (window.readyAt): whether it was there when the wait began is read
	// from the page, not guessed from the test's clock, which starts after
	// the load on a loaded machine.
	var absentBefore bool
	js(t, p, "window.readyAt === undefined", &absentBefore)
	w := must(p.Wait(ctx, WaitOptions{Condition: "text", Text: "Ready now"}))(t)
	var presentAfter bool
	js(t, p, "window.readyAt !== undefined", &presentAfter)
	if !w.Found || !presentAfter {
		t.Fatalf("text wait: %+v, the text on the page: %v", w, presentAfter)
	}
	t.Logf("the text wait began before the text appeared: %v (%d ms)", absentBefore, w.ElapsedMS)
	w = must(p.Wait(ctx, WaitOptions{Condition: "visible", Target: &Target{Role: "button", Name: "Late button"}}))(t)
	if !w.Found {
		t.Fatal("visible wait")
	}
	must(p.Click(ctx, Target{Role: "button", Name: "Late button"}))(t)
	w = must(p.Wait(ctx, WaitOptions{Condition: "text_gone", Text: "Loading…"}))(t)
	if !w.Found {
		t.Fatal("text_gone")
	}
	w = must(p.Wait(ctx, WaitOptions{Condition: "enabled", Target: &Target{Text: "Later enabled"}}))(t)
	if !w.Found {
		t.Fatal("enabled")
	}
	w = must(p.Wait(ctx, WaitOptions{Condition: "hidden", Target: &Target{Text: "no such thing"}}))(t)
	if !w.Found {
		t.Fatal("hidden of an absent target")
	}
	start := time.Now()
	w = must(p.Wait(ctx, WaitOptions{Condition: "text", Text: "never appears", Timeout: 300 * time.Millisecond}))(t)
	if w.Found || time.Since(start) > slow.Scale(3*time.Second) || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("timeout wait: %+v after %v", w, time.Since(start))
	}
	_, err := p.Wait(ctx, WaitOptions{Condition: "visible", Target: &Target{CSS: "button"}})
	wantCode(t, err, fsm.ElementAmbiguous)
	var clicks []string
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "late" {
		t.Fatalf("clicks = %v", clicks)
	}
}

func TestLateContentWaitBeforeRender(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	// Enabled/visible waits started before the element exists.
	p, _ := testPage(t, "/late")
	ctx := tctx(t)
	w := must(p.Wait(ctx, WaitOptions{Condition: "enabled", Target: &Target{Role: "button", Name: "Later enabled"}}))(t)
	if !w.Found {
		t.Fatal("enabled wait")
	}
	must(p.Click(ctx, Target{Role: "button", Name: "Later enabled"}))(t)
	var clicks []string
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "en" {
		t.Fatalf("clicks = %v", clicks)
	}
}

func TestBigTable(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/table")
	ctx := tctx(t)
	start := time.Now()
	s := must(p.Snapshot(ctx, SnapshotOptions{Full: true}))(t)
	took := time.Since(start)
	t.Logf("first chunk: %v, %d chars of %d, %d refs", took, len(s.Text), s.Chars, s.Refs)
	if len(s.Text) >= 25000 || !s.Truncated || s.Cursor == "" || !strings.Contains(s.Text, "continue with cursor") || s.Complete {
		t.Fatalf("first chunk: %d chars truncated=%v cursor=%q complete=%v", len(s.Text), s.Truncated, s.Cursor, s.Complete)
	}
	// Read the rest through the cursor.
	all := s.Text
	for cur, n := s.Cursor, 0; cur != ""; n++ {
		if n > 100 {
			t.Fatal("cursor does not end")
		}
		next := must(p.SnapshotNext(ctx, cur, 0))(t)
		if len(next.Text) >= 25000 {
			t.Fatalf("chunk of %d chars", len(next.Text))
		}
		all += next.Text
		cur = next.Cursor
		if cur == "" && (!next.Complete || next.Refs != 3001) {
			t.Fatalf("last chunk: complete %v refs %d", next.Complete, next.Refs)
		}
	}
	if !strings.Contains(all, `row "3000 | Item 3000"`) || !strings.Contains(all, `button "Load more"`) {
		t.Fatal("the cursor did not reach the end of the outline")
	}
	ref := refOf(t, &Snapshot{Text: all}, `button "Load more"`)
	must(p.Click(ctx, Target{Role: "button", Name: "Open", Index: idx(2999)}))(t)
	var hits []int
	js(t, p, "window.hits", &hits)
	if len(hits) != 1 || hits[0] != 3000 {
		t.Fatalf("hits = %v", hits)
	}
	_, err := p.Click(ctx, Target{Role: "button", Name: "Open"})
	wantCode(t, err, fsm.ElementAmbiguous)

	base := must(p.Snapshot(ctx, SnapshotOptions{Full: true, Since: s.ID}))(t) // s was read to its end
	if !base.Incremental || !strings.Contains(base.Text, `[focused]`) {
		t.Fatalf("focus change since s: %+v\n%s", base.Incremental, base.Text[:min(300, len(base.Text))])
	}
	u := must(p.Snapshot(ctx, SnapshotOptions{Full: true, Since: base.ID}))(t)
	if !u.Unchanged || u.Text != "unchanged" {
		t.Fatalf("nothing changed, but: %+v", u.Text[:min(200, len(u.Text))])
	}
	must(p.Click(ctx, Target{Ref: ref, SnapshotID: s.ID}))(t)
	d := must(p.Snapshot(ctx, SnapshotOptions{Full: true, Since: u.ID}))(t)
	if !d.Incremental || d.Unchanged || !strings.Contains(d.Text, `+ `) || !strings.Contains(d.Text, `Item 3100`) {
		t.Fatalf("incremental: %+v\n%s", d.Incremental, d.Text[:min(500, len(d.Text))])
	}
	if strings.Count(d.Text, "\n") > 700 {
		t.Fatalf("incremental diff too long: %d lines", strings.Count(d.Text, "\n"))
	}
	sc := must(p.Scroll(ctx, ScrollOptions{To: "bottom"}))(t)
	if !sc.Scroll.AtBottom {
		t.Fatalf("scroll bottom: %+v", sc.Scroll)
	}
	sc = must(p.Scroll(ctx, ScrollOptions{To: "top"}))(t)
	if sc.Scroll.AtBottom || !sc.Scroll.AtTop {
		t.Fatalf("scroll top: %+v", sc.Scroll)
	}
	sc = must(p.Scroll(ctx, ScrollOptions{DY: 500}))(t)
	if sc.Scroll.Y != 500 {
		t.Fatalf("scroll by pixels: %+v", sc.Scroll)
	}
	sc = must(p.Scroll(ctx, ScrollOptions{Target: &Target{Role: "button", Name: "Load more"}}))(t)
	if !sc.Scroll.AtBottom {
		t.Fatalf("scroll to ref at the end: %+v", sc.Scroll)
	}
	ia := must(p.Snapshot(ctx, SnapshotOptions{Interactive: true, Full: true, MaxChars: 1000}))(t)
	if strings.Contains(ia.Text, "cell") || !strings.Contains(ia.Text, `button "Open"`) || len(ia.Text) > 1000 {
		t.Fatalf("interactive chunk:\n%s", ia.Text)
	}
}

func TestSnapshotBounds(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/table")
	ctx := tctx(t)
	// A diff larger than its edit bound returns the whole outline instead.
	base := must(p.Snapshot(ctx, SnapshotOptions{Full: true, Since: must(p.Snapshot(ctx, SnapshotOptions{Interactive: true, Full: true}))(t).ID}))(t)
	if !base.Complete {
		t.Fatal("a snapshot taken with Since walks the whole page")
	}
	js(t, p, "document.querySelector('#t tbody').replaceChildren(), 1", new(int))
	d := must(p.Snapshot(ctx, SnapshotOptions{Full: true, Since: base.ID}))(t)
	if d.Incremental || d.Unchanged || !strings.Contains(d.Text, `button "Load more"`) {
		t.Fatalf("over the diff bound: incremental %v\n%s", d.Incremental, d.Text)
	}
	// The outline's line bound, and the frame bounds.
	p.limits.lines = 2
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if !strings.Contains(s.Text, "limit: outline stopped at its node bound") || s.Lines != 3 {
		t.Fatalf("line bound:\n%s", s.Text)
	}
	f, _ := testPage(t, "/frames")
	f.limits.frames, f.limits.frameLines = 1, 1
	s = must(f.Snapshot(ctx, SnapshotOptions{}))(t)
	if !strings.Contains(s.Text, "frame outline cut at 1 lines") || !strings.Contains(s.Text, "frame not expanded (frame budget spent)") {
		t.Fatalf("frame bounds:\n%s", s.Text)
	}
	_, err := p.Press(ctx, nil, strings.Repeat("a ", 65))
	wantCode(t, err, fsm.LimitExceeded)
}

func TestStaleRefsAndRebind(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/vanish")
	ctx := tctx(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	pay := refOf(t, s, `button "Pay"`)
	js(t, p, "rerender(), 1", new(int))
	r := must(p.Click(ctx, Target{Ref: pay, SnapshotID: s.ID}))(t)
	if !r.Rebound {
		t.Fatal("re-rendered element was not rebound")
	}
	// One rebind only: after a second re-render the ref is stale.
	js(t, p, "rerender(), 1", new(int))
	_, err := p.Click(ctx, Target{Ref: pay, SnapshotID: s.ID})
	wantCode(t, err, fsm.BindingStale)

	s = must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	pay = refOf(t, s, `button "Pay"`)
	js(t, p, "replaceOther(), 1", new(int))
	_, err = p.Click(ctx, Target{Ref: pay, SnapshotID: s.ID})
	wantCode(t, err, fsm.BindingStale)

	s = must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	other := refOf(t, s, `button "Other"`)
	refund := refOf(t, s, `button "Refund"`)
	js(t, p, "removeIt(), 1", new(int))
	_, err = p.Click(ctx, Target{Ref: refund, SnapshotID: s.ID})
	wantCode(t, err, fsm.BindingStale)

	var clicks []string
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "rerendered" {
		t.Fatalf("clicks = %v", clicks)
	}
	// Unknown ref, unknown snapshot.
	_, err = p.Click(ctx, Target{Ref: "e999", SnapshotID: s.ID})
	wantCode(t, err, fsm.ElementNotFound) // never in the snapshot: nothing went stale
	_, err = p.Click(ctx, Target{Ref: other, SnapshotID: "s0.999.zzzzzz"})
	wantCode(t, err, fsm.BindingStale)
	// A ref without a snapshot means the newest snapshot that lists it
	// (as MCP and the CLI take a bare ref): Other is still there.
	must(p.Click(ctx, Target{Ref: other}))(t)
	js(t, p, "window.clicks", &clicks)
	if strings.Join(clicks, ",") != "rerendered,other" {
		t.Fatalf("clicks after a bare ref = %v, want rerendered,other", clicks)
	}

	// Navigation replaces the document: old refs are stale, never guessed.
	must(p.Navigate(ctx, fixtures(t).url("/vanish")))(t)
	_, err = p.Click(ctx, Target{Ref: other, SnapshotID: s.ID})
	wantCode(t, err, fsm.BindingStale)
	js(t, p, "window.clicks", &clicks)
	if len(clicks) != 0 {
		t.Fatalf("a stale ref clicked something: %v", clicks)
	}
}

func TestGenerationFence(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	b := sharedBrowser(t)
	sess, _ := b.newTab(t)
	ctx := tctx(t)
	p1 := must(New(ctx, sess, Options{Generation: 1}))(t)
	defer p1.Close()
	must(p1.Navigate(ctx, fixtures(t).url("/vanish")))(t)
	s := must(p1.Snapshot(ctx, SnapshotOptions{}))(t)
	p1.Close()
	p2 := must(New(ctx, sess, Options{Generation: 2}))(t)
	defer p2.Close()
	_, err := p2.Click(ctx, Target{Ref: refOf(t, s, `button "Other"`), SnapshotID: s.ID})
	wantCode(t, err, fsm.BindingStale)
	if !strings.Contains(err.Error(), "generation 1") {
		t.Fatalf("refusal does not say why: %v", err)
	}
	_, err = p1.Click(ctx, Target{Role: "button", Name: "Other"})
	wantCode(t, err, fsm.PageClosed)
}

func TestClosedTab(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	b := sharedBrowser(t)
	sess, id := b.newTab(t)
	ctx := tctx(t)
	p := must(New(ctx, sess, Options{}))(t)
	defer p.Close()
	must(p.Navigate(ctx, fixtures(t).url("/controls")))(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if err := b.closeTarget(id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.Done():
	case <-ctx.Done():
		t.Fatal("session did not end")
	}
	_, err := p.Click(ctx, Target{Ref: refOf(t, s, `button "Save"`), SnapshotID: s.ID})
	wantCode(t, err, fsm.PageClosed)
	_, err = p.Snapshot(ctx, SnapshotOptions{})
	wantCode(t, err, fsm.PageClosed)
	_, err = p.Wait(ctx, WaitOptions{Condition: "load"})
	wantCode(t, err, fsm.PageClosed)
}

func TestNavigation(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "")
	ctx := tctx(t)
	n := must(p.Navigate(ctx, fixtures(t).url("/slow")))(t)
	if !n.Loaded || n.Title != "Slow" || !strings.HasSuffix(n.URL, "/slow") || n.Status != 200 {
		t.Fatalf("navigate: %+v", n)
	}
	n = must(p.Navigate(ctx, fixtures(t).url("/nothing-here")))(t)
	if n.Status != 404 {
		t.Fatalf("404 page: %+v", n)
	}
	n = must(p.Navigate(ctx, fixtures(t).url("/nothing-here#frag")))(t)
	if !n.SameDocument || !strings.HasSuffix(n.URL, "#frag") {
		t.Fatalf("fragment navigation: %+v", n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	_, err = p.Navigate(ctx, closed)
	wantCode(t, err, fsm.NavigationFailed)
	if r, _ := fsm.AsRefusal(err); !strings.Contains(r.Detail, "ERR_CONNECTION_REFUSED") {
		t.Fatalf("detail = %q", r.Detail)
	}
}

func TestDialogs(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/controls")
	ctx := tctx(t)
	r := must(p.Click(ctx, Target{Role: "button", Name: "Alert me"}))(t)
	if r.Dialog == nil || r.Dialog.Type != "alert" || r.Dialog.Message != "Hello dialog" {
		t.Fatalf("dialog = %+v", r.Dialog)
	}
	_, err := p.Snapshot(ctx, SnapshotOptions{})
	wantCode(t, err, fsm.DialogOpen)
	if err := p.HandleDialog(ctx, true, ""); err != nil {
		t.Fatal(err)
	}
	must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	r = must(p.Click(ctx, Target{Role: "button", Name: "Confirm me"}))(t)
	if r.Dialog == nil || r.Dialog.Type != "confirm" {
		t.Fatalf("confirm = %+v", r.Dialog)
	}
	if err := p.HandleDialog(ctx, false, ""); err != nil {
		t.Fatal(err)
	}
	var confirmed bool
	js(t, p, "window.confirmed", &confirmed)
	if confirmed {
		t.Fatal("dismissed confirm returned true")
	}
	wantCode(t, p.HandleDialog(ctx, true, ""), fsm.NotFound)

	// A dialog the new document opens while loading ends the navigation's
	// wait instead of hanging it.
	n := must(p.Navigate(ctx, fixtures(t).url("/alert-on-load")))(t)
	if n.Dialog == nil || n.Dialog.Message != "loaded?" || n.Loaded {
		t.Fatalf("navigate into an alert: %+v", n)
	}
	if err := p.HandleDialog(ctx, true, ""); err != nil {
		t.Fatal(err)
	}
	w := must(p.Wait(ctx, WaitOptions{Condition: "text", Text: "after"}))(t)
	if !w.Found {
		t.Fatal("the page did not continue after the dialog")
	}
}

func TestScreenshot(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/scroll")
	ctx := tctx(t)
	decode := func(b []byte) image.Config {
		t.Helper()
		c, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	vp := decode(must(p.Screenshot(ctx, ScreenshotOptions{}))(t))
	full := decode(must(p.Screenshot(ctx, ScreenshotOptions{FullPage: true}))(t))
	el := decode(must(p.Screenshot(ctx, ScreenshotOptions{Target: &Target{CSS: "#end"}}))(t))
	var inner struct {
		W int `json:"w"`
		H int `json:"h"`
	}
	js(t, p, "({w: innerWidth, h: innerHeight})", &inner)
	if vp.Width != inner.W || vp.Height != inner.H {
		t.Fatalf("viewport shot %dx%d, viewport %dx%d", vp.Width, vp.Height, inner.W, inner.H)
	}
	if full.Height < 3000 || full.Width < inner.W-20 {
		t.Fatalf("full page shot %dx%d", full.Width, full.Height)
	}
	if el.Height > 40 || el.Height < 10 {
		t.Fatalf("element shot %dx%d", el.Width, el.Height)
	}
	_, err := p.Screenshot(ctx, ScreenshotOptions{Target: &Target{CSS: "#none"}})
	wantCode(t, err, fsm.ElementNotFound)
}

func TestEvaluateBounds(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/controls")
	ctx := tctx(t)
	r := must(p.Evaluate(ctx, "Array.from({length: 5000}, (_, i) => i)"))(t)
	var arr []any
	if err := jsonUnmarshal(r.Value, &arr); err != nil || len(arr) != 2001 || !r.Truncated {
		t.Fatalf("array: %d items truncated=%v", len(arr), r.Truncated)
	}
	if s, _ := arr[2000].(string); !strings.Contains(s, "3000 more items") {
		t.Fatalf("array marker = %v", arr[2000])
	}
	r = must(p.Evaluate(ctx, "(() => { let o = {}; const root = o; for (let i = 0; i < 20; i++) { o.next = {}; o = o.next; } return root; })()"))(t)
	if !r.Truncated || !strings.Contains(string(r.Value), "depth 8") {
		t.Fatalf("depth: %s", r.Value)
	}
	r = must(p.Evaluate(ctx, "Object.fromEntries(Array.from({length: 500}, (_, i) => ['k' + i, i]))"))(t)
	var obj map[string]any
	if err := jsonUnmarshal(r.Value, &obj); err != nil || len(obj) != 201 || !r.Truncated {
		t.Fatalf("fields: %d", len(obj))
	}
	r = must(p.Evaluate(ctx, "'x'.repeat(300000)"))(t)
	if !r.Truncated || len(r.Value) > 200100 {
		t.Fatalf("string: %d bytes truncated=%v", len(r.Value), r.Truncated)
	}
	r = must(p.Evaluate(ctx, "[{s: 'y'.repeat(300000)}]"))(t)
	if !r.Truncated || len(r.Value) > 200100 {
		t.Fatalf("nested string: %d bytes truncated=%v", len(r.Value), r.Truncated)
	}
	r = must(p.Evaluate(ctx, "Promise.resolve(41 + 1)"))(t)
	if string(r.Value) != "42" {
		t.Fatalf("promise = %s", r.Value)
	}
	r = must(p.Evaluate(ctx, "null.x"))(t)
	if !strings.Contains(r.Exception, "TypeError") {
		t.Fatalf("exception = %q", r.Exception)
	}
}

func TestUpload(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, dir+"/a.txt", "hello")
	writeFile(t, outside+"/secret.txt", "no")
	symlink(t, outside+"/secret.txt", dir+"/link.txt")

	p, _ := testPage(t, "/controls")
	ctx := tctx(t)
	_, err := p.Upload(ctx, Target{Label: "Upload"}, "a.txt")
	wantCode(t, err, fsm.UploadDenied) // no directory set

	p2, _ := testPage(t, "/controls", Options{UploadDir: dir})
	rel, _ := filepath.Rel(dir, outside+"/secret.txt")
	for _, bad := range []string{rel, outside + "/secret.txt", "link.txt", "missing.txt", ".", "sub/../../x"} {
		_, err = p2.Upload(ctx, Target{Label: "Upload"}, bad)
		wantCode(t, err, fsm.UploadDenied)
		if r, _ := fsm.AsRefusal(err); strings.Contains(r.Detail, "/") {
			t.Fatalf("refusal names a path: %q", r.Detail)
		}
	}
	r := must(p2.Upload(ctx, Target{Label: "Upload"}, "a.txt"))(t)
	if len(r.Files) != 1 || r.Files[0] != "a.txt" {
		t.Fatalf("files = %v", r.Files)
	}
	var up []string
	js(t, p2, "window.uploaded", &up)
	if len(up) != 1 || up[0] != "a.txt:5" {
		t.Fatalf("page saw %v", up)
	}
}

func TestDiagnosticsAndProbe(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/diag")
	ctx := tctx(t)
	w := must(p.Wait(ctx, WaitOptions{Condition: "load"}))(t)
	if !w.Found {
		t.Fatal("load")
	}
	var c DiagRead
	for i := 0; ; i++ { // the exception is thrown from a timer: wait for its event
		c = p.Console(DiagOptions{ErrorsOnly: true})
		if len(c.Entries) >= 2 || i > 50 {
			break
		}
		p.diag.waitConsole(ctx, 100*time.Millisecond)
	}
	texts := entryTexts(c.Entries)
	if !strings.Contains(texts, "early error") || !strings.Contains(texts, "thrown later") || strings.Contains(texts, "hello log") {
		t.Fatalf("errors only: %s", texts)
	}
	all := p.Console(DiagOptions{})
	if !strings.Contains(entryTexts(all.Entries), "hello log") || all.Discarded != "" {
		t.Fatalf("all: %s discarded %q", entryTexts(all.Entries), all.Discarded)
	}
	next := p.Console(DiagOptions{Since: all.Next})
	if len(next.Entries) != 0 {
		t.Fatalf("since cursor returned old entries: %s", entryTexts(next.Entries))
	}

	pr := must(p.Probe(ctx, ProbeAction{Act: clickOn(p, Target{Role: "button", Name: "Break"})}))(t)
	if pr.DocumentChanged || pr.Before.Document != pr.After.Document || !pr.Settled {
		t.Fatalf("probe: %+v", pr)
	}
	if !strings.Contains(entryTexts(pr.ConsoleErrors), "boom from button") || strings.Contains(entryTexts(pr.ConsoleErrors), "early error") {
		t.Fatalf("probe console errors: %s", entryTexts(pr.ConsoleErrors))
	}
	n := p.Network(DiagOptions{ErrorsOnly: true})
	found := false
	for _, e := range n.Entries {
		if strings.HasSuffix(e.URL, "/missing") && e.Status == 404 {
			found = true
		}
	}
	if !found || n.InFlight != 0 {
		t.Fatalf("network errors: %+v", n)
	}

	pr = must(p.Probe(ctx, ProbeAction{Act: clickOn(p, Target{Role: "button", Name: "Nope"})}))(t)
	if pr.Refusal == nil || pr.Refusal.Code != fsm.ElementNotFound {
		t.Fatalf("probe refusal = %+v", pr.Refusal)
	}

	must(p.Click(ctx, Target{Role: "button", Name: "Flood"}))(t)
	for i := 0; ; i++ {
		c = p.Console(DiagOptions{})
		if c.Discarded != "" || i > 50 {
			break
		}
		p.diag.waitConsole(ctx, 100*time.Millisecond)
	}
	if c.Discarded != fsm.DiagnosticsDiscarded || len(c.Entries) > DiagCapacity {
		t.Fatalf("flood: %d entries discarded %q", len(c.Entries), c.Discarded)
	}
	small := p.Console(DiagOptions{MaxChars: 500})
	if !small.More || len(small.Entries) == 0 || len(small.Entries) > 10 {
		t.Fatalf("bounded read: %d entries more=%v", len(small.Entries), small.More)
	}
	p.ClearDiagnostics()
	if c = p.Console(DiagOptions{}); c.Discarded != "" || len(c.Entries) != 0 {
		t.Fatalf("after clear: %+v", c)
	}
}

func TestOutcomeUnknownNeverReplayed(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/busy")
	// The click handler blocks the renderer for 1.5 s: the input's
	// acknowledgement cannot arrive before this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, err := p.Click(ctx, Target{Role: "button", Name: "Busy"})
	wantCode(t, err, fsm.OutcomeUnknown)
	ctx2 := tctx(t)
	var n int
	js(t, p, "window.busyClicks", &n)
	if n != 1 {
		t.Fatalf("busy clicks = %d, want exactly 1 (dispatched once, never replayed)", n)
	}
	// A document replaced while the typed value is being read back.
	r, err := p.Type(ctx2, Target{Label: "Leaves"}, "x")
	if !fsm.IsCode(err, fsm.OutcomeUnknown) {
		// The navigation may land after the read-back; then the text was
		// delivered in full.
		if err != nil || r.Delivered != 1 {
			t.Fatalf("type into a leaving page: %+v %v", r, err)
		}
	}
}

func TestSnapshotScopes(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "/login")
	ctx := tctx(t)
	s := must(p.Snapshot(ctx, SnapshotOptions{Scope: &Target{CSS: "form"}}))(t)
	if strings.Contains(s.Text, "heading") || !strings.Contains(s.Text, `button "Sign in"`) {
		t.Fatalf("css scope:\n%s", s.Text)
	}
	full := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	s = must(p.Snapshot(ctx, SnapshotOptions{Scope: &Target{Ref: refOf(t, full, `button "Sign in"`), SnapshotID: full.ID}}))(t)
	if strings.Count(strings.TrimSpace(s.Text), "\n") != 0 || !strings.Contains(s.Text, "Sign in") {
		t.Fatalf("ref scope:\n%s", s.Text)
	}
	_, err := p.Snapshot(ctx, SnapshotOptions{Scope: &Target{Role: "form"}})
	wantCode(t, err, fsm.InvalidArgument)
	_, err = p.Snapshot(ctx, SnapshotOptions{Scope: &Target{CSS: "nav"}})
	wantCode(t, err, fsm.ElementNotFound)
}

type countingGate struct{ n int }

func (g *countingGate) Acquire(ctx context.Context) (func(), error) {
	g.n++
	return func() {}, nil
}

func TestGateHeldForSideEffects(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	g := &countingGate{}
	p, _ := testPage(t, "/controls", Options{Gate: g})
	ctx := tctx(t)
	base := g.n // Navigate took it
	must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	must(p.Wait(ctx, WaitOptions{Condition: "load"}))(t)
	if g.n != base {
		t.Fatalf("read-only operations took the gate")
	}
	must(p.Click(ctx, Target{Role: "button", Name: "Save"}))(t)
	must(p.Type(ctx, Target{Label: "Keys"}, "x"))(t)
	if g.n != base+2 {
		t.Fatalf("gate taken %d times, want 2", g.n-base)
	}
	gerr := &failingGate{}
	p2, _ := testPage(t, "", Options{Gate: gerr})
	_, err := p2.Click(ctx, Target{Role: "button", Name: "Save"})
	if !errors.Is(err, errGateTest) {
		t.Fatalf("err = %v", err)
	}
}

var errGateTest = errors.New("gate closed for reconnect")

type failingGate struct{}

func (failingGate) Acquire(ctx context.Context) (func(), error) { return nil, errGateTest }

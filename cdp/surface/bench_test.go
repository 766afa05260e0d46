package surface

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp"
)

// floors measures, in the same run, the raw CDP round trips an action is
// compared with: Runtime.evaluate("1") and a bare mouse pressed+released
// pair. It returns medians.
func floors(b *testing.B, p *Page) (eval, mouse time.Duration) {
	ctx := context.Background()
	const n = 200
	ev := make([]time.Duration, 0, n)
	mo := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := cdproto.Call(ctx, p.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: "1"}); err != nil {
			b.Fatal(err)
		}
		ev = append(ev, time.Since(t0))
		t0 = time.Now()
		// An empty corner of the page: the pair dispatches and hits nothing.
		if err := p.mouse(ctx, input.DispatchMouseEventTypeMousePressed, 790, 590, input.MouseButtonLeft, 1, 1); err != nil {
			b.Fatal(err)
		}
		if err := p.mouse(ctx, input.DispatchMouseEventTypeMouseReleased, 790, 590, input.MouseButtonLeft, 0, 1); err != nil {
			b.Fatal(err)
		}
		mo = append(mo, time.Since(t0))
	}
	return median(ev), median(mo)
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func report(b *testing.B, per time.Duration, eval, mouse time.Duration) {
	b.ReportMetric(float64(eval.Microseconds()), "floor-eval-µs")
	b.ReportMetric(float64(mouse.Microseconds()), "floor-mouse-µs")
	b.ReportMetric(float64(per)/float64(eval), "x-eval")
	b.ReportMetric(float64(per)/float64(mouse), "x-mouse")
}

func BenchmarkClick(b *testing.B) {
	p, _ := testPage(b, "/controls")
	ctx := context.Background()
	eval, mouse := floors(b, p)
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Click(ctx, Target{Role: "button", Name: "Save"}); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	report(b, per, eval, mouse)
}

func BenchmarkClickRef(b *testing.B) {
	p, _ := testPage(b, "/controls")
	ctx := context.Background()
	s, err := p.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		b.Fatal(err)
	}
	eval, mouse := floors(b, p)
	t := Target{Ref: refOf(b, s, `button "Save"`), SnapshotID: s.ID}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Click(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	report(b, per, eval, mouse)
}

func BenchmarkType(b *testing.B) {
	p, _ := testPage(b, "/controls")
	ctx := context.Background()
	eval, mouse := floors(b, p)
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Fill(ctx, Target{Label: "Keys"}, "hello"); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	report(b, per, eval, mouse)
}

func benchSnapshot(b *testing.B, path string) {
	p, _ := testPage(b, path)
	ctx := context.Background()
	eval, _ := floors(b, p)
	// The first snapshot of a fresh document: a new world, cold wrappers.
	t0 := time.Now()
	s, err := p.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(t0)
	b.ResetTimer()
	t0 = time.Now()
	for i := 0; i < b.N; i++ {
		if s, err = p.Snapshot(ctx, SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(len(s.Text)), "chunk-chars")
	b.ReportMetric(float64(s.Chars), "total-chars")
	b.ReportMetric(float64(s.Refs), "refs")
	b.ReportMetric(float64(per)/float64(eval), "x-eval")
}

func BenchmarkSnapshotTable3000(b *testing.B) { benchSnapshot(b, "/table") }

func BenchmarkSnapshotSmallForm(b *testing.B) { benchSnapshot(b, "/form-small") }

// BenchmarkSnapshotTable3000Whole measures a walk of the whole page (what an
// incremental snapshot costs), returned as its first chunk.
func BenchmarkSnapshotTable3000Whole(b *testing.B) {
	p, _ := testPage(b, "/table")
	ctx := context.Background()
	eval, _ := floors(b, p)
	s, err := p.Snapshot(ctx, SnapshotOptions{Interactive: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		// Since a snapshot that did not fit one chunk: the whole walk, and
		// the whole outline's first chunk.
		if s, err = p.Snapshot(ctx, SnapshotOptions{Since: s.ID}); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(s.Chars), "total-chars")
	b.ReportMetric(float64(s.Refs), "refs")
	b.ReportMetric(float64(per)/float64(eval), "x-eval")
}

// medianOf runs fn n times and returns the median duration.
func medianOf(b *testing.B, n int, fn func() error) time.Duration {
	b.Helper()
	d := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	return median(d)
}

// breakdown reports each part's median in µs and as a multiple of the
// Runtime.evaluate floor measured in the same run.
func breakdown(b *testing.B, eval time.Duration, parts []string, ds []time.Duration) {
	for i, name := range parts {
		b.ReportMetric(float64(ds[i].Microseconds()), name+"-µs")
		b.ReportMetric(float64(ds[i])/float64(eval), name+"-x-eval")
	}
}

// allowAll is a Judge that allows every document, as a Runner's origin gate
// does on an allowed site: it makes the surface take its judged paths
// (admission before and after every read, pointer and focus checks).
func allowAll(string) error { return nil }

// BenchmarkClickRefParts measures a verified click by ref on a judged page
// and, in the same run, the parts it is made of: where the time goes.
func BenchmarkClickRefParts(b *testing.B) {
	p, _ := testPage(b, "/controls", Options{Judge: allowAll})
	ctx := context.Background()
	s, err := p.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		b.Fatal(err)
	}
	t := Target{Ref: refOf(b, s, `button "Save"`), SnapshotID: s.ID}
	eval, mouse := floors(b, p)
	w, err := p.mainWorld(ctx)
	if err != nil {
		b.Fatal(err)
	}
	bnd, err := p.bind(ctx, t)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100
	var x, y float64
	parts := []string{"frametree", "admit", "prepare-js", "prepare", "pointer-check", "mouse", "click-at", "effects"}
	ds := []time.Duration{
		medianOf(b, n, func() error {
			_, err := cdproto.Call(ctx, p.sess, page.GetFrameTree, cdproto.Empty{})
			return err
		}),
		medianOf(b, n, func() error { return p.admit(ctx, w) }),
		medianOf(b, n, func() error {
			_, res, err := p.resolveIn(ctx, bnd, prepareArgs{Kind: "click"})
			if err == nil {
				x, y = res.X, res.Y
			}
			return err
		}),
		medianOf(b, n, func() error {
			_, _, err := p.prepare(ctx, t, prepareArgs{Kind: "click"})
			return err
		}),
		medianOf(b, n, func() error { return p.pointerAllowed(ctx, x, y) }),
		mouse,
		medianOf(b, n, func() error {
			_, err := p.clickAt(ctx, x, y)
			return err
		}),
		medianOf(b, n, func() error {
			p.collectEffects(ctx, p.effectMark(), &ActionResult{})
			return nil
		}),
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Click(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	report(b, per, eval, mouse)
	breakdown(b, eval, parts, ds)
}

// BenchmarkSnapshotSmallFormParts measures a small form's snapshot on a
// judged page and its parts in the same run.
func BenchmarkSnapshotSmallFormParts(b *testing.B) {
	p, _ := testPage(b, "/form-small", Options{Judge: allowAll})
	ctx := context.Background()
	eval, _ := floors(b, p)
	w, err := p.mainWorld(ctx)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100
	rec := &snapRecord{id: p.newSnapID(), worlds: map[string]*world{}, refs: map[string]map[int]bool{}, root: w, prefix: "e"}
	parts := []string{"admit", "tag-frames", "walk"}
	ds := []time.Duration{
		medianOf(b, n, func() error { return p.admit(ctx, w) }),
		medianOf(b, n, func() error { p.tagChildFrames(ctx, w); return nil }),
		medianOf(b, n, func() error {
			_, err := invoke(ctx, p, w, jsSnapshot, snapArgs{Snap: rec.id, Prefix: "e", Budget: DefaultSnapshotChars})
			return err
		}),
	}
	var s *Snapshot
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if s, err = p.Snapshot(ctx, SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(len(s.Text)), "chars")
	b.ReportMetric(float64(per)/float64(eval), "x-eval")
	b.ReportMetric(float64(eval.Microseconds()), "floor-eval-µs")
	breakdown(b, eval, parts, ds)
}

// BenchmarkClickRefJudged is BenchmarkClickRef on a judged page, the way a
// Runner's pages always are.
func BenchmarkClickRefJudged(b *testing.B) {
	p, _ := testPage(b, "/controls", Options{Judge: func(string) error { return nil }})
	ctx := context.Background()
	s, err := p.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		b.Fatal(err)
	}
	eval, mouse := floors(b, p)
	t := Target{Ref: refOf(b, s, `button "Save"`), SnapshotID: s.ID}
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Click(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	report(b, per, eval, mouse)
}

// countingSession counts the commands a page sends, by method: round trips
// are what a page operation costs, independent of the machine's load.
type countingSession struct {
	*cdp.Session
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingSession) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
	return c.Session.Call(ctx, method, params, result)
}

func (c *countingSession) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.calls
	c.calls = map[string]int{}
	return m
}

// BenchmarkRoundTrips reports the commands one judged click by ref, one
// fill and one small form's snapshot send, by method (per operation).
func BenchmarkRoundTrips(b *testing.B) {
	sess, _ := sharedBrowser(b).newTab(b)
	cs := &countingSession{Session: sess, calls: map[string]int{}}
	ctx := context.Background()
	p, err := New(ctx, cs, Options{Judge: allowAll})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	measure := func(name string, op func() error) {
		if err := op(); err != nil { // warm: the world exists
			b.Fatal(err)
		}
		cs.take()
		for i := 0; i < b.N; i++ {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
		total := 0
		for m, n := range cs.take() {
			total += n
			b.ReportMetric(float64(n)/float64(b.N), name+":"+m)
		}
		b.ReportMetric(float64(total)/float64(b.N), name+"-calls")
	}
	if _, err := p.Navigate(ctx, fixtures(b).url("/form-small")); err != nil {
		b.Fatal(err)
	}
	measure("snapshot", func() error { _, err := p.Snapshot(ctx, SnapshotOptions{}); return err })
	if _, err := p.Navigate(ctx, fixtures(b).url("/controls")); err != nil {
		b.Fatal(err)
	}
	s, err := p.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		b.Fatal(err)
	}
	t := Target{Ref: refOf(b, s, `button "Save"`), SnapshotID: s.ID}
	measure("click", func() error { _, err := p.Click(ctx, t); return err })
	measure("fill", func() error { _, err := p.Fill(ctx, Target{Label: "Keys"}, "hello"); return err })
}

package surface

import (
	"context"
	"sort"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
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

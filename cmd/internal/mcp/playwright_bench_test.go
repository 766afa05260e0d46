package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/runner"
)

// BenchmarkPlaywrightLatency: through the Go SDK's MCP client against the
// server in this process (embedded Runner, the vision group on), a
// verified coordinate click (browser_mouse_click_xy: hit tested through
// the page's frames, then pressed and released) and a resize, each timed
// against the same page's click by ref in the same run, interleaved.
// Reported: µs per call of each and its ratio to the click by ref.
//
//	go test -run '^$' -bench PlaywrightLatency -benchtime 200x ./cmd/internal/mcp/
func BenchmarkPlaywrightLatency(b *testing.B) {
	needChromium(b)
	site := fixture(b, map[string]string{"/": latencyForm})
	r, err := runner.New(runner.Options{StateDir: shortDir(b), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.Shutdown(ctx)
	})
	s := inProcessWith(b, r, Caps{CapVision: true})
	s.ok("browser_navigate", map[string]any{"url": site.URL + "/"})
	ref := refFor(b, s.call("browser_snapshot", nil).text, `button "Send"`)
	byRef := func() { s.ok("browser_click", map[string]any{"ref": ref}) }
	sizes := []map[string]any{{"width": 800, "height": 600}, {"width": 801, "height": 600}}
	n := 0
	ops := []struct {
		name string
		op   func()
	}{
		{"click-xy", func() { s.ok("browser_mouse_click_xy", map[string]any{"x": 40, "y": 20}) }},
		{"resize", func() { n++; s.ok("browser_resize", sizes[n%2]) }},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			op.op() // warm both
			byRef()
			var opTotal, refTotal time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				op.op()
				t1 := time.Now()
				byRef()
				refTotal += time.Since(t1)
				opTotal += t1.Sub(t0)
			}
			nf := float64(b.N)
			b.ReportMetric(float64(opTotal.Microseconds())/nf, "op-µs")
			b.ReportMetric(float64(refTotal.Microseconds())/nf, "click-ref-µs")
			b.ReportMetric(float64(opTotal)/float64(refTotal), "ratio")
			b.ReportMetric(0, "ns/op") // the pair is what is measured
		})
	}
}

// inProcessWith is inProcess with capability groups on.
func inProcessWith(b testing.TB, r *runner.Runner, caps Caps) *server {
	b.Helper()
	srv := NewServer(Options{Runner: r.Routes(), Embedded: r, Scopes: allScopes(b), Caps: caps, Session: "mcp-bench"})
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &server{t: b, cs: cs}
}

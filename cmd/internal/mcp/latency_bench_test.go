package mcp

import (
	"context"
	"regexp"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/cmd/internal/runner"
)

// latencyForm is a small form with a counter button: what an agent clicks
// and snapshots most.
const latencyForm = `<!doctype html><title>Small form</title><h1>Contact</h1><form onsubmit="return false">
<label>Name <input name=n></label><label>Email <input name=e type=email></label>
<label>Topic <select name=t><option>Sales</option><option>Support</option></select></label>
<textarea aria-label="Message"></textarea><label><input type=checkbox> Subscribe</label>
<button type=button onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Send</button></form><a href="/done">Help</a>`

// BenchmarkMCPLatency: a verified click by ref and a small-form snapshot,
// through the Go SDK's MCP client against the server in this process
// (in-memory transport, embedded Runner), each beside the same call made
// on the Runner directly (the library the server wraps) on the same page,
// in the same run. Reported: µs per call on each path and their ratio.
//
//	go test -run '^$' -bench MCPLatency -benchtime 200x ./cmd/internal/mcp/
func BenchmarkMCPLatency(b *testing.B) {
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
	s := inProcess(b, r)
	s.ok("browser_navigate", map[string]any{"url": site.URL + "/"})
	snap := s.call("browser_snapshot", nil)
	page, snapID := str(snap.body, "page"), str(snap.body, "snapshotId")
	ref := refFor(b, snap.text, `button "Send"`)
	ctx := runner.WithCaller(context.Background(), runner.Caller{Session: "mcp-bench", Tool: "bench"})

	ops := []struct {
		name    string
		mcp     func()
		library func()
	}{
		{"click-ref",
			func() { s.ok("browser_click", map[string]any{"ref": ref}) },
			func() {
				if _, err := localapi.Of(op.Click).Call(ctx, r.Routes(), op.ClickIn{OnPage: op.OnPage{Page: page}, Element: op.Element{Target: &localapi.Target{Ref: ref, SnapshotID: snapID}}}); err != nil {
					b.Fatal(err)
				}
			}},
		// The envelope alone: a tool that reaches no browser.
		{"status",
			func() { s.ok("browser_status", nil) },
			func() {
				if _, err := r.Status(ctx); err != nil {
					b.Fatal(err)
				}
			}},
		{"snapshot-small",
			func() { s.ok("browser_snapshot", nil) },
			func() {
				if _, err := localapi.Of(op.TakeSnapshot).Call(ctx, r.Routes(), op.SnapshotIn{OnPage: op.OnPage{Page: page}}); err != nil {
					b.Fatal(err)
				}
			}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			op.mcp() // warm both paths
			op.library()
			var mcpTotal, libTotal time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				op.mcp()
				t1 := time.Now()
				op.library()
				libTotal += time.Since(t1)
				mcpTotal += t1.Sub(t0)
			}
			n := float64(b.N)
			b.ReportMetric(float64(mcpTotal.Microseconds())/n, "mcp-µs")
			b.ReportMetric(float64(libTotal.Microseconds())/n, "library-µs")
			b.ReportMetric(float64(mcpTotal)/float64(libTotal), "ratio")
			b.ReportMetric(0, "ns/op") // the pair, not one op, is what is measured
		})
	}
}

// inProcess serves r's tools to a Go SDK client over an in-memory transport.
func inProcess(b testing.TB, r *runner.Runner) *server {
	b.Helper()
	srv := NewServer(Options{Runner: r.Routes(), Embedded: r, Scopes: allScopes(b), Session: "mcp-bench"})
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

func allScopes(b testing.TB) Scopes {
	sc, err := ParseScopes(DefaultScopes)
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

// refFor finds the ref of the outline line that contains line.
func refFor(b testing.TB, outline, line string) string {
	b.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(line) + `[^\n]*\[(e[0-9]+)\]`).FindStringSubmatch(outline)
	if m == nil {
		b.Fatalf("no ref for %s in:\n%s", line, outline)
	}
	return m[1]
}

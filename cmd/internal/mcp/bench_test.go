package mcp

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// The benchmarks compare the MCP entry point (the Go SDK's client driving
// the built `webcodex mcp` over stdio, embedded Runner) with the CLI's path
// (localapi.Client against the built `webcodex serve`), in the same run:
// each iteration times one of each, and the ratio is reported as a metric.
//
//	go test -run '^$' -bench . -benchtime 20x ./cmd/internal/mcp/

// BenchmarkStartup: spawn → tools listed (MCP) against spawn → first
// answer on the socket (daemon).
func BenchmarkStartup(b *testing.B) {
	var mcpTotal, apiTotal time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		state := shortDir(b)
		cmd := exec.Command(binary, "mcp")
		cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+state)
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != len(toolOrder) {
			b.Fatalf("list tools: %v", err)
		}
		mcpTotal += time.Since(start)
		cs.Close()
		cancel()

		start = time.Now()
		d := startDaemon(b)
		apiTotal += time.Since(start)
		d.stop(b)
	}
	report(b, "startup", mcpTotal, apiTotal)
}

func report(b *testing.B, what string, mcpTotal, apiTotal time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(mcpTotal.Microseconds())/n, what+"-mcp-µs")
	b.ReportMetric(float64(apiTotal.Microseconds())/n, what+"-localapi-µs")
	b.ReportMetric(float64(mcpTotal)/float64(apiTotal), what+"-ratio")
	b.ReportMetric(0, "ns/op") // the pair, not one op, is what is measured
}

// daemon is a spawned `webcodex serve` and its local API client.
type daemon struct {
	cmd   *exec.Cmd
	state string
	c     *localapi.Client
}

func startDaemon(b testing.TB) *daemon { return startDaemonAt(b, shortDir(b)) }

// startDaemonAt starts `webcodex serve` on the state root state.
func startDaemonAt(b testing.TB, state string) *daemon {
	b.Helper()
	if err := os.MkdirAll(state, 0o700); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), "WEBCODEX_STATE_DIR="+state)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	d := &daemon{cmd: cmd, state: state, c: localapi.NewClient(state)}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := d.c.Ping(ctx)
		cancel()
		if err == nil {
			return d
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			b.Fatalf("the daemon never answered: %v", err)
		}
		// The socket has no readiness signal of its own: poll it, as the
		// CLI does after starting a Runner.
		time.Sleep(2 * time.Millisecond)
	}
}

func (d *daemon) stop(b testing.TB) {
	d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		b.Fatal("the daemon did not stop")
	}
}

const benchPage = `<!doctype html><title>bench</title><h1>Bench</h1>
<button onclick="document.getElementById('n').textContent = +document.getElementById('n').textContent + 1">Count</button>
<p id="n">0</p><ul>` + `<li>item</li><li>item</li><li>item</li><li>item</li><li>item</li>` + `</ul>`

// BenchmarkToolCall: the same operations on the same kind of page through
// MCP tools and through the local API, per call.
func BenchmarkToolCall(b *testing.B) {
	needChromium(b)
	srv := fixture(b, map[string]string{"/": benchPage})
	s := startServer(b, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})
	page := str(s.ok("browser_status", nil), "current", "page")

	d := startDaemon(b)
	defer d.stop(b)
	ctx := context.Background()
	bi, err := localapi.Launch.Call(ctx, d.c, localapi.LaunchRequest{})
	if err != nil {
		b.Fatal(err)
	}
	pi, err := localapi.Open.Call(ctx, d.c, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/"})
	if err != nil {
		b.Fatal(err)
	}
	button := &localapi.Target{Role: "button", Name: "Count"}
	ops := []struct {
		name string
		mcp  func()
		api  func()
	}{
		{"evaluate",
			func() { s.ok("browser_evaluate", map[string]any{"page": page, "expression": "document.title"}) },
			func() {
				if _, err := localapi.Of(op.Eval).Call(ctx, d.c, op.EvalIn{OnPage: op.OnPage{Page: pi.ID}, Expr: "document.title"}); err != nil {
					b.Fatal(err)
				}
			}},
		{"snapshot",
			func() { s.ok("browser_snapshot", map[string]any{"page": page}) },
			func() {
				if _, err := localapi.Of(op.TakeSnapshot).Call(ctx, d.c, op.SnapshotIn{OnPage: op.OnPage{Page: pi.ID}}); err != nil {
					b.Fatal(err)
				}
			}},
		{"click",
			func() {
				s.ok("browser_click", map[string]any{"page": page, "target": map[string]any{"role": "button", "name": "Count"}})
			},
			func() {
				if _, err := localapi.Of(op.Click).Call(ctx, d.c, op.ClickIn{OnPage: op.OnPage{Page: pi.ID}, Element: op.Element{Target: button}}); err != nil {
					b.Fatal(err)
				}
			}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			o.mcp() // warm both paths
			o.api()
			var mcpTotal, apiTotal time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				o.mcp()
				t1 := time.Now()
				o.api()
				apiTotal += time.Since(t1)
				mcpTotal += t1.Sub(t0)
			}
			report(b, o.name, mcpTotal, apiTotal)
		})
	}

}

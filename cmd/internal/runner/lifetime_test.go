package runner

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/lifetime"
	"github.com/webcodex/webcodex/platform"
)

// TestRunnerMachine: the Runner's life is its machine. Stopped or idle, it
// drains to closed; from then on a launch is refused before anything
// starts, no MCP session is bound, and a second stop is refused by the
// machine and returns.
func TestRunnerMachine(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, r *Runner)
		want []string // the edges taken, in order
	}{
		{"stop", func(t *testing.T, r *Runner) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r.Shutdown(ctx)
		}, []string{"serving --stop--> draining", "draining --drained--> closed"}},
		{"idle", func(t *testing.T, r *Runner) {
			dir, err := os.MkdirTemp("", "wc-idle")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			ln, err := net.Listen("unix", filepath.Join(dir, "s"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.serve(ctx, ln); err != nil {
				t.Fatalf("serve: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatal("serve did not exit when idle")
			}
		}, []string{"serving --idle--> draining", "draining --drained--> closed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tracecheck.Track(t)
			r, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), Chrome: "/nonexistent/chromium", IdleExit: 50 * time.Millisecond,
				ConsentUI: consent.NoConsentUI{}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.serving() {
				t.Fatalf("a new Runner is %s, not serving", r.life.State())
			}
			tc.end(t, r)
			if st := r.life.State(); st != lifetime.RunnerClosed {
				t.Fatalf("after %s the Runner is %s, want closed", tc.name, st)
			}
			var took []string
			for _, rec := range r.life.Trace() {
				took = append(took, fsm.EdgeKey(rec.From, rec.On, rec.To))
			}
			if !slices.Equal(took, tc.want) {
				t.Errorf("edges taken %q, want %q", took, tc.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r.Shutdown(ctx) // refused by the machine: returns at once
			if n := len(r.life.Trace()); n != len(tc.want) {
				t.Errorf("a second stop moved the machine (%d edges)", n)
			}
			if _, err := r.Launch(ctx, localapi.LaunchRequest{}); !errors.Is(err, errClosed) {
				t.Errorf("a launch after %s: %v, want the Runner's refusal before anything starts", tc.name, err)
			}
			self, err := platform.FingerprintOf(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			if r.sessions.bind(r, "mcp-late", self) {
				t.Error("a session was bound after the Runner closed")
			}
		})
	}
}

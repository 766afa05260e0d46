package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/platform"
)

// newTestRunner is the one way a test of this package starts a Runner: opts
// as given, a private state directory unless opts names one, the browser's
// start-up bound stretched with the machine's load, and a bounded Shutdown
// when the test ends (closing every browser it launched or attached).
func newTestRunner(tb testing.TB, opts Options) *Runner {
	tb.Helper()
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(tb.TempDir(), "state")
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = slow.Scale(platform.DefaultStartTimeout)
	}
	if opts.CallBound == 0 {
		// The product's bound holds on a user's machine; a loaded CI
		// runner under -race is slower by the measured factor.
		opts.CallBound = slow.Scale(DefaultCallBound)
	}
	r, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(30*time.Second))
		defer cancel()
		r.Shutdown(ctx)
	})
	return r
}

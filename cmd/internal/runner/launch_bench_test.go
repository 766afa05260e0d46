package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/platform"
)

// BenchmarkOwnedLaunch: webcodex's owned-browser launch (Runner.Launch:
// the launch record, the pipe, the sandbox decision, the connection, the
// download jail, the first page adopted; with an allowlist also the
// egress proxy and request interception) against a bare launch of the same
// Chromium with the same flags (platform.Launch: a private TMPDIR, the
// pipe, one Browser.getVersion), interleaved in one run. Reported: ms per
// launch of each and the ratios to the bare one. Closing is not timed.
//
//	go test -run '^$' -bench OwnedLaunch -benchtime 5x ./cmd/internal/runner/
func BenchmarkOwnedLaunch(b *testing.B) {
	exe, err := platform.FindChromium()
	if err != nil {
		b.Fatalf("Chromium is required: %v", err)
	}
	r, err := New(Options{StateDir: filepath.Join(b.TempDir(), "state")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r.Shutdown(ctx)
	})
	ctx := context.Background()
	bare := func() time.Duration {
		dir, err := os.MkdirTemp("", "wcb-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		udd := filepath.Join(dir, "profile")
		if err := os.Mkdir(udd, 0o700); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		p, err := platform.Launch(ctx, platform.LaunchOptions{Exec: exe, Headless: true, UserDataDir: udd, TempParent: dir})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		p.Close(ctx, nil)
		return d
	}
	owned := func(allow []string) time.Duration {
		t0 := time.Now()
		bi, err := r.Launch(ctx, localapi.LaunchRequest{Allow: allow})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Close(ctx, localapi.BrowserRequest{Browser: bi.ID}); err != nil {
			b.Fatal(err)
		}
		return d
	}
	bare() // warm the page cache for both
	owned(nil)
	var tBare, tOpen, tAllow time.Duration
	for i := 0; i < b.N; i++ {
		tBare += bare()
		tOpen += owned(nil)
		tAllow += owned([]string{"127.0.0.1"})
	}
	n := float64(b.N)
	b.ReportMetric(float64(tBare.Milliseconds())/n, "bare-ms")
	b.ReportMetric(float64(tOpen.Milliseconds())/n, "owned-ms")
	b.ReportMetric(float64(tAllow.Milliseconds())/n, "allowlist-ms")
	b.ReportMetric(float64(tOpen)/float64(tBare), "owned/bare")
	b.ReportMetric(float64(tAllow)/float64(tBare), "allowlist/bare")
	b.ReportMetric(0, "ns/op")
}

package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/lifetime"
)

// shutdownTimeout bounds closing every browser when the Runner stops.
const shutdownTimeout = 30 * time.Second

// Serve runs the Runner's local API on its socket until ctx ends (SIGTERM,
// SIGINT) or, with opts.IdleExit, until it has been idle that long; then it
// closes owned browsers cleanly. It refuses to start when another Runner
// answers on the socket.
func Serve(ctx context.Context, opts Options) error {
	r, err := New(opts)
	if err != nil {
		return err
	}
	ln, err := localapi.Listen(opts.StateDir)
	if err != nil {
		return err
	}
	return r.serve(ctx, ln)
}

// serve runs the local API on ln until ctx ends or the Runner has been
// idle for opts.IdleExit; either way the Runner's machine drains it before
// serve returns.
func (r *Runner) serve(ctx context.Context, ln net.Listener) error {
	opts := r.opts
	srv := &localapi.Server{Routes: r.Routes(), Logf: opts.Logf}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle sync.WaitGroup
	if opts.IdleExit > 0 {
		idle.Add(1)
		go func() {
			defer idle.Done()
			if r.waitIdle(ctx, opts.IdleExit, srv.OpenConns) {
				r.logf("runner: idle for %s with no browser and no client: exiting", opts.IdleExit)
				// idle drains the Runner before the listener stops: a launch
				// that raced the idle check is refused, or closed if listed.
				sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
				r.end(sctx, lifetime.RunnerIdle)
				scancel()
				cancel()
			}
		}()
	}
	r.logf("runner: serving (pid %d)", os.Getpid())
	err := srv.Run(ctx, ln)
	cancel()
	idle.Wait()
	sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer scancel()
	r.Shutdown(sctx) // after idle: refused by the machine, and returns at once
	r.logf("runner: stopped")
	if err != nil {
		return fmt.Errorf("runner: serve: %w", err)
	}
	return nil
}

// stop is the stop route: it closes owned browsers and detaches from
// attached ones before it answers, so a caller that gets the answer knows
// they are gone; then the process serving the Runner ends. Its answer
// carries the audit trail's head hash after the stop record.
func (r *Runner) stop(ctx context.Context, _ struct{}) (localapi.StopResult, error) {
	n := len(r.browserList())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	r.Shutdown(sctx)
	head := r.auditBrowser(ctx, "", "stop", nil)
	if r.opts.Stop != nil {
		r.opts.Stop()
	}
	return localapi.StopResult{Stopped: true, BrowsersClosed: n, AuditHead: head}, nil
}

// waitIdle returns true once the Runner has had no browser and no open
// client connection (openConns) for the whole period d, or false when ctx
// ends first. It looks every d/8 (at most every 30 s), so it exits between
// d and 9d/8 after the last activity.
func (r *Runner) waitIdle(ctx context.Context, d time.Duration, openConns func() int64) bool {
	every := min(max(d/8, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	since := time.Now()
	for {
		select {
		case <-ctx.Done():
			return false
		case now := <-t.C:
			if openConns() > 0 || len(r.browserList()) > 0 || r.offersWaiting() {
				since = now
				continue
			}
			if now.Sub(since) >= d {
				return true
			}
		}
	}
}

package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// shutdownTimeout bounds closing every browser when the Runner stops.
const shutdownTimeout = 30 * time.Second

// Serve runs the Runner's local API on its socket until ctx ends (SIGTERM,
// SIGINT), then closes owned browsers cleanly. It refuses to start when
// another Runner answers on the socket.
func Serve(ctx context.Context, opts Options) error {
	r, err := New(opts)
	if err != nil {
		return err
	}
	ln, err := localapi.Listen(opts.StateDir)
	if err != nil {
		return err
	}
	srv := &localapi.Server{Routes: r.Routes(), Logf: opts.Logf}
	r.logf("runner: serving (pid %d)", os.Getpid())
	err = srv.Run(ctx, ln)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	r.Shutdown(sctx)
	r.logf("runner: stopped")
	if err != nil {
		return fmt.Errorf("runner: serve: %w", err)
	}
	return nil
}

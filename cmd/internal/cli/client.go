package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// startTimeout bounds waiting for a background Runner to answer.
const startTimeout = 15 * time.Second

// stateDir is the state root the Runner uses.
func stateDir() (string, error) { return localapi.StateDir() }

// Client returns a local API client for a Runner that answers, starting
// one in the background when none does (and saying so on stderr).
func (f *Factory) Client(ctx context.Context) (*localapi.Client, error) {
	if f.client != nil {
		return f.client, nil
	}
	dir, err := stateDir()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRunnerUnreachable, err)
	}
	c := localapi.NewClient(dir)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = c.Ping(pctx)
	cancel()
	if err == nil {
		f.client = c
		return c, nil
	}
	if !errors.Is(err, localapi.ErrUnreachable) {
		return nil, err
	}
	if err := startRunner(dir); err != nil {
		return nil, fmt.Errorf("%w: starting a Runner: %v", ErrRunnerUnreachable, err)
	}
	fmt.Fprintln(f.IO.Err, "webcodex: started a Runner in the background (stop it with `webcodex stop`)")
	deadline := time.Now().Add(startTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := c.Ping(pctx)
		cancel()
		if err == nil {
			f.client = c
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("%w: the background Runner did not answer in %s", ErrRunnerUnreachable, startTimeout)
		}
		t := time.NewTimer(50 * time.Millisecond) // poll the socket: a fresh Runner has no other signal
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// startRunner starts `webcodex serve` detached (its own session), logging
// into the private state root.
func startRunner(dir string) error {
	exe := os.Getenv("WEBCODEX_EXECUTABLE") // tests point at the built binary
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "runner.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "serve")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	// The Runner outlives this command; release it so it is not reaped here.
	return cmd.Process.Release()
}

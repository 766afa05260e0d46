package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
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
	c, dir, err := f.answering(ctx)
	if err == nil {
		f.client = c
		return c, nil
	}
	if !errors.Is(err, localapi.ErrUnreachable) {
		return nil, err
	}
	proc, logStart, err := startRunner(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: starting a Runner: %v", ErrRunnerUnreachable, err)
	}
	deadline := time.Now().Add(startTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		hello, err := ping(pctx, c)
		cancel()
		if err == nil {
			proc.Release() // it outlives this command
			// Said once it answers: a Runner that refuses to start (a
			// state directory others may read) was never started.
			switch d := idleExit(); {
			case f.QuietStart:
			case d > 0:
				fmt.Fprintf(f.IO.Err, "webcodex: started a Runner in the background (it exits after %s with no browser; `webcodex stop` ends it now)\n", d)
			default:
				fmt.Fprintln(f.IO.Err, "webcodex: started a Runner in the background (stop it with `webcodex stop`)")
			}
			if hello.Sandbox != nil && !hello.Sandbox.Enabled {
				fmt.Fprintf(f.IO.Err, "webcodex: owned browsers run without Chromium's sandbox: %s\n", hello.Sandbox.Reason)
			}
			f.client = c
			return c, nil
		}
		if exited(proc) {
			// It gave up at once: another command's Runner won the socket,
			// or it refuses the state directory (its reason is the last
			// thing it wrote to its log).
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := ping(pctx, c)
			cancel()
			if err == nil {
				f.client = c
				return c, nil
			}
			tail := logTail(dir, logStart)
			if ref, ok := startRefusal(tail); ok {
				return nil, ref // its refusal, as the CLI shows every refusal
			}
			return nil, fmt.Errorf("%w: the Runner could not start:\n%s", ErrRunnerUnreachable, tail)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			proc.Release()
			return nil, fmt.Errorf("%w: the background Runner did not answer in %s (see runner.log in the state directory)", ErrRunnerUnreachable, startTimeout)
		}
		t := time.NewTimer(50 * time.Millisecond) // poll the socket: a fresh Runner has no other signal
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// Invoker returns where commands reach the Runner: f.Runner when set,
// else the local API client (starting a Runner when none answers).
func (f *Factory) Invoker(ctx context.Context) (localapi.Invoker, error) {
	if f.Runner != nil {
		return f.Runner, nil
	}
	c, err := f.Client(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// RunningClient returns where to reach a Runner that already answers, or
// nil when none does: verbs that only look (status) or end it (stop) never
// start one.
func (f *Factory) RunningClient(ctx context.Context) (localapi.Invoker, error) {
	if f.Runner != nil {
		return f.Runner, nil
	}
	return f.running(ctx, true)
}

// StoppingClient is RunningClient for `webcodex stop`: it says nothing of
// the Runner's environment or version, which stopping it settles.
func (f *Factory) StoppingClient(ctx context.Context) (localapi.Invoker, error) {
	if f.Runner != nil {
		return f.Runner, nil
	}
	return f.running(ctx, false)
}

func (f *Factory) running(ctx context.Context, warn bool) (localapi.Invoker, error) {
	c, _, err := f.answeringWarn(ctx, warn)
	switch {
	case errors.Is(err, localapi.ErrUnreachable):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return c, nil
}

// answering returns a client for the Runner of the state root, and the
// root, after one ping: with an error wrapping localapi.ErrUnreachable when
// no Runner answers there yet. A Runner started with another environment is
// said on stderr.
func (f *Factory) answering(ctx context.Context) (*localapi.Client, string, error) {
	return f.answeringWarn(ctx, true)
}

func (f *Factory) answeringWarn(ctx context.Context, warn bool) (*localapi.Client, string, error) {
	dir, err := stateDir()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrRunnerUnreachable, err)
	}
	c := localapi.NewClient(dir)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	hello, err := ping(pctx, c)
	cancel()
	if err != nil {
		return c, dir, err // the client still names the socket a Runner starts on
	}
	if warn {
		f.warnEnv(hello)
	}
	return c, dir, nil
}

func ping(ctx context.Context, c localapi.Invoker) (localapi.PingResult, error) {
	return localapi.Ping.Call(ctx, c, struct{}{})
}

// Gone reports whether the Runner on inv no longer answers (after stop).
func Gone(ctx context.Context, inv localapi.Invoker) bool {
	_, err := ping(ctx, inv)
	return errors.Is(err, localapi.ErrUnreachable)
}

// warnEnv says on stderr when the running Runner is another version than
// this command, or was started with other values of the variables it reads
// than this command has: it keeps the environment it started with.
func (f *Factory) warnEnv(hello localapi.PingResult) {
	if hello.Version != "" && hello.Version != Version {
		fmt.Fprintf(f.IO.Err, "webcodex: the running Runner is version %s, this command is %s; `webcodex stop`, then run the command again to start a Runner of this version\n", hello.Version, Version)
	}
	if diff := localapi.EnvDiff(hello.Env, localapi.EnvFingerprint()); len(diff) > 0 {
		fmt.Fprintf(f.IO.Err, "webcodex: the running Runner was started with a different %s than this command has, and keeps it; `webcodex stop`, then run the command again to start one with yours\n", strings.Join(diff, ", "))
	}
}

// idleExitEnv overrides how long a background Runner waits idle before it
// exits (a Go duration such as 30s or 1h; 0 never).
const idleExitEnv = "WEBCODEX_IDLE_EXIT"

// defaultIdleExit is the background Runner's idle period unless
// WEBCODEX_IDLE_EXIT says otherwise.
const defaultIdleExit = 10 * time.Minute

func idleExit() time.Duration {
	if v := os.Getenv(idleExitEnv); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			return d
		}
	}
	return defaultIdleExit
}

// exited reports whether the started Runner has exited, reaping it.
func exited(p *os.Process) bool {
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(p.Pid, &ws, syscall.WNOHANG, nil)
	return pid == p.Pid || errors.Is(err, syscall.ECHILD)
}

// maxLogTail bounds what of runner.log a failed start shows.
const maxLogTail = 2048

// logTail returns what the Runner wrote to its log from offset on, at most
// maxLogTail bytes of its last lines. The Runner logs no paths, ports or
// tokens, so it can be shown.
func logTail(dir string, offset int64) string {
	f, err := os.Open(filepath.Join(dir, "runner.log"))
	if err != nil {
		return "  (its log cannot be read)"
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size()-offset > maxLogTail {
		offset = st.Size() - maxLogTail
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, maxLogTail))
	text := strings.TrimSpace(string(b))
	if text == "" {
		return "  (it wrote nothing to its log)"
	}
	return "  " + strings.ReplaceAll(text, "\n", "\n  ")
}

// startRefusal is the refusal a Runner that gave up at start wrote last to
// its log ("refused: CODE", its detail, "next: …"), when it wrote one.
func startRefusal(tail string) (*fsm.Refusal, bool) {
	lines := strings.Split(tail, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		code, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "refused: ")
		if !ok {
			continue
		}
		if !fsm.Code(code).Valid() {
			return nil, false
		}
		var detail, next string
		for _, l := range lines[i+1:] {
			l = strings.TrimSpace(l)
			if n, ok := strings.CutPrefix(l, "next: "); ok {
				next = n
			} else if detail == "" {
				detail = l
			}
		}
		ref := fsm.Refuse(fsm.Code(code), detail)
		if next != "" {
			ref.Next = next
		}
		return ref, true
	}
	return nil, false
}

// startRunner starts `webcodex serve` detached (its own session), logging
// into the private state root; it returns the process (the caller reaps or
// releases it) and where in runner.log this Runner's lines begin.
func startRunner(dir string) (*os.Process, int64, error) {
	exe := os.Getenv("WEBCODEX_EXECUTABLE") // tests point at the built binary
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, 0, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("create the state directory: %w", pathless(err))
	}
	logf, err := os.OpenFile(filepath.Join(dir, "runner.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("open its log in the state directory: %w", pathless(err))
	}
	defer logf.Close()
	var offset int64
	if st, err := logf.Stat(); err == nil {
		offset = st.Size()
	}
	cmd := exec.Command(exe, "serve", "--idle-exit="+idleExit().String())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	return cmd.Process, offset, nil
}

// pathless drops the path from a file error: the reason stays.
func pathless(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

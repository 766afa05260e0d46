package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/platform"
)

// launchLogLines bounds how much of Chromium's own output a failed launch
// logs.
const launchLogLines = 20

// logLaunchFailure logs why a launch failed and the last lines Chromium
// wrote, so runner.log says what went wrong. Paths the Runner chose (the
// launch directory, the profile, the state root) are replaced by names;
// the platform has already redacted DevTools URLs.
func (r *Runner) logLaunchFailure(err error, launchDir, profile string) {
	r.logf("runner: launch failed: %v", err)
	lerr, ok := errors.AsType[*platform.LaunchError](err)
	if !ok || len(lerr.Output) == 0 {
		return
	}
	out := string(bytes.TrimSpace(lerr.Output))
	for _, p := range []struct{ path, name string }{{profile, "<profile>"}, {launchDir, "<launch-dir>"}, {r.opts.StateDir, "<state-dir>"}} {
		if p.path != "" {
			out = strings.ReplaceAll(out, p.path, p.name)
		}
	}
	lines := strings.Split(out, "\n")
	if len(lines) > launchLogLines {
		lines = lines[len(lines)-launchLogLines:]
	}
	for _, l := range lines {
		r.logf("runner:   chromium: %s", l)
	}
}

// launchFailed is the error a failed start-up returns, in one line a
// person reads: the browser binary, the platform's reason (with the
// browser's own when it gave one) without Go package prefixes, and where
// its output was logged. A refusal is returned as it is.
func (r *Runner) launchFailed(err error, exe string) error {
	lerr, ok := errors.AsType[*platform.LaunchError](err)
	if !ok {
		return err
	}
	where := r.opts.LogWhere
	if where == "" {
		where = "the Runner's log"
	}
	return &launchFailure{exe: exe, where: where, err: lerr}
}

// launchFailure is a failed start-up as launchFailed words it; it wraps
// the platform's *LaunchError.
type launchFailure struct {
	exe, where string
	err        *platform.LaunchError
}

func (e *launchFailure) Error() string {
	return fmt.Sprintf("launching %s failed: %s; its output is in %s", e.exe, localapi.Plain(e.err.Error()), e.where)
}

func (e *launchFailure) Unwrap() error { return e.err }

// LogWhere names the file behind stderr when it is runner.log in dir (a
// Runner the CLI started in the background), with the home directory
// written as ~; else the standard error of the command (cmd) that runs the
// Runner.
func LogWhere(dir string, stderr io.Writer, cmd string) string {
	log := filepath.Join(dir, "runner.log")
	var a, b syscall.Stat_t
	if f, ok := stderr.(*os.File); ok && syscall.Fstat(int(f.Fd()), &a) == nil && syscall.Stat(log, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
		if home, err := os.UserHomeDir(); err == nil && home != "" {
			if rel, ok := strings.CutPrefix(dir, home+string(filepath.Separator)); ok {
				dir = filepath.Join("~", rel)
			}
		}
		return "runner.log in " + dir
	}
	return "the standard error of " + cmd
}

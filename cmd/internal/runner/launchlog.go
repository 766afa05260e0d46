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

// launchFailed is the error a failed start-up returns: the platform's one
// line (with the browser's own reason when it gave one) and where its
// output was logged. A refusal is returned as it is.
func (r *Runner) launchFailed(err error) error {
	if _, ok := errors.AsType[*platform.LaunchError](err); !ok {
		return err
	}
	where := r.opts.LogWhere
	if where == "" {
		where = "the Runner's log"
	}
	return fmt.Errorf("%w (the browser's output is in %s)", err, where)
}

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

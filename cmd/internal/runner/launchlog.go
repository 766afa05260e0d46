package runner

import (
	"bytes"
	"errors"
	"strings"

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

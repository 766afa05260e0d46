package platform

import (
	"os"
	"os/exec"

	"github.com/webcodex/webcodex/fsm"
)

// chromiumEnv names the variable that overrides discovery.
const chromiumEnv = "WEBCODEX_CHROME"

// FindChromium returns the browser executable to launch: $WEBCODEX_CHROME
// when set, else /usr/bin/chromium, else the first of chromium-browser,
// chromium and google-chrome found on $PATH. When none is usable it returns
// a [fsm.RequiresSetup] refusal whose detail is the install command.
func FindChromium() (string, error) {
	return findChromium(os.Getenv(chromiumEnv), []string{"/usr/bin/chromium"},
		[]string{"chromium-browser", "chromium", "google-chrome"})
}

func findChromium(override string, fixed, names []string) (string, error) {
	if override != "" {
		if isExecutable(override) {
			return override, nil
		}
		return "", fsm.Refuse(fsm.RequiresSetup, chromiumEnv+" does not name an executable browser")
	}
	for _, p := range fixed {
		if isExecutable(p) {
			return p, nil
		}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fsm.Refuse(fsm.RequiresSetup, "install Chromium: apt-get install -y chromium")
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

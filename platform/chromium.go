package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// chromiumEnv names the variable that overrides discovery.
const chromiumEnv = "WEBCODEX_CHROME"

// FindChromium returns the browser executable to launch:
// $WEBCODEX_CHROME when set, else the first browser installed where this
// operating system puts it ([browserInstalls]), else on Linux the first of
// chromium-browser, chromium and google-chrome found on $PATH. When none is
// usable it returns a [fsm.RequiresSetup] refusal whose detail says what to
// install.
func FindChromium() (string, error) {
	home, _ := os.UserHomeDir()
	var names []string
	if runtime.GOOS == "linux" {
		names = []string{"chromium-browser", "chromium", "google-chrome"}
	}
	return findChromium(os.Getenv(chromiumEnv), browserInstalls(runtime.GOOS, "/", os.Getenv, home), names, installHint(runtime.GOOS))
}

func findChromium(override string, fixed, names []string, hint string) (string, error) {
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
	return "", fsm.Refuse(fsm.RequiresSetup, hint)
}

// macApps are the application bundles FindChromium looks for on macOS, in
// order; each bundle's executable has the bundle's name.
var macApps = []string{"Chromium", "Google Chrome", "Google Chrome for Testing", "Microsoft Edge"}

// windowsApps are the executables FindChromium looks for on Windows below
// each of Program Files, Program Files (x86) and the user's local
// application data (per-user installs), in order. Chrome for Testing has
// no install location of its own there: name it with WEBCODEX_CHROME.
var windowsApps = [][]string{
	{"Chromium", "Application", "chrome.exe"},
	{"Google", "Chrome", "Application", "chrome.exe"},
	{"Microsoft", "Edge", "Application", "msedge.exe"},
}

// browserInstalls lists where goos installs Chromium, Chrome, Chrome for
// Testing and Edge, in the order FindChromium tries them. root is the
// file system's root ("/"), env reads the environment and home is the
// user's home directory: parameters, so that each system's list can be
// checked against a fake root on any system.
func browserInstalls(goos, root string, env func(string) string, home string) []string {
	var out []string
	switch goos {
	case "linux":
		out = append(out, filepath.Join(root, "usr", "bin", "chromium"))
	case "darwin":
		dirs := []string{filepath.Join(root, "Applications")}
		if home != "" {
			dirs = append(dirs, filepath.Join(home, "Applications"))
		}
		for _, dir := range dirs {
			for _, app := range macApps {
				out = append(out, filepath.Join(dir, app+".app", "Contents", "MacOS", app))
			}
		}
	case "windows":
		for _, v := range []string{"ProgramFiles", "ProgramFiles(x86)", "LocalAppData"} {
			dir := env(v)
			if dir == "" {
				continue
			}
			for _, app := range windowsApps {
				out = append(out, filepath.Join(append([]string{dir}, app...)...))
			}
		}
	}
	return out
}

// installHint says what to install when no browser is found.
func installHint(goos string) string {
	switch goos {
	case "darwin":
		return "install Google Chrome, Chromium or Microsoft Edge into /Applications, or set " + chromiumEnv
	case "windows":
		return "install Google Chrome or Microsoft Edge, or set " + chromiumEnv
	}
	return "install Chromium: apt-get install -y chromium"
}

// isExecutable reports whether path is a regular file someone may execute:
// on Windows, which keeps no execute bits, an .exe file.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if runtime.GOOS == "windows" {
		return strings.EqualFold(filepath.Ext(path), ".exe")
	}
	return fi.Mode().Perm()&0o111 != 0
}

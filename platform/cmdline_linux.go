package platform

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrProfileUnproven reports that no profile directory's SingletonLock
// names the browser process, so its profile cannot be proven.
var ErrProfileUnproven = errors.New("platform: no profile lock names the browser process")

// ErrProfileContradicted reports that the browser's command line names
// another profile than the one whose lock names it.
var ErrProfileContradicted = errors.New("platform: the browser's command line names another profile")

// maxProfileHints bounds the readings of a rewritten title: each space after
// --user-data-dir= may end the path or be part of it.
const maxProfileHints = 64

// ProveProfile checks that userDataDir is the profile of the browser process
// pid. The proof is the profile's SingletonLock, which Chromium points at
// "HOSTNAME-PID" while it runs: it must name this host and pid. The command
// line only corroborates, because Chromium rewrites its process title
// whenever a D-Bus session bus is present (every desktop session):
// /proc/PID/cmdline then holds one space-joined string. When the command
// line still names a --user-data-dir and none of its readings is
// userDataDir, the proof fails with [ErrProfileContradicted].
func ProveProfile(userDataDir string, pid int) error {
	if !lockNames(userDataDir, pid) {
		return fmt.Errorf("%w: %d", ErrProfileUnproven, pid)
	}
	hints, stated, err := profileHints(pid)
	if err != nil {
		return err
	}
	if !stated {
		return nil // the default profile or CHROME_USER_DATA_DIR: the lock alone decides
	}
	for _, h := range hints {
		if sameDir(h, userDataDir) {
			return nil
		}
	}
	return ErrProfileContradicted
}

// UserDataDirOf returns the profile directory of the browser process pid:
// of the directories its command line names (intact or rewritten, see
// [ProveProfile]) or, when it names none, the product's default profiles,
// the one whose SingletonLock names this host and pid. The path is for
// comparisons inside the Runner only; it is never shown.
func UserDataDirOf(pid int) (string, error) {
	hints, stated, err := profileHints(pid)
	if err != nil {
		return "", err
	}
	if !stated {
		hints = defaultProfiles(pid)
	}
	for _, h := range hints {
		if lockNames(h, pid) {
			return h, nil
		}
	}
	return "", fmt.Errorf("%w: %d", ErrProfileUnproven, pid)
}

// lockNames reports whether dir's SingletonLock names this host and pid.
func lockNames(dir string, pid int) bool {
	target, err := os.Readlink(filepath.Join(dir, singletonLock))
	if err != nil {
		return false
	}
	host, lockPID, ok := parseLockTarget(target)
	if !ok || lockPID != pid {
		return false
	}
	me, err := os.Hostname()
	return err == nil && host == me
}

// profileHints returns the absolute directories pid's command line names
// with --user-data-dir, and whether it names one at all: one from an intact
// argv; from a rewritten title every reading of the value that ends at a
// space or at the end, longest first. Relative values are resolved against
// the browser's working directory, not ours.
func profileHints(pid int) (hints []string, stated bool, err error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, false, fmt.Errorf("platform: read command line: %w", ErrNoProcess)
	}
	cwd, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	var values []string
	for _, a := range bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0}) {
		s := string(a)
		if v, ok := strings.CutPrefix(s, "--user-data-dir="); ok {
			values = append(values, v) // intact argv: the value is exact
			continue
		}
		_, rest, ok := strings.Cut(s, " --user-data-dir=")
		if !ok {
			continue
		}
		stated = true
		values = append(values, rest)
		for i := len(rest) - 1; i > 0 && len(values) < maxProfileHints; i-- {
			if rest[i] == ' ' {
				values = append(values, rest[:i])
			}
		}
	}
	for _, v := range values {
		stated = true
		if v == "" {
			continue
		}
		if !filepath.IsAbs(v) {
			if cwd == "" {
				continue
			}
			v = filepath.Join(cwd, v)
		}
		hints = append(hints, filepath.Clean(v))
	}
	return hints, stated, nil
}

// defaultProfiles returns where the browser pid keeps its profile when no
// flag names one: $CHROME_USER_DATA_DIR, else its product's directories
// under its own config directory ($XDG_CONFIG_HOME, else ~/.config), read
// from its environment.
func defaultProfiles(pid int) []string {
	env := map[string]string{}
	if raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ")); err == nil {
		for _, kv := range bytes.Split(raw, []byte{0}) {
			if k, v, ok := strings.Cut(string(kv), "="); ok {
				env[k] = v
			}
		}
	}
	var out []string
	if d := env["CHROME_USER_DATA_DIR"]; filepath.IsAbs(d) {
		out = append(out, d)
	}
	config := env["XDG_CONFIG_HOME"]
	if !filepath.IsAbs(config) {
		home := env["HOME"]
		if !filepath.IsAbs(home) {
			home, _ = os.UserHomeDir()
		}
		config = filepath.Join(home, ".config")
	}
	exe := ""
	if fp, err := FingerprintOf(pid); err == nil {
		exe = fp.Exe
	}
	var dirs []string
	switch Product(exe) {
	case "chrome":
		dirs = []string{"google-chrome", "google-chrome-beta", "google-chrome-unstable"}
	case "edge":
		dirs = []string{"microsoft-edge", "microsoft-edge-beta", "microsoft-edge-dev"}
	default:
		dirs = []string{"chromium"}
	}
	for _, d := range dirs {
		out = append(out, filepath.Join(config, d))
	}
	return out
}

// sameDir reports whether a and b resolve to the same directory.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

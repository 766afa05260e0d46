package localapi

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"sort"
)

// RunnerEnv lists the environment variables a Runner reads after it has
// started: a Runner keeps the environment of the client that started it,
// so a client with other values talks to a Runner that behaves otherwise.
// The README documents each.
var RunnerEnv = []string{
	"WEBCODEX_CHROME",          // the Chromium to launch
	"WEBCODEX_UPLOAD_DIR",      // the one directory uploads may come from
	"PATH",                     // where Chromium is looked up
	"TMPDIR",                   // where temporary profiles go
	"DISPLAY",                  // a visible (headed) browser
	"WAYLAND_DISPLAY",          // a visible (headed) browser
	"DBUS_SESSION_BUS_ADDRESS", // the desktop's one-time approval code
	"XDG_CONFIG_HOME",          // where the person's browsers keep their profiles
}

// EnvFingerprint returns, for each variable of [RunnerEnv], a short digest
// of its value in this process ("" when unset). Digests, not values: the
// values are paths, and nothing webcodex prints names a path.
func EnvFingerprint() map[string]string {
	out := make(map[string]string, len(RunnerEnv))
	for _, k := range RunnerEnv {
		v, ok := os.LookupEnv(k)
		if !ok || v == "" {
			out[k] = ""
			continue
		}
		sum := sha256.Sum256([]byte(v))
		out[k] = hex.EncodeToString(sum[:6])
	}
	return out
}

// EnvDiff returns the variables of [RunnerEnv] whose fingerprints differ
// between a and b, sorted. A variable missing from one side (an older
// Runner) is not a difference.
func EnvDiff(a, b map[string]string) []string {
	var out []string
	for _, k := range RunnerEnv {
		av, aok := a[k]
		bv, bok := b[k]
		if aok && bok && av != bv {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

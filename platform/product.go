package platform

import "strings"

// Product names the browser an executable is, from its path alone:
// "chrome", "chromium", "edge", or "" when it is none of them. Pass the
// path read from the OS (a [Fingerprint]'s Exe), never a caller's claim.
// Both / and \ separate path elements, and a trailing ".exe" or
// " (deleted)" is ignored.
//
// Chromium builds that name their binary "chrome" (for example
// /usr/lib/chromium-browser/chrome) are recognised by a parent directory
// whose name contains "chromium".
func Product(exe string) string {
	exe = strings.TrimSuffix(exe, deletedSuffix)
	p := strings.ToLower(strings.ReplaceAll(exe, `\`, "/"))
	dir, base := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, base = p[:i], p[i+1:]
	}
	base = strings.TrimSuffix(base, ".exe")
	switch base {
	case "chromium", "chromium-browser", "chromium-freeworld":
		return "chromium"
	case "chrome":
		if strings.Contains(dir, "chromium") {
			return "chromium"
		}
		return "chrome"
	case "google-chrome", "google-chrome-stable", "google-chrome-beta",
		"google-chrome-unstable", "google-chrome-canary", "google chrome",
		"google chrome canary", "google chrome beta", "google chrome dev",
		"chrome-headless-shell", "google chrome for testing":
		return "chrome"
	case "msedge", "microsoft-edge", "microsoft-edge-stable", "microsoft-edge-beta",
		"microsoft-edge-dev", "microsoft edge", "microsoft edge beta",
		"microsoft edge dev", "microsoft edge canary":
		return "edge"
	}
	return ""
}

// deletedSuffix is what Linux appends to /proc/PID/exe when the binary
// was replaced on disk (a package upgrade) while the process runs.
const deletedSuffix = " (deleted)"

package runner

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sort"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/platform"
)

// Attach candidate states.
const (
	CandidateNotRunning   = "not_running"
	CandidateDebuggingOff = "debugging_off"
	CandidateReady        = "ready"
)

// knownProfiles are the default user-data directories of Chromium-family
// browsers on Linux, under the user's config directory ($XDG_CONFIG_HOME,
// else ~/.config), named by a stable label so that no path is shown.
var knownProfiles = []struct{ name, dir, product string }{
	{"google-chrome", "google-chrome", "chrome"},
	{"google-chrome-beta", "google-chrome-beta", "chrome"},
	{"google-chrome-unstable", "google-chrome-unstable", "chrome"},
	{"chromium", "chromium", "chromium"},
	{"microsoft-edge", "microsoft-edge", "edge"},
	{"microsoft-edge-beta", "microsoft-edge-beta", "edge"},
}

// AttachCandidateDir returns the profile directory of a candidate named by
// Discover, for an AttachRequest's ProfileDir. Attach proves who owns the
// endpoint, so the name only says where to look.
func AttachCandidateDir(name string) (string, bool) {
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", false
	}
	for _, k := range knownProfiles {
		if k.name == name {
			return filepath.Join(cfg, k.dir), true
		}
	}
	return "", false
}

// Discover says what can be launched and attached here: Chromium found or
// not, whether a visible browser can open, the managed profiles, and each
// installed browser profile's state for attaching (not running, running
// with remote debugging off, or ready), whether the extension bridge is
// reachable, and the tabs people shared from it and nobody attached yet
// (bridge.go). Nothing in the result is a path, port or URL.
func (r *Runner) Discover(ctx context.Context, _ struct{}) (localapi.DiscoverResult, error) {
	res := localapi.DiscoverResult{ManagedProfiles: []string{}, Attach: []localapi.AttachCandidate{}}
	exe := r.opts.Chrome
	var err error
	if exe == "" {
		exe, err = platform.FindChromium()
	}
	switch {
	case err != nil:
		res.Launch.Reason = "no Chromium found: install it (Debian: apt-get install -y chromium) or set WEBCODEX_CHROME"
	default:
		res.Launch.Available, res.Launch.Product = true, platform.Product(exe)
		res.Launch.Visible = os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
		if !res.Launch.Visible {
			res.Launch.Reason = "no display: only headless browsers can be launched"
		}
	}
	if entries, err := os.ReadDir(filepath.Join(r.opts.StateDir, "browser", "profiles")); err == nil {
		for _, e := range entries {
			if e.IsDir() && profileName.MatchString(e.Name()) {
				res.ManagedProfiles = append(res.ManagedProfiles, e.Name())
			}
		}
		sort.Strings(res.ManagedProfiles)
	}
	for _, k := range knownProfiles {
		dir, _ := AttachCandidateDir(k.name)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		c := localapi.AttachCandidate{Name: k.name, Product: k.product, State: candidateState(dir)}
		switch c.State {
		case CandidateReady:
			c.Next = "browser_attach with this candidate; the person approves once (webcodex asks first, then the browser shows \"Allow remote debugging?\")"
		case CandidateDebuggingOff:
			c.Next = "the person turns on remote debugging at chrome://inspect/#remote-debugging in this browser, then browser_attach"
		default:
			c.Next = "the person starts this browser and turns on remote debugging at chrome://inspect/#remote-debugging"
		}
		res.Attach = append(res.Attach, c)
	}
	res.ExtensionBridge = r.bridgeReachable()
	res.Offers = r.discoverOffers(ctx)
	return res, nil
}

// candidateState classifies a profile directory: a live debugging endpoint
// owned by a browser running this profile is ready.
func candidateState(dir string) string {
	lock, err := platform.InspectSingletonLock(dir)
	running := err == nil && lock == platform.LockLive
	port, _, err := platform.ReadDevToolsActivePort(dir)
	if err != nil || port <= 0 || port > 65535 {
		if running {
			return CandidateDebuggingOff
		}
		return CandidateNotRunning
	}
	pid, err := platform.ListenerOwner(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)))
	if err == nil {
		if platform.ProveProfile(dir, pid) == nil {
			return CandidateReady
		}
	}
	if running {
		return CandidateDebuggingOff
	}
	return CandidateNotRunning // a DevToolsActivePort left behind by a browser that exited
}

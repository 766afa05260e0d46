package admincmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/extension/install"
	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// Statuses of a doctor check. Only fail makes `webcodex doctor` exit 1.
const (
	CheckOK   = "ok"
	CheckWarn = "warn" // works, with a cost the person should know
	CheckFail = "fail" // something a user needs is broken
	CheckInfo = "info" // an optional part that is absent
)

// DoctorCheck is one line of `webcodex doctor`.
type DoctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix"` // empty when there is nothing to do
}

// DoctorReport is `webcodex doctor --json`.
type DoctorReport struct {
	OK     bool          `json:"ok"` // no check failed
	Checks []DoctorCheck `json:"checks"`
}

// doctorTimeout bounds each check that runs a program or dials a bus.
const doctorTimeout = 10 * time.Second

// NewCmdDoctor is `webcodex doctor`: what this machine has for webcodex,
// one line per check, and what to do about what is missing. It lives here,
// not in cli, because it asks the platform; it never starts a Runner.
func NewCmdDoctor(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check Chromium, the sandbox, the state directory, the desktop and the Runner (exit 1 when something needed is broken)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 4*doctorTimeout)
			defer cancel()
			rep := Doctor(ctx)
			if f.JSON {
				if err := cmdutil.EmitJSON(f.IO.Out, rep); err != nil {
					return err
				}
			} else {
				printDoctor(f.IO.Out, rep)
			}
			if !rep.OK {
				return cmdutil.Shown(errors.New("a check failed: see its fix"))
			}
			return nil
		},
	}
}

func printDoctor(w io.Writer, rep DoctorReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", c.Fix)
		}
	}
	tw.Flush()
}

// Doctor runs every check.
func Doctor(ctx context.Context) DoctorReport {
	checks := []DoctorCheck{
		checkChromium(ctx),
		checkSandbox(),
		checkNetworkContainment(),
		checkStateDir(),
		checkDisplay(),
		checkAccessibility(ctx),
		checkUploadDir(),
		checkBridge(ctx),
		checkRunner(ctx),
	}
	rep := DoctorReport{OK: true, Checks: checks}
	for _, c := range checks {
		if c.Status == CheckFail {
			rep.OK = false
		}
	}
	return rep
}

// tilde shortens a path under the home directory for display.
func tilde(path string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		if rest, ok := strings.CutPrefix(path, home+"/"); ok {
			return "~/" + rest
		}
	}
	return path
}

// chromiumVersion is the first line of a Chromium-family browser's
// --version: "Chromium 156.0.8078.114 built on Debian …", "Google Chrome
// 120.0.6099.109", "Microsoft Edge 120.0.2210.61".
var chromiumVersion = regexp.MustCompile(`^(Chromium|Google Chrome|Chrome|Microsoft Edge)( [A-Za-z]+)* [0-9]+\.[0-9]+\.[0-9]+`)

func capRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func checkChromium(ctx context.Context) DoctorCheck {
	c := DoctorCheck{Name: "chromium"}
	exe, err := platform.FindChromium()
	if err != nil {
		c.Status, c.Detail = CheckFail, "not found"
		c.Fix = "sudo apt-get install -y chromium (or set WEBCODEX_CHROME to a Chrome or Chromium executable)"
		if r, ok := fsm.AsRefusal(err); ok && os.Getenv("WEBCODEX_CHROME") != "" { // the override names no browser
			c.Detail, c.Fix = r.Detail, "point WEBCODEX_CHROME at an executable, or unset it"
		}
		return c
	}
	vctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	out, err := exec.CommandContext(vctx, exe, "--version").Output()
	version, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	switch {
	case err != nil && version == "":
		c.Status, c.Detail = CheckFail, fmt.Sprintf("%s --version failed: it does not start", exe)
		c.Fix = "check that it starts: " + exe + " --version; or point WEBCODEX_CHROME at Chrome or Chromium"
		return c
	case !chromiumVersion.MatchString(version):
		said := "nothing"
		if version != "" {
			said = fmt.Sprintf("%q", capRunes(version, 80))
		}
		c.Status, c.Detail = CheckFail, fmt.Sprintf("%s is not a Chromium-family browser: its --version says %s", exe, said)
		c.Fix = "point WEBCODEX_CHROME at a Chrome, Chromium or Edge executable, or unset it"
		return c
	}
	c.Status, c.Detail = CheckOK, fmt.Sprintf("%s (%s)", version, exe)
	return c
}

func checkSandbox() DoctorCheck {
	sb := platform.Sandbox()
	if sb.Enabled {
		return DoctorCheck{Name: "sandbox", Status: CheckOK, Detail: "owned browsers run with Chromium's sandbox"}
	}
	c := DoctorCheck{Name: "sandbox", Status: CheckWarn, Detail: "off: " + sb.Reason + "; a page that takes over its renderer runs with this user's rights"}
	if os.Geteuid() == 0 {
		c.Fix = "run webcodex as a normal user"
	} else {
		c.Fix = "allow unprivileged user namespaces (e.g. sysctl kernel.unprivileged_userns_clone=1), or use Chrome, whose setuid chrome-sandbox works without them"
	}
	return c
}

// checkNetworkContainment says which containment holds an owned browser
// with an allowlist to its egress proxy.
func checkNetworkContainment() DoctorCheck {
	st := platform.PrivateNetwork()
	if st.Enabled {
		return DoctorCheck{Name: "network containment", Status: CheckOK,
			Detail: "owned browsers with an allowlist run in a network namespace of their own: the egress proxy is their only way out, by any protocol"}
	}
	c := DoctorCheck{Name: "network containment", Status: CheckWarn,
		Detail: "switches only: " + st.Reason + "; an owned browser with an allowlist can still send UDP (WebRTC, QUIC) to denied hosts"}
	if os.Geteuid() != 0 {
		c.Fix = "allow unprivileged user namespaces (e.g. sysctl kernel.unprivileged_userns_clone=1)"
	}
	return c
}

func checkStateDir() DoctorCheck {
	c := DoctorCheck{Name: "state directory"}
	dir, err := localapi.StateDir()
	if err != nil {
		c.Status, c.Detail, c.Fix = CheckFail, err.Error(), "set WEBCODEX_STATE_DIR to a directory of yours"
		return c
	}
	err = platform.CheckPrivateDir(dir)
	switch {
	case err == nil:
		c.Status, c.Detail = CheckOK, tilde(dir)+" (yours, 0700)"
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Detail = CheckOK, tilde(dir)+" does not exist yet; the first Runner creates it (0700)"
	default:
		c.Status = CheckFail
		c.Detail = tilde(dir) + ": " + err.Error()
		if r, ok := fsm.AsRefusal(err); ok {
			c.Detail = tilde(dir) + ": " + r.Detail
		}
		c.Fix = "make it yours and private: chmod 700 " + tilde(dir) + " (and chown it to you), or set WEBCODEX_STATE_DIR elsewhere"
		if pe, ok := errors.AsType[*platform.PrivateDirError](err); ok && pe.Path != dir {
			c.Detail = tilde(dir) + ": at " + tilde(pe.Path) + ": " + pe.Reason
			c.Fix = "fix " + tilde(pe.Path) + " (" + pe.Reason + "), or set WEBCODEX_STATE_DIR elsewhere"
		}
	}
	return c
}

func checkDisplay() DoctorCheck {
	switch {
	case os.Getenv("WAYLAND_DISPLAY") != "":
		return DoctorCheck{Name: "display", Status: CheckOK, Detail: "Wayland: visible browsers can open"}
	case os.Getenv("DISPLAY") != "":
		return DoctorCheck{Name: "display", Status: CheckOK, Detail: "X11: visible browsers can open"}
	}
	return DoctorCheck{Name: "display", Status: CheckInfo, Detail: "none: owned browsers run headless (a managed profile needs --headless)"}
}

func checkAccessibility(ctx context.Context) DoctorCheck {
	actx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if err := platform.DesktopEnvFromOS().Check(actx); err != nil {
		return DoctorCheck{Name: "consent adapter", Status: CheckInfo,
			Detail: "unavailable (" + unavailable(err) + "): when you attach, you answer Chrome's \"Allow remote debugging?\" yourself"}
	}
	return DoctorCheck{Name: "consent adapter", Status: CheckOK, Detail: "an accessibility bus is here: with attach --press-prompt webcodex can press Chrome's \"Allow remote debugging?\" for a browser started with accessibility on"}
}

// unavailable is the one-line reason the desktop gave, without the
// sentinel's own words.
func unavailable(err error) string {
	return strings.TrimPrefix(err.Error(), platform.ErrConsentUIUnavailable.Error()+": ")
}

func checkUploadDir() DoctorCheck {
	dir := os.Getenv("WEBCODEX_UPLOAD_DIR")
	if dir == "" {
		return DoctorCheck{Name: "upload directory", Status: CheckInfo, Detail: "WEBCODEX_UPLOAD_DIR is unset: uploads are refused"}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return DoctorCheck{Name: "upload directory", Status: CheckFail, Detail: "WEBCODEX_UPLOAD_DIR names no directory",
			Fix: "create it, or point WEBCODEX_UPLOAD_DIR at the directory files may be uploaded from"}
	}
	return DoctorCheck{Name: "upload directory", Status: CheckOK, Detail: tilde(filepath.Clean(dir))}
}

func checkRunner(ctx context.Context) DoctorCheck {
	c := DoctorCheck{Name: "runner"}
	dir, err := localapi.StateDir()
	if err != nil {
		c.Status, c.Detail = CheckInfo, "no state directory"
		return c
	}
	pctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	cl := localapi.NewClient(dir)
	hello, err := localapi.Ping.Call(pctx, cl, struct{}{})
	if err != nil {
		c.Status, c.Detail = CheckInfo, "not running (a command that needs one starts it)"
		return c
	}
	st, err := localapi.GetStatus.Call(pctx, cl, struct{}{})
	if err != nil {
		c.Status, c.Detail = CheckWarn, "running, but it does not report its status"
		c.Fix = "webcodex stop"
		return c
	}
	c.Status = CheckOK
	c.Detail = fmt.Sprintf("pid %d, %s, %d browser(s)", st.Runner.PID, st.Runner.Version, len(st.Browsers))
	if st.Runner.IdleExitMs > 0 {
		c.Detail += fmt.Sprintf(", exits after %s idle", time.Duration(st.Runner.IdleExitMs)*time.Millisecond)
	}
	var problems []string
	if diff := localapi.EnvDiff(hello.Env, localapi.EnvFingerprint()); len(diff) > 0 {
		problems = append(problems, "it was started with a different "+strings.Join(diff, ", ")+" than this shell has")
	}
	if st.Runner.Version != cmdutil.Version {
		problems = append(problems, "it is another webcodex build ("+st.Runner.Version+")")
	}
	if len(problems) > 0 {
		c.Status = CheckWarn
		c.Detail += "; " + strings.Join(problems, "; ")
		c.Fix = "webcodex stop, then the next command starts a Runner with this shell's environment and build"
	}
	return c
}

// checkBridge is doctor's line for the bridge: installed (the installation
// record), and reachable (a Runner's listener answers on the published
// port). It starts nothing.
func checkBridge(ctx context.Context) DoctorCheck {
	c := DoctorCheck{Name: "extension bridge"}
	state, err := localapi.StateDir()
	if err != nil || !install.Installed(state) {
		c.Status, c.Detail = CheckInfo, "not installed (optional: share single tabs from your Chrome)"
		c.Fix = "webcodex install-bridge, then load extension/ unpacked in chrome://extensions"
		return c
	}
	rec, err := rendezvous.ReadRecord(state)
	if err != nil {
		c.Status, c.Detail = CheckInfo, "installed; no Runner is listening for it now"
		c.Fix = "any webcodex command starts a Runner, which opens the bridge"
		return c
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(rec.Port)))
	if err != nil {
		c.Status, c.Detail = CheckWarn, "installed; the Runner that published the bridge is gone"
		c.Fix = "any webcodex command starts a Runner, which opens the bridge again"
		return c
	}
	conn.Close()
	c.Status, c.Detail = CheckOK, fmt.Sprintf("installed and reachable (%s)", "a Runner listens on loopback")
	return c
}

package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSandboxDecision(t *testing.T) {
	t.Parallel()
	noNS := errors.New("creating a user namespace: operation not permitted")
	for _, c := range []struct {
		name        string
		euid        int
		nsErr       error
		setuid      bool
		want        bool
		reasonHolds string
	}{
		{"root", 0, nil, true, false, "root"},
		{"user with namespaces", 1000, nil, false, true, ""},
		{"user without namespaces", 1000, noNS, false, false, "user namespaces"},
		{"user with a setuid helper", 1000, noNS, true, true, ""},
	} {
		got := sandboxDecision(c.euid, c.nsErr, c.setuid)
		if got.Enabled != c.want || !strings.Contains(got.Reason, c.reasonHolds) || (got.Enabled && got.Reason != "") {
			t.Errorf("%s: %+v, want enabled %v with a reason naming %q", c.name, got, c.want, c.reasonHolds)
		}
	}
}

// sandboxReport is what the sandbox helper found about the browser it
// launched.
type sandboxReport struct {
	Enabled   bool   `json:"enabled"`
	Reason    string `json:"reason"`
	NoSandbox bool   `json:"noSandbox"` // --no-sandbox on the browser's command line
	Seccomp   int    `json:"seccomp"`   // a renderer's seccomp mode: 2 is a filter (sandboxed)
	Err       string `json:"err,omitempty"`
}

// sandboxHelper launches a real browser as this process's user and
// reports how its renderer runs. It is the "sandbox" helper role.
func sandboxHelper(w io.Writer) int {
	rep := sandboxReport{Seccomp: -1}
	defer func() { json.NewEncoder(w).Encode(rep) }()
	st := Sandbox()
	rep.Enabled, rep.Reason = st.Enabled, st.Reason
	udd := filepath.Join(os.Getenv("HOME"), "profile")
	if err := EnsurePrivateDir(udd); err != nil {
		rep.Err = err.Error()
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Launch(ctx, LaunchOptions{UserDataDir: udd, Headless: true, RemoveUserDataDir: true})
	if err != nil {
		rep.Err = err.Error()
		if lerr, ok := errors.AsType[*LaunchError](err); ok {
			rep.Err += ": " + string(lerr.Output)
		}
		return 1
	}
	defer p.Close(context.Background(), nil)
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/cmdline")
	rep.NoSandbox = bytes.Contains(cmdline, []byte("\x00--no-sandbox\x00"))
	for ctx.Err() == nil && rep.Seccomp < 0 {
		for _, pid := range GroupMembers(p.PID()) {
			cl, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if !bytes.Contains(cl, []byte("--type=renderer")) {
				continue
			}
			status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
					rep.Seccomp, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // the renderer appears when it appears: /proc has no event
	}
	return 0
}

// TestSandboxOnForANormalUser launches a real browser as a user who is not
// root, with user namespaces available as on this machine: its renderer
// runs under a seccomp filter and no --no-sandbox is passed. Run as root,
// the test runs the launch as the user nobody; as root itself, the
// sandbox is off and --no-sandbox is passed.
func TestSandboxOnForANormalUser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		var out bytes.Buffer
		sandboxHelper(&out)
		rep := decodeReport(t, out.Bytes())
		if rep.Enabled != !rep.NoSandbox || (rep.Enabled && rep.Seccomp != 2) {
			t.Fatalf("as uid %d: %+v", os.Geteuid(), rep)
		}
		if !rep.Enabled {
			t.Logf("the sandbox cannot run here: %s", rep.Reason)
		}
		return
	}
	// As root: the sandbox is off, and said why.
	if st := Sandbox(); st.Enabled || !strings.Contains(st.Reason, "root") {
		t.Errorf("as root: %+v", st)
	}
	// As nobody, from a copy of this test binary nobody may run.
	const nobody = 65534
	dir, err := os.MkdirTemp("", "wcsb-") // short: Chromium's socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "h")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
	}
	if err := os.Chown(home, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "platform.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = home
	cmd.Env = []string{helperEnv + "=sandbox", "HOME=" + home, "TMPDIR=" + home, "PATH=/usr/bin:/bin"}
	if c := os.Getenv("WEBCODEX_CHROME"); c != "" {
		cmd.Env = append(cmd.Env, "WEBCODEX_CHROME="+c)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	rep := decodeReport(t, out)
	if err != nil || rep.Err != "" {
		t.Fatalf("launch as nobody: %v %+v\n%s", err, rep, stderr.String())
	}
	if !rep.Enabled || rep.NoSandbox || rep.Seccomp != 2 {
		t.Fatalf("as nobody, with user namespaces: %+v; want the sandbox on, no --no-sandbox, a seccomp-filtered renderer", rep)
	}
}

func decodeReport(t *testing.T, out []byte) sandboxReport {
	t.Helper()
	var rep sandboxReport
	if err := json.Unmarshal(bytes.TrimSpace(out), &rep); err != nil {
		t.Fatalf("sandbox helper said %q: %v", out, err)
	}
	return rep
}

// TestUserNamespaceProbe: the probe answers on this machine, within its
// bound (root may always create user namespaces).
func TestUserNamespaceProbe(t *testing.T) {
	t.Parallel()
	err := probeUserNamespaces()
	if os.Geteuid() == 0 && err != nil {
		t.Fatalf("as root the probe failed: %v", err)
	}
	fmt.Fprintf(io.Discard, "%v", err)
}

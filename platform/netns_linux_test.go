package platform

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveSocks is a minimal SOCKS5 CONNECT relay on ln (the Runner's egress
// proxy stands here in the Runner's tests); it records each destination.
func serveSocks(ln net.Listener, dests chan<- string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			var h [2]byte
			if _, err := io.ReadFull(c, h[:]); err != nil {
				return
			}
			io.ReadFull(c, make([]byte, h[1]))
			c.Write([]byte{5, 0})
			var req [4]byte
			if _, err := io.ReadFull(c, req[:]); err != nil {
				return
			}
			var host string
			switch req[3] {
			case 1:
				b := make([]byte, 4)
				io.ReadFull(c, b)
				host = net.IP(b).String()
			case 3:
				var l [1]byte
				io.ReadFull(c, l[:])
				b := make([]byte, l[0])
				io.ReadFull(c, b)
				host = string(b)
			default:
				return
			}
			var p [2]byte
			io.ReadFull(c, p[:])
			addr := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(p[:]))))
			select {
			case dests <- addr:
			default:
			}
			up, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				c.Write([]byte{5, 4, 0, 1, 0, 0, 0, 0, 0, 0})
				return
			}
			defer up.Close()
			c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
			c.SetDeadline(time.Time{})
			go io.Copy(up, c)
			io.Copy(c, up)
		}()
	}
}

// netInterfaces lists the interfaces the process pid sees.
func netInterfaces(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// unprivilegedRun marks the copy of this test that runs as uid 65534.
const unprivilegedRun = "WEBCODEX_TEST_PRIVATE_NETWORK_UNPRIVILEGED"

// TestLaunchPrivateNetwork: a browser launched in a private network loads
// a page only through the listener it was handed (the test's SOCKS relay
// sees the destination); its network has no interface but its loopback, so
// no datagram or connection it makes can reach anything else (DNS included:
// no resolver is reachable); its tree listens on nothing; and Close closes
// the listener. Run as root, the test runs itself again as uid 65534: there
// the private network comes with a user namespace, and Chromium's own
// sandbox must still be on inside it.
func TestLaunchPrivateNetwork(t *testing.T) {
	exe := needChromium(t)
	if st := PrivateNetwork(); !st.Enabled {
		t.Fatalf("PrivateNetwork() = %+v: this machine can make network namespaces", st)
	}
	udd := filepath.Join(t.TempDir(), "eph")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, PrivateNetwork: true, DebuggingPort: true}); err == nil {
		t.Fatal("a private network with a debugging port was launched")
	}
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true,
		PrivateNetwork: true,
		ExtraArgs:      []string{"--proxy-server=socks5://" + PrivateNetworkProxyAddr, "--proxy-bypass-list=<-loopback>"}})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })
	ln := p.PrivateNetworkListener()
	if ln == nil {
		t.Fatal("no listener from the private network")
	}
	dests := make(chan string, 64)
	go serveSocks(ln, dests)
	c := pipeConn(t, p)
	if got := netInterfaces(t, p.PID()); len(got) != 1 || got[0] != "lo" {
		t.Errorf("the browser's network has interfaces %q, want only lo", got)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>through-the-namespace</title>")
	}))
	defer srv.Close()
	if got := openAndTitle(t, c, srv.URL+"/", "through-the-namespace"); got != "through-the-namespace" {
		t.Fatalf("title %q: the page did not load through the handed-over listener", got)
	}
	seen := false
	for len(dests) > 0 && !seen {
		seen = <-dests == srv.Listener.Addr().String()
	}
	if !seen {
		t.Error("the page loaded, but not through the private network's listener")
	}
	if ls, err := p.Listeners(); err != nil || len(ls) != 0 {
		t.Errorf("the browser's tree listens on %v (%v), want nothing", ls, err)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/cmdline")
	noSandbox := bytes.Contains(cmdline, []byte("--no-sandbox"))
	if os.Getenv(unprivilegedRun) != "" && (noSandbox || !Sandbox().Enabled) {
		t.Errorf("as uid %d in a private network the browser runs without Chromium's sandbox (%+v)", os.Geteuid(), Sandbox())
	}
	if err := p.Close(ctx, nil); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("the listener still accepts after Close")
	}
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestLaunchPrivateNetwork")
	}
}

// runAsNobody runs this test binary's test name again as uid and gid 65534,
// from a copy and a home that user can use, and fails with its output if
// it fails.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wcx-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "platform.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+name+"$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{unprivilegedRun + "=1", "HOME=" + dir, "TMPDIR=" + dir, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "PASS") {
		t.Fatalf("as uid 65534, no PASS:\n%s", out.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// BenchmarkLaunchPrivateNetwork compares the launch of a browser (up to
// its answer on the pipe) without and with a private network, interleaved
// so both see the same load: the ratio of the two is the namespace's cost.
func BenchmarkLaunchPrivateNetwork(b *testing.B) {
	exe, err := FindChromium()
	if err != nil {
		b.Fatal(err)
	}
	PrivateNetwork() // probed once per process, outside the measurement
	var took [2]time.Duration
	for i := 0; i < b.N; i++ {
		for mode, private := range []bool{false, true} {
			udd := filepath.Join(b.TempDir(), "eph")
			if err := EnsurePrivateDir(udd); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			p, err := Launch(context.Background(), LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true,
				RemoveUserDataDir: true, PrivateNetwork: private})
			if err != nil {
				b.Fatal(err)
			}
			took[mode] += time.Since(start)
			p.Close(context.Background(), nil)
		}
	}
	b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "plain-ms/launch")
	b.ReportMetric(float64(took[1].Milliseconds())/float64(b.N), "private-ms/launch")
	b.ReportMetric(float64(took[1])/float64(took[0]), "private/plain")
}

package platform

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp"
)

// Environment of the "scan" helper.
const (
	scanPGID   = "WEBCODEX_PLATFORM_TEST_SCAN_PGID"
	scanTmp    = "WEBCODEX_PLATFORM_TEST_SCAN_TMP"
	scanInodes = "WEBCODEX_PLATFORM_TEST_SCAN_INODES"
	scanMarker = "WEBCODEX_PLATFORM_TEST_SCAN_MARKER"
	scanPipes  = "WEBCODEX_PLATFORM_TEST_SCAN_PIPES"
)

// scanForDoor is the "scan" helper: another process, of the same uid or
// not, looking for a way into the browser of group $SCAN_PGID. It reads the
// machine's TCP listeners and attributes them to the browser's tree by
// itself, where it may read the tree's descriptors (same uid), and by the
// socket inodes in $SCAN_INODES, which the test attributed as root for a
// scanner that cannot. On each listener of the tree it tries a DevTools
// request; it probes no other listener, so other tests' servers see
// nothing. It also tries to open each /proc path in $SCAN_PIPES (the
// DevTools pipe's ends). It prints:
//
//	SOCKETS n        socket inodes it attributed to the tree by itself
//	HIDDEN           the tree's descriptors were unreadable to it
//	PIPE open|denied one line per path in $SCAN_PIPES
//	DOOR port        a TCP listener of the tree
//	REACHED port     that listener's DevTools target list shows $SCAN_MARKER
func scanForDoor(w io.Writer) int {
	pgid, err := strconv.Atoi(os.Getenv(scanPGID))
	if err != nil {
		return 97
	}
	pids := append(GroupMembers(pgid), taggedProcesses(os.Getenv(scanTmp))...)
	tree, err := socketInodes(pids)
	if err != nil {
		fmt.Fprintln(w, "HIDDEN")
		tree = map[string]bool{}
	}
	fmt.Fprintln(w, "SOCKETS", len(tree))
	for in := range strings.SplitSeq(os.Getenv(scanInodes), ",") {
		if in != "" {
			tree[in] = true
		}
	}
	for path := range strings.SplitSeq(os.Getenv(scanPipes), ",") {
		if path == "" {
			continue
		}
		// Non-blocking and closed at once: even an open that succeeds reads
		// nothing from the pipe.
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
			fmt.Fprintln(w, "PIPE open")
		} else {
			fmt.Fprintln(w, "PIPE denied")
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		es, _ := readListeners(file)
		for _, e := range es {
			if !tree[e.inode] {
				continue
			}
			fmt.Fprintln(w, "DOOR", e.addr.Port())
			ip := e.addr.Addr()
			switch {
			case ip.IsUnspecified() && ip.Is4():
				ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
			case ip.IsUnspecified():
				ip = netip.IPv6Loopback()
			}
			resp, err := client.Get("http://" + netip.AddrPortFrom(ip, e.addr.Port()).String() + "/json/list")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if strings.Contains(string(body), os.Getenv(scanMarker)) {
				fmt.Fprintln(w, "REACHED", e.addr.Port())
			}
		}
	}
	return 0
}

// scanReport is what one scanner found.
type scanReport struct {
	sockets        int
	hidden         bool
	pipes          []string
	doors, reached []string
}

// runScan runs the scan helper from bin against p's tree, as another uid
// (nobody) when otherUID. given are socket inodes attributed by the test,
// for a scanner that cannot read the tree itself.
func runScan(t *testing.T, bin string, otherUID bool, p *Process, marker string, given, pipes []string) scanReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), helperEnv+"=scan",
		scanPGID+"="+strconv.Itoa(p.PGID()), scanTmp+"="+p.TmpDir(), scanMarker+"="+marker,
		scanInodes+"="+strings.Join(given, ","), scanPipes+"="+strings.Join(pipes, ","))
	if otherUID {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scanner (other uid %v): %v", otherUID, err)
	}
	var r scanReport
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "SOCKETS":
			r.sockets, _ = strconv.Atoi(f[1])
		case "HIDDEN":
			r.hidden = true
		case "PIPE":
			r.pipes = append(r.pipes, f[1])
		case "DOOR":
			r.doors = append(r.doors, f[1])
		case "REACHED":
			r.reached = append(r.reached, f[1])
		}
	}
	return r
}

// scannerBinary copies the test binary where nobody may run it: the
// original sits in a private build directory.
func scannerBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "webcodex-scan-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "scan.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// treeSocketInodes is the root's attribution of p's tree, for a scanner of
// another uid that cannot read it.
func treeSocketInodes(t *testing.T, p *Process) []string {
	t.Helper()
	inodes, err := socketInodes(p.treePIDs())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for in := range inodes {
		out = append(out, in)
	}
	return out
}

// pipePaths names, under /proc, both ends of p's DevTools pipe: the
// browser's fds 3 and 4, and this process's descriptors on the same pipes.
func pipePaths(t *testing.T, p *Process) []string {
	t.Helper()
	paths := []string{"/proc/" + strconv.Itoa(p.PID()) + "/fd/3", "/proc/" + strconv.Itoa(p.PID()) + "/fd/4"}
	var pipes []string
	for _, path := range paths {
		l, err := os.Readlink(path)
		if err != nil || !strings.HasPrefix(l, "pipe:") {
			t.Fatalf("the browser's %s is %q (%v), want a pipe", filepath.Base(path), l, err)
		}
		pipes = append(pipes, l)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	ours := 0
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && slices.Contains(pipes, l) {
			paths = append(paths, "/proc/"+strconv.Itoa(os.Getpid())+"/fd/"+fd.Name())
			ours++
		}
	}
	if ours != 2 {
		t.Fatalf("this process holds %d descriptors on the DevTools pipes, want our 2 ends", ours)
	}
	return paths
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestOwnedBrowserHasNoOpenDoor: a browser launched the way webcodex owns
// one (the pipe, no port) has no TCP listener anywhere in its tree, writes
// no DevToolsActivePort, and neither another process of the same uid nor
// one of another uid finds a way in: no listener of the tree to connect
// to, and (other uid) the pipe's ends under /proc are closed to it. The
// same scanners, run against a browser with a debugging port, find its
// door and read a marker page's URL through it, so they can fail. The pipe
// itself drives the browser to a page served on 127.0.0.1.
func TestOwnedBrowserHasNoOpenDoor(t *testing.T) {
	exe := needChromium(t)
	if os.Getuid() != 0 {
		t.Fatal("this test runs a scanner as uid 65534 and needs root (CI runs as root)")
	}
	token := randomToken(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>marker</p>", strings.TrimPrefix(r.URL.Path, "/"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	launch := func(name string, port bool) *Process {
		udd := filepath.Join(t.TempDir(), name)
		if err := EnsurePrivateDir(udd); err != nil {
			t.Fatal(err)
		}
		p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true, DebuggingPort: port})
		if err != nil {
			t.Fatalf("Launch %s: %v", name, err)
		}
		t.Cleanup(func() { p.Close(context.Background(), nil) })
		return p
	}
	owned, control := launch("owned", false), launch("control", true)
	ownedMarker, controlMarker := "owned-"+token, "control-"+token

	// The pipe works end to end; the control is driven through its port.
	if got := openAndTitle(t, pipeConn(t, owned), srv.URL+"/"+ownedMarker, ownedMarker); got != ownedMarker {
		t.Fatalf("title over the pipe = %q, want %q", got, ownedMarker)
	}
	sock, err := cdp.DialWebSocket(ctx, control.WebSocketURL(), cdp.DialOptions{})
	if err != nil {
		t.Fatal("dial the control browser failed") // no URL in test output
	}
	cc := cdp.NewConn(sock, cdp.ConnOptions{})
	defer cc.Close()
	if got := openAndTitle(t, cc, srv.URL+"/"+controlMarker, controlMarker); got != controlMarker {
		t.Fatalf("title on the control browser = %q, want %q", got, controlMarker)
	}

	if _, err := os.Stat(filepath.Join(owned.userData, DevToolsActivePortFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the owned browser's profile has a DevToolsActivePort (%v)", err)
	}
	if ls, err := owned.Listeners(); err != nil || len(ls) != 0 {
		t.Errorf("owned browser's tree listens on %d TCP sockets (%v), want none", len(ls), err)
	}
	if ls, err := control.Listeners(); err != nil || len(ls) == 0 {
		t.Errorf("control browser's tree listens on %d TCP sockets (%v), want its DevTools port", len(ls), err)
	}

	bin := scannerBinary(t)
	for _, tc := range []struct {
		name     string
		p        *Process
		marker   string
		wantDoor bool
	}{
		{"owned (pipe)", owned, ownedMarker, false},
		{"control (port)", control, controlMarker, true},
	} {
		var pipes []string
		if _, to := tc.p.Pipe(); to != nil {
			pipes = pipePaths(t, tc.p)
		}
		same := runScan(t, bin, false, tc.p, tc.marker, nil, nil)
		if same.hidden || same.sockets == 0 {
			t.Fatalf("%s: the same-uid scanner could not read the tree (hidden %v, %d sockets)", tc.name, same.hidden, same.sockets)
		}
		other := runScan(t, bin, true, tc.p, tc.marker, treeSocketInodes(t, tc.p), pipes)
		if !other.hidden || other.sockets != 0 {
			t.Errorf("%s: a scanner of another uid read the tree's descriptors (hidden %v, %d sockets)", tc.name, other.hidden, other.sockets)
		}
		for i, path := range pipes {
			if i >= len(other.pipes) || other.pipes[i] != "denied" {
				t.Errorf("%s: another uid could open %s of the DevTools pipe (%v)", tc.name, path, other.pipes)
			}
		}
		for who, r := range map[string]scanReport{"same uid": same, "other uid": other} {
			switch {
			case tc.wantDoor && len(r.reached) != 1:
				t.Errorf("%s, %s: doors %v, reached %v; want the DevTools port reached (the scanner must find a real door)", tc.name, who, r.doors, r.reached)
			case !tc.wantDoor && (len(r.doors) != 0 || len(r.reached) != 0):
				t.Errorf("%s, %s: found doors %v, reached %v; want nothing to connect to", tc.name, who, r.doors, r.reached)
			}
		}
	}
}

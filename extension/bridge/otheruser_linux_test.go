package bridge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/wire"
)

// TestOtherUserCannotStarveTheBridge: a process of another user (uid
// 65534) keeps re-dialing the bridge with as many unfinished handshakes
// as there are peer slots, while the real host connects ten times: all ten
// get ready, and every connection of the other user is closed by the
// Runner at accept. It needs root to switch uid, which CI has.
func TestOtherUserCannotStarveTheBridge(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatal("this test dials as uid 65534 and needs root (CI runs as root)")
	}
	s, _ := newServer(t, Options{})
	dir, err := os.MkdirTemp("", "wcx-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	// The test binary sits in a private build directory: copy it where the
	// other uid can run it.
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "child.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestBridgeOtherUserChild$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEBCODEX_BRIDGE_CHILD="+strconv.Itoa(s.rec.Port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "DIALING") {
	}
	for i := 0; i < 10; i++ {
		f := connect(t, s) // fails the test unless ready comes
		f.conn.Close()
	}
	stdin.Close()
	var report string
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "REPORT ") {
			report = lines.Text()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the other user's dialer: %v", err)
	}
	var dialed, closed int
	if _, err := fmt.Sscanf(report, "REPORT dialed=%d closed=%d", &dialed, &closed); err != nil {
		t.Fatalf("the other user's dialer reported %q: %v", report, err)
	}
	if dialed < wire.MaxPeers || closed != dialed {
		t.Fatalf("the other user dialed %d connections and %d were closed by the Runner; want at least %d, all closed", dialed, closed, wire.MaxPeers)
	}
}

// TestBridgeOtherUserChild is the other user's side of
// TestOtherUserCannotStarveTheBridge: wire.MaxPeers dialers, each holding
// an unfinished handshake and re-dialing when it is closed, until stdin
// closes.
func TestBridgeOtherUserChild(t *testing.T) {
	port := os.Getenv("WEBCODEX_BRIDGE_CHILD")
	if port == "" {
		return // only meaningful as the other user's process
	}
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	var dialed, closed atomic.Int64
	var wg sync.WaitGroup
	for range wire.MaxPeers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
				if err != nil {
					continue
				}
				if dialed.Add(1) == wire.MaxPeers {
					fmt.Println("DIALING")
				}
				// Send nothing: an unfinished handshake. A read that ends
				// (not times out) means the Runner closed it.
				c.SetReadDeadline(time.Now().Add(wait))
				_, err = c.Read(make([]byte, 1))
				var ne net.Error
				if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
					closed.Add(1)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("REPORT dialed=%d closed=%d\n", dialed.Load(), closed.Load())
}

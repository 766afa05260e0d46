package localapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

type echoReq struct {
	Say string `json:"say"`
}

var (
	echo   = Route[echoReq, echoReq]{Name: "echo"}
	refuse = Route[struct{}, struct{}]{Name: "refuse"}
	// echoLoose sends what echo's request type does not have.
	echoLoose = Route[map[string]int, echoReq]{Name: "echo"}
)

func testServer(t *testing.T, dir string) *Client {
	t.Helper()
	rt := &Routes{}
	Serve(rt, Ping, func(context.Context, struct{}) (PingResult, error) { return PingResult{OK: true}, nil })
	Serve(rt, echo, func(_ context.Context, r echoReq) (echoReq, error) { return r, nil })
	Serve(rt, refuse, func(context.Context, struct{}) (struct{}, error) {
		return struct{}{}, fsm.Refuse(fsm.LeaseHeld, "in use")
	})
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { (&Server{Routes: rt}).Run(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return NewClient(dir)
}

func TestRoundTripAndRefusal(t *testing.T) {
	c := testServer(t, t.TempDir())
	ctx := context.Background()
	got, err := echo.Call(ctx, c, echoReq{Say: "hi"})
	if err != nil || got.Say != "hi" {
		t.Fatalf("echo = %+v, %v", got, err)
	}
	if _, err := refuse.Call(ctx, c, struct{}{}); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Fatalf("refusal did not arrive intact: %v", err)
	}
	if _, err := echoLoose.Call(ctx, c, map[string]int{"unknown": 1}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("unknown field = %v, want invalid_argument", err)
	}
}

func TestSocketIsPrivateAndSingle(t *testing.T) {
	dir := t.TempDir()
	testServer(t, dir)
	st, err := os.Stat(filepath.Join(dir, SocketName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", st.Mode().Perm(), err)
	}
	if _, err := Listen(dir); err != ErrRunnerRunning {
		t.Fatalf("second Listen = %v, want ErrRunnerRunning", err)
	}
}

func rawRequest(t *testing.T, sock string, mutate func(*http.Request)) int {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return net.Dial("unix", sock)
	}}}
	req, _ := http.NewRequest(http.MethodPost, "http://"+Host+PathPrefix+"ping", strings.NewReader("{}"))
	mutate(req)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRequestGuard(t *testing.T) {
	dir := t.TempDir()
	testServer(t, dir)
	sock := filepath.Join(dir, SocketName)
	cases := []struct {
		name   string
		mutate func(*http.Request)
		want   int
	}{
		{"plain", func(*http.Request) {}, 200},
		{"origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 403},
		{"referer", func(r *http.Request) { r.Header.Set("Referer", "http://evil.example/") }, 403},
		{"other host", func(r *http.Request) { r.Host = "127.0.0.1" }, 403},
		{"GET", func(r *http.Request) { r.Method = http.MethodGet }, 405},
	}
	for _, c := range cases {
		if got := rawRequest(t, sock, c.mutate); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}

// TestOtherUIDRefused connects from a child process running as another uid
// (nobody) to a socket it is allowed to open, and checks SO_PEERCRED turns
// it away: its connection is closed at accept, unanswered. It needs root to switch uid, which CI and this machine have.
func TestOtherUIDRefused(t *testing.T) {
	if os.Getenv("WEBCODEX_PEER_CHILD") != "" {
		return
	}
	if os.Getuid() != 0 {
		t.Fatal("this test switches to uid 65534 and needs root (CI runs as root)")
	}
	dir, err := os.MkdirTemp("", "webcodex-peer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	testServer(t, dir)
	sock := filepath.Join(dir, SocketName)
	os.Chmod(sock, 0o666) // let the other uid reach the socket: the peer check must stop it
	// The test binary sits in a private build directory: copy it where the
	// other uid can run it.
	bin := filepath.Join(dir, "child.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestPeerChild$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEBCODEX_PEER_CHILD="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	// The connection is closed at accept, before a byte of it is read.
	if !strings.Contains(string(out), "CLOSED") {
		t.Fatalf("child as another uid got %q, want its connection closed unanswered", out)
	}
}

// TestPeerChild is the other-uid side of TestOtherUIDRefused.
func TestPeerChild(t *testing.T) {
	sock := os.Getenv("WEBCODEX_PEER_CHILD")
	if sock == "" {
		return // only meaningful as TestOtherUIDRefused's child
	}
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %sping HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", PathPrefix, Host)
	buf := make([]byte, 64)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := c.Read(buf)
	if n == 0 {
		fmt.Println("CLOSED")
		return
	}
	var status int
	fmt.Sscanf(string(buf[:n]), "HTTP/1.1 %d", &status)
	fmt.Printf("STATUS %d\n", status)
}

// TestInProcessCall: a route called on a *Routes runs its registered
// handler directly, refusals intact, and a route not served there is
// refused as unavailable.
func TestInProcessCall(t *testing.T) {
	rt := &Routes{}
	Serve(rt, echo, func(_ context.Context, r echoReq) (echoReq, error) { return r, nil })
	Serve(rt, refuse, func(context.Context, struct{}) (struct{}, error) {
		return struct{}{}, fsm.Refuse(fsm.LeaseHeld, "in use")
	})
	ctx := context.Background()
	if got, err := echo.Call(ctx, rt, echoReq{Say: "hi"}); err != nil || got.Say != "hi" {
		t.Fatalf("echo = %+v, %v", got, err)
	}
	if _, err := refuse.Call(ctx, rt, struct{}{}); !fsm.IsCode(err, fsm.LeaseHeld) {
		t.Fatalf("refusal = %v", err)
	}
	if _, err := Ping.Call(ctx, rt, struct{}{}); !fsm.IsCode(err, fsm.RouteUnavailable) {
		t.Fatalf("unserved route = %v, want %s", err, fsm.RouteUnavailable)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second registration of echo did not panic")
		}
	}()
	Serve(rt, echo, func(_ context.Context, r echoReq) (echoReq, error) { return r, nil })
}

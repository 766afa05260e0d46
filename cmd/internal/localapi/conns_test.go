package localapi

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// slowBody opens a connection that sends its headers and one byte of a
// body it promises to make much longer: the trickle an attacker uses to
// hold a server's connections.
func slowBody(t *testing.T, sock string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	fmt.Fprintf(c, "POST %sping HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000\r\n\r\n{", PathPrefix, Host)
	return c
}

// TestSlowBodiesCannotLockCallersOut holds several hundred connections
// that never finish their request, then checks a real caller still gets
// through and the server never holds more than its bound.
func TestSlowBodiesCannotLockCallersOut(t *testing.T) {
	dir := t.TempDir()
	rt := &Routes{}
	Serve(rt, Ping, func(context.Context, struct{}) (PingResult, error) { return PingResult{OK: true}, nil })
	srv := startServer(t, dir, &Server{Routes: rt})
	c := NewClient(dir)
	sock := filepath.Join(dir, SocketName)
	var held []net.Conn
	t.Cleanup(func() {
		for _, h := range held {
			h.Close()
		}
	})
	for range 5 * MaxConns {
		held = append(held, slowBody(t, sock))
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestReadTimeout/2)
	defer cancel()
	for i := range 3 {
		if _, err := Ping.Call(ctx, c, struct{}{}); err != nil {
			t.Fatalf("call %d behind %d slow bodies: %v", i, len(held), err)
		}
	}
	if n := srv.connSet().len(); n > MaxConns {
		t.Fatalf("server holds %d connections, bound is %d", n, MaxConns)
	}
}

// TestRunningCallIsNotEvicted fills the bound with calls that are running
// and checks a newcomer is turned away instead of cutting one of them.
func TestRunningCallIsNotEvicted(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	rt := &Routes{}
	block := Route[struct{}, struct{}]{Name: "block"}
	Serve(rt, block, func(context.Context, struct{}) (struct{}, error) {
		started <- struct{}{}
		<-release
		return struct{}{}, nil
	})
	startServer(t, dir, &Server{Routes: rt, MaxConns: 2})

	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := block.Call(context.Background(), NewClient(dir), struct{}{})
			errs <- err
		}()
	}
	<-started
	<-started
	c, err := net.Dial("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _ := c.Read(make([]byte, 1)); n != 0 {
		t.Fatalf("a connection beyond the bound was served")
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a running call was cut: %v", err)
		}
	}
}

// startServer runs srv on a socket in dir until the test ends.
func startServer(t *testing.T, dir string, srv *Server) *Server {
	t.Helper()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		close(started)
		srv.Run(ctx, ln)
		close(done)
	}()
	<-started
	t.Cleanup(func() { cancel(); <-done })
	return srv
}

package cdp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// TestPipeSocketDrivesChromium: a browser launched the way webcodex owns
// one (platform.Launch, pipe only) is driven end to end through a Conn on
// its pipe: a page served on 127.0.0.1 loads and its title is read.
func TestPipeSocketDrivesChromium(t *testing.T) {
	chromiumtest.SkipShort(t)
	exe, err := chromiumtest.ChromePath()
	if err != nil {
		t.Fatal(err)
	}
	udd := filepath.Join(t.TempDir(), "profile")
	if err := platform.EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	proc, err := platform.Launch(ctx, platform.LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		proc.Close(cctx, nil)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>over the pipe</title><p>hello</p>")
	}))
	defer srv.Close()

	from, to := proc.Pipe()
	c := cdp.NewConn(cdp.NewPipeSocket(from, to, cdp.PipeOptions{}), cdp.ConnOptions{})
	defer c.Close()
	if v, err := cdproto.Call(ctx, c.Browser(), browser.GetVersion, cdproto.Empty{}); err != nil || !strings.Contains(v.Product, "Chrome") {
		t.Fatalf("Browser.getVersion = %+v, %v", v, err)
	}
	created, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.AttachTarget(ctx, created.TargetID)
	if err != nil {
		t.Fatal(err)
	}
	loaded, stop := s.Subscribe("Page.loadEventFired")
	defer stop()
	if _, err := cdproto.Call(ctx, s, page.Enable, page.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cdproto.Call(ctx, s, page.Navigate, page.NavigateParams{URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		t.Fatal("the page did not load")
	}
	res, err := cdproto.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "document.title", ReturnByValue: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Result.Value) != `"over the pipe"` {
		t.Errorf("document.title = %s, want \"over the pipe\"", res.Result.Value)
	}
}

// dualBrowser starts Chromium with both endpoints, the pipe and a loopback
// port, so that the two transports can be measured against one browser.
// Only this benchmark does that: webcodex never opens both.
func dualBrowser(b *testing.B) (*cdp.PipeSocket, string) {
	b.Helper()
	exe, err := chromiumtest.ChromePath()
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	udd, tmp := filepath.Join(dir, "profile"), filepath.Join(dir, "tmp")
	for _, d := range []string{udd, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	args := append(append([]string{}, chromiumtest.Flags...), "--remote-debugging-pipe", "--user-data-dir="+udd, "about:blank")
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+tmp)
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	tree, err := platform.StartTree(cmd)
	cmdR.Close()
	outW.Close()
	if err != nil {
		b.Fatal(err)
	}
	pipe := cdp.NewPipeSocket(outR, cmdW, cdp.PipeOptions{})
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		pipe.Close() // the browser exits when its command pipe closes
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
		tree.Kill()
		<-exited
		tree.Release()
	})
	var port int
	var path string
	// Chromium gives no event for its DevToolsActivePort file.
	waitfor.Until(b, chromiumtest.LaunchTimeout, "DevToolsActivePort", func() bool {
		var err error
		port, path, err = platform.ReadDevToolsActivePort(udd)
		return err == nil
	})
	return pipe, "ws://127.0.0.1:" + strconv.Itoa(port) + path
}

// BenchmarkTransport compares the pipe with the WebSocket on one browser:
// a Browser.getVersion round trip (no renderer hop, so the transport
// dominates) and a 1 MiB Runtime.evaluate result (throughput).
func BenchmarkTransport(b *testing.B) {
	pipe, wsURL := dualBrowser(b)
	ctx := context.Background()
	ws, err := cdp.DialWebSocket(ctx, wsURL, cdp.DialOptions{})
	if err != nil {
		b.Fatal("dial failed") // no URL in the output
	}
	for _, tr := range []struct {
		name string
		sock cdp.Socket
	}{{"pipe", pipe}, {"websocket", ws}} {
		c := cdp.NewConn(tr.sock, cdp.ConnOptions{})
		b.Run("getVersion/"+tr.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := cdproto.Call(ctx, c.Browser(), browser.GetVersion, cdproto.Empty{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		created, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
		if err != nil {
			b.Fatal(err)
		}
		s, err := c.AttachTarget(ctx, created.TargetID)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("evaluate1MiB/"+tr.name, func(b *testing.B) {
			b.SetBytes(1 << 20)
			for b.Loop() {
				res, err := cdproto.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: `"x".repeat(1<<20)`, ReturnByValue: new(true)})
				if err != nil || len(res.Result.Value) != 1<<20+2 {
					b.Fatalf("evaluate: %d bytes, %v", len(res.Result.Value), err)
				}
			}
		})
		cdproto.Call(ctx, c.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: created.TargetID})
		if tr.name == "websocket" {
			c.Close()
		}
	}
}

package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

const demoPage = `<!doctype html>
<html><head><title>webcodex demo</title>
<style>body{font:18px system-ui,sans-serif;margin:3em;background:#f6f8fa} h1{color:#0b5394}</style></head>
<body><h1>Hello from webcodex</h1>
<p>This page was served on 127.0.0.1 by <code>webcodex demo</code>, opened in a headless Chromium that webcodex launched and owns,
read back over the browser's own DevTools pipe (no port is opened), and captured as a PNG.</p>
<ul><li>ephemeral profile, removed on close</li><li>process group reaped on close</li></ul>
</body></html>`

// NewCmdDemo is the main job: a real browser task on the embedded default.
func NewCmdDemo(f *Factory) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Launch a headless Chromium, load a built-in page, read it, screenshot it, close it",
		Args:  exactArgs(0),
		RunE:  func(*cobra.Command, []string) error { return demoRun(f, out) },
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the PNG (default: a new temporary directory)")
	return cmd
}

// serveDemoPage serves the demo's page on a loopback port until stop.
func serveDemoPage() (pageURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("demo: serve the page: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, demoPage)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) // ends when stop closes the server
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}

func demoRun(f *Factory, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	say := func(format string, args ...any) { fmt.Fprintf(f.IO.Out, format+"\n", args...) }

	pageURL, stop, err := serveDemoPage()
	if err != nil {
		return err
	}
	defer stop()
	say("1. serving a built-in page on 127.0.0.1")

	dir, err := localapi.StateDir()
	if err != nil {
		return err
	}
	started := localapi.NewClient(dir).Ping(ctx) != nil
	f.QuietStart = started // it stops the Runner it starts: no notice
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	if started {
		defer localapi.Stop.Call(context.Background(), c, struct{}{})
	}
	t0 := time.Now()
	b, err := localapi.Launch.Call(ctx, c, localapi.LaunchRequest{})
	if err != nil {
		return err
	}
	say("2. launched an ephemeral headless Chromium: browser %s (%s) in %s", b.ID, b.Mode, time.Since(t0).Round(time.Millisecond))
	closed := false
	defer func() {
		if !closed {
			localapi.Close.Call(context.Background(), c, localapi.BrowserRequest{Browser: b.ID})
		}
	}()
	p, err := localapi.Open.Call(ctx, c, localapi.OpenRequest{Browser: b.ID})
	if err != nil {
		return err
	}
	nav, err := localapi.Of(op.Goto).Call(ctx, c, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: pageURL})
	if err != nil {
		return err
	}
	say("3. navigated page %s: title %q (read live from the page)", p.ID, nav.Title)
	rd, err := localapi.Of(op.ReadText).Call(ctx, c, op.ReadIn{OnPage: op.OnPage{Page: p.ID}, MaxChars: 400})
	if err != nil {
		return err
	}
	say("4. read %d characters of visible text:", rd.Chars)
	for _, line := range strings.Split(strings.TrimSpace(rd.Text), "\n") {
		say("     | %s", line)
	}
	shot, err := localapi.Of(op.Screenshot).Call(ctx, c, op.ScreenshotIn{OnPage: op.OnPage{Page: p.ID}})
	if err != nil {
		return err
	}
	if out == "" {
		d, err := os.MkdirTemp("", "webcodex-demo-")
		if err != nil {
			return err
		}
		out = filepath.Join(d, "demo.png")
	}
	if err := os.WriteFile(out, shot.PNG, 0o644); err != nil {
		return fmt.Errorf("demo: write the screenshot: %w", err)
	}
	say("5. screenshot %dx%d written to %s", shot.Width, shot.Height, out)
	if _, err := localapi.Close.Call(ctx, c, localapi.BrowserRequest{Browser: b.ID}); err != nil {
		return err
	}
	closed = true
	say("6. closed the browser: Browser.close, process group reaped, temporary profile removed")
	return nil
}

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// BenchmarkFreshConnect is the baseline: dial the browser-level socket and
// answer one Browser.getVersion.
func BenchmarkFreshConnect(b *testing.B) {
	u := benchUsersChrome(b)
	ctx := context.Background()
	for b.Loop() {
		sock, err := cdp.DialWebSocket(ctx, u.proc.WebSocketURL(), cdp.DialOptions{})
		if err != nil {
			b.Fatal(err)
		}
		c := cdp.NewConn(sock, cdp.ConnOptions{})
		if _, err := cdproto.Call(ctx, c.Browser(), browser.GetVersion, cdproto.Empty{}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkReconnectAfterSocketLoss measures socket loss to ready on a new
// generation (no prompt): cut, then wait for the watcher's reconnect, which
// closes gates, re-proves the owner, dials once, invalidates and re-adopts
// pages.
func BenchmarkReconnectAfterSocketLoss(b *testing.B) {
	u := benchUsersChrome(b)
	dial := &cuttable{}
	r, err := New(Options{StateDir: b.TempDir() + "/state", NetDialContext: dial.dial})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	ctx := context.Background()
	req := localapi.AttachRequest{ProfileDir: u.profile}
	_, err = r.Attach(ctx, req)
	id := requestIDB(b, err)
	r.broker.Approve(id)
	res, err := r.Attach(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	br, _ := r.browser(res.Browser.ID)
	for b.Loop() {
		gen := br.gens.Current()
		dial.cut()
		deadline := time.Now().Add(20 * time.Second)
		for br.gens.Current() == gen || br.state() != "ready" {
			if time.Now().After(deadline) {
				b.Fatal("no reconnect")
			}
			time.Sleep(100 * time.Microsecond) // polling state owned by the watcher goroutine
		}
	}
}

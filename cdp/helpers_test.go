package cdp_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/slow"
)

func TestMain(m *testing.M) { chromiumtest.Main(m) }

// testTimeout bounds each step of a test against a real browser.
const testTimeout = 20 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(testTimeout))
	t.Cleanup(cancel)
	return ctx
}

// dial connects to the shared browser and closes the connection when t ends.
func dial(t testing.TB, dopts cdp.DialOptions, copts cdp.ConnOptions) *cdp.Conn {
	t.Helper()
	b := chromiumtest.Shared(t)
	sock, err := cdp.DialWebSocket(testContext(t), b.WebSocketURL, dopts)
	if err != nil {
		t.Fatal(err)
	}
	c := cdp.NewConn(sock, copts)
	t.Cleanup(func() { c.Close() })
	return c
}

// newPage creates a blank page target, attaches to it, and closes it when t
// ends.
func newPage(t testing.TB, c *cdp.Conn) *cdp.Session {
	t.Helper()
	ctx := testContext(t)
	res, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(testTimeout))
		defer cancel()
		if c.Err() != nil {
			// The connection is gone; close the target on a fresh one.
			b := chromiumtest.Shared(t)
			sock, err := cdp.DialWebSocket(ctx, b.WebSocketURL, cdp.DialOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			c = cdp.NewConn(sock, cdp.ConnOptions{})
			defer c.Close()
		}
		if _, err := cdproto.Call(ctx, c.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: res.TargetID}); err != nil {
			t.Errorf("closing the page: %v", err)
		}
	})
	s, err := c.AttachTarget(ctx, res.TargetID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cuttable records the TCP connections a dialer made and the bytes written
// on them, so a test can cut the socket or prove nothing was sent.
type cuttable struct {
	mu      sync.Mutex
	conns   []net.Conn
	written atomic.Int64
	writes  atomic.Int64
}

func (c *cuttable) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w := &countingConn{Conn: nc, c: c}
	c.mu.Lock()
	c.conns = append(c.conns, w)
	c.mu.Unlock()
	return w, nil
}

// cut closes every connection the dialer made.
func (c *cuttable) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nc := range c.conns {
		nc.Close()
	}
}

type countingConn struct {
	net.Conn
	c *cuttable
}

func (w *countingConn) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	w.c.written.Add(int64(n))
	w.c.writes.Add(1)
	return n, err
}

package surface

// One connection per test binary to the shared browser of
// internal/chromiumtest; a new tab per test.

import (
	"context"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
)

type testBrowser struct {
	conn *cdp.Conn
}

var (
	connMu sync.Mutex
	connBy = map[*chromiumtest.Browser]*testBrowser{}
)

func sharedBrowser(tb testing.TB) *testBrowser {
	tb.Helper()
	b := chromiumtest.Shared(tb)
	connMu.Lock()
	defer connMu.Unlock()
	if tbr := connBy[b]; tbr != nil && tbr.conn.Err() == nil {
		return tbr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, err := cdp.DialWebSocket(ctx, b.WebSocketURL, cdp.DialOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tbr := &testBrowser{conn: cdp.NewConn(sock, cdp.ConnOptions{EventQueue: 4096})}
	connBy[b] = tbr
	return tbr
}

// newTab opens a fresh page target in a window of its own and returns its
// flattened session and the target id; the target is closed when tb ends.
// Its own window keeps it the frontmost tab there, drawn and visible while
// tests running in parallel open theirs.
func (b *testBrowser) newTab(tb testing.TB) (*cdp.Session, target.ID) {
	return b.newTabIn(tb, true)
}

// newTabIn is newTab; without newWindow the tab joins an existing window
// and hides the one that was in front there.
func (b *testBrowser) newTabIn(tb testing.TB, newWindow bool) (*cdp.Session, target.ID) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cdproto.Call(ctx, b.conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank", NewWindow: &newWindow})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := b.conn.AttachTarget(ctx, res.TargetID)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.closeTarget(res.TargetID) })
	return s, res.TargetID
}

func (b *testBrowser) closeTarget(id target.ID) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := cdproto.Call(ctx, b.conn.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: id})
	return err
}

func TestMain(m *testing.M) { chromiumtest.Main(m) }

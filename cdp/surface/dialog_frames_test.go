package surface

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestDeniedFrameDialog: a same-site frame of a
// denied origin (another port) opens a prompt() whose text is a secret.
// The agent learns only that a dialog of that type blocks the page, never
// its text, and cannot answer it (an answer is input to the denied
// document); without a Judge the same fixture shows the text.
func TestDeniedFrameDialog(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	const secret = "DIALOG-SECRET-4d2e"
	denied := chromiumtest.ServeHTML(t, `<script>onmessage = () => setTimeout(() => prompt("`+secret+`", "`+secret+`"), 300)</script>`)
	allowed := chromiumtest.ServeHTML(t, `<!doctype html><p>allowed</p><iframe src="`+denied+`/"></iframe>`)
	gate, _ := origin.New(origin.Owned, []string{allowed})
	// A browser of its own: a tab left with a subframe's dialog open takes
	// the browser down with it when it closes (Chromium 156, headless), and
	// the package's other tests share theirs.
	own := chromiumtest.Start(t)
	ctx := tctx(t)
	sock, err := cdp.DialWebSocket(ctx, own.WebSocketURL, cdp.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn := cdp.NewConn(sock, cdp.ConnOptions{})
	t.Cleanup(func() { conn.Close() })
	tb := &testBrowser{conn: conn}
	for _, judged := range []bool{false, true} {
		opts := Options{}
		if judged {
			opts.Judge = gate.Check
		}
		sess, _ := tb.newTab(t)
		p, err := New(ctx, sess, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		must(p.Navigate(ctx, allowed+"/"))(t)
		// The allowed page asks its frame to open the dialog (the page's
		// own doing, not the agent's input into the frame).
		must(p.Evaluate(ctx, `frames[0].postMessage("go", "*"), 1`))(t)
		var d *Dialog
		// The dialog event arrives on the page's event goroutine.
		waitfor.Until(t, 20*time.Second, "the frame's dialog opens", func() bool { d = p.Dialog(); return d != nil })
		if !judged {
			if d.Message != secret {
				t.Fatalf("without a Judge the dialog reads %q: the fixture does not work", d.Message)
			}
			continue // left open: the tab closes with the test
		}
		if d.Type != "prompt" || strings.Contains(d.Message+d.DefaultPrompt, secret) {
			t.Fatalf("a denied frame's dialog is shown as %+v", d)
		}
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = p.HandleDialog(hctx, true, "answer")
		cancel()
		wantCode(t, err, fsm.OriginDenied)
		if p.Dialog() == nil {
			t.Fatal("the denied frame's dialog was answered")
		}
	}
}

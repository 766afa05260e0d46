package surface

import (
	"bytes"
	"image/png"
	"testing"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/internal/chromiumtest"
)

// animatedRed is a red page that keeps a requestAnimationFrame callback
// pending, as most real pages do: a capture of it in a background tab used
// to wait for a frame that never came.
const animatedRed = `<!doctype html><title>bg</title>
<style>html,body{margin:0;height:100%;background:rgb(255,0,0)}</style>
<script>(function tick(){ document.title = "bg " + performance.now(); requestAnimationFrame(tick) })()</script>`

// TestScreenshotOfBackgroundTab captures a page whose tab is behind
// another one, viewport and full page, with and without a Judge (which
// also waits for a frame): each capture shows the page, and the tab in
// front stays the one shown.
func TestScreenshotOfBackgroundTab(t *testing.T) {
	url := chromiumtest.ServeHTML(t, animatedRed)
	for _, judged := range []bool{false, true} {
		var o Options
		if judged {
			o.Judge = func(string) error { return nil }
		}
		// Two tabs of one window: the one opened last is in front.
		ctx := tctx(t)
		bg := tabPage(t, o)
		if _, err := bg.Navigate(ctx, url); err != nil {
			t.Fatal(err)
		}
		front := tabPage(t, Options{})
		if _, err := cdproto.Call(ctx, front.sess, page.BringToFront, cdproto.Empty{}); err != nil {
			t.Fatal(err)
		}
		if v := jsString(t, bg, "document.visibilityState"); v != "hidden" {
			t.Fatalf("the page under test is %s, want a hidden (background) tab", v)
		}
		for _, full := range []bool{false, true, false} {
			data, err := bg.Screenshot(ctx, ScreenshotOptions{FullPage: full})
			if err != nil {
				t.Fatalf("judged %v, full page %v: %v", judged, full, err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if r, g, bl, _ := img.At(b.Dx()/2, b.Dy()/2).RGBA(); r>>8 != 255 || g>>8 != 0 || bl>>8 != 0 {
				t.Fatalf("judged %v, full page %v: the centre pixel is (%d,%d,%d), want the page's red", judged, full, r>>8, g>>8, bl>>8)
			}
		}
		if v := jsString(t, front, "document.visibilityState"); v != "visible" {
			t.Fatalf("after the captures the front tab is %s: the tab shown changed", v)
		}
		if v := jsString(t, bg, "document.visibilityState"); v != "hidden" {
			t.Fatalf("after the captures the background tab is %s: it was brought forward", v)
		}
	}
}

// tabPage is a Page on a new tab of an existing window (not a window of
// its own, as testPage's): it goes in front of the tab that was there.
func tabPage(t *testing.T, o Options) *Page {
	t.Helper()
	sess, _ := sharedBrowser(t).newTabIn(t, false)
	p, err := New(tctx(t), sess, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

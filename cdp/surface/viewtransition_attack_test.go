package surface

// Attacks on the screenshot mask through view transitions: a view
// transition draws a snapshot of what the document painted, denied frames
// included, after the frames are gone, where no mask can follow them. The
// pages are served by the allowed origin A of attackSites and embed the
// denied B and C.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/fsm"
)

// vtHoldCSS keeps the old snapshot on screen for d seconds: the old image
// does not animate (stays opaque), the new one stays transparent.
func vtHoldCSS(d string) string {
	return fmt.Sprintf(`::view-transition-group(*), ::view-transition-image-pair(*) { animation-duration: %[1]ss; }
::view-transition-old(*) { animation: none; opacity: 1; }
::view-transition-new(*) { animation: %[1]ss linear both vthide; }
@keyframes vthide { from { opacity: 0; } to { opacity: 0; } }`, d)
}

// serveViewTransitions serves A's view transition pages:
//
//   - /vt?kind=doc|scoped|open|closed&d=SECONDS[&auto=1]: allowed content
//     and two denied frames in a scope (a plain element, or one in an open
//     or closed shadow root); vt() removes the frames inside a transition of
//     the document or of the scope; with auto the page does so by itself
//     once its frames loaded. "VT-ON" appears once the snapshot shows.
//   - /vtnav and /vtnext: two pages opted in to cross-document
//     transitions; /vtnav shows denied frames, /vtnext holds the old
//     snapshot.
func (s *attackSites) serveViewTransitions(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	green := "background:rgb(0,160,0)"
	frames := fmt.Sprintf(`<iframe src="%s/secret" style="position:absolute;left:0;top:0;width:200px;height:150px;border:0"></iframe>
<iframe src="%s/secret" style="position:absolute;left:220px;top:0;width:200px;height:150px;border:0"></iframe>`, s.b, s.c)
	switch r.URL.Path {
	case "/vt":
		d := q.Get("d")
		scope := `<div id=scope style="position:absolute;left:0;top:110px;width:640px;height:200px;contain:layout">` + frames + `</div>`
		host := ""
		switch q.Get("kind") {
		case "open", "closed":
			host, scope = `<div id=host style="position:absolute;left:0;top:110px;width:640px;height:200px"></div>`, ""
		}
		auto := ""
		if q.Get("auto") != "" {
			auto = `addEventListener('load', () => setTimeout(() => vt(), 0));`
		}
		fmt.Fprintf(w, html5("VT", `<style>%[1]s</style>
<div id=allowed style="position:absolute;left:0;top:0;width:300px;height:100px;%[2]s">ALLOWED</div>%[3]s%[4]s
<script>
const kind = %[5]q;
let root = document;
if (kind === 'open' || kind === 'closed') {
  root = document.getElementById('host').attachShadow({mode: kind});
  root.innerHTML = '<style>' + %[6]q + '</style><div id=scope style="width:640px;height:200px;contain:layout;position:relative">' + %[7]q + '</div>';
}
window.vt = () => {
  const remove = () => { for (const f of root.querySelectorAll('iframe')) f.remove(); };
  const t = kind === 'doc' ? document.startViewTransition(remove) : root.getElementById('scope').startViewTransition(remove);
  t.ready.then(() => { const p = document.createElement('p'); p.textContent = 'VT-ON'; p.style = 'position:absolute;top:600px'; document.body.appendChild(p); });
  return 1;
};
%[8]s
</script>`), vtHoldCSS(d), green, scope, host, q.Get("kind"), vtHoldCSS(d), frames, auto)
	case "/vtnav":
		fmt.Fprintf(w, html5("VT nav", `<style>@view-transition { navigation: auto; }</style>
<div style="position:absolute;left:0;top:0;width:300px;height:100px;%s">ALLOWED</div>
<div style="position:absolute;left:0;top:110px">%s</div>`), green, frames)
	case "/vtnext":
		fmt.Fprintf(w, html5("VT next", `<style>@view-transition { navigation: auto; } %s</style>
<div style="position:absolute;left:0;top:0;width:300px;height:100px;%s">NEXT</div>
<script>addEventListener('pagereveal', e => { if (e.viewTransition) e.viewTransition.ready.then(() => {
  const p = document.createElement('p'); p.textContent = 'VT-ON'; document.body.appendChild(p); }); });</script>`), vtHoldCSS("60"), green)
	default:
		http.NotFound(w, r)
	}
}

// rawCapture is the browser's own capture of the page, unmasked: the proof
// that a fixture shows the denied frames.
func rawCapture(t *testing.T, p *Page) []byte {
	t.Helper()
	shot, err := cdproto.Call(tctx(t), p.sess, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		t.Fatal(err)
	}
	return shot.Data
}

// vtCtx bounds a test that waits out view transitions (3 s a capture) on a
// loaded machine.
func vtCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitText waits for text in the page, bounded.
func waitText(t *testing.T, p *Page, text string) {
	t.Helper()
	r, err := p.Wait(tctx(t), WaitOptions{Condition: "text", Text: text, Timeout: 20 * time.Second})
	if err != nil || !r.Found {
		t.Fatalf("%q did not appear: %+v %v", text, r, err)
	}
}

// TestScreenshotRefusesHeldViewTransition: the page itself, or the agent
// through evaluate, removes the denied frames inside a view transition of
// the document or of a scope (plain, in an open and in a closed shadow
// root) whose old snapshot stays on screen for a minute. The browser's own
// capture shows the denied pages (the attack is real); every screenshot —
// viewport, full page, element — is refused, never returned.
func TestScreenshotRefusesHeldViewTransition(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	for _, c := range []struct{ name, kind, by string }{
		{"page document", "doc", "page"},
		{"agent document", "doc", "agent"},
		{"agent scoped", "scoped", "agent"},
		{"page scoped in open shadow root", "open", "page"},
		{"agent scoped in closed shadow root", "closed", "agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := vtCtx(t)
			p, _ := testPage(t, "", Options{Judge: s.gate.Check})
			u := s.a + "/vt?d=60&kind=" + c.kind
			if c.by == "page" {
				u += "&auto=1"
			}
			must(p.Navigate(ctx, u))(t)
			framesLoaded(t, p)
			if c.by == "agent" {
				must(p.Evaluate(ctx, "vt()"))(t)
			}
			waitText(t, p, "VT-ON")
			if n := jsString(t, p, "String(document.querySelectorAll('iframe').length)"); n != "0" {
				t.Fatalf("the page still has %s iframes in its document", n)
			}
			if n, _ := countRGB(t, rawCapture(t, p), secretRGB, 40); n < 1000 {
				t.Fatalf("the browser's own capture shows %d pixels of the denied pages: the fixture does not hold the snapshot", n)
			}
			// The element and the viewport are refused. A full-page capture
			// resizes the viewport, which makes Chromium skip the
			// transition: it is refused or shows none of the denied pages.
			for _, o := range []ScreenshotOptions{{}, {Target: &Target{CSS: "#allowed"}}, {FullPage: true}} {
				data, err := p.Screenshot(ctx, o)
				if err == nil && o.FullPage {
					if n, _ := countRGB(t, data, secretRGB, 40); n != 0 {
						t.Fatalf("full page: %d pixels of the denied pages", n)
					}
					continue
				}
				if err == nil {
					n, _ := countRGB(t, data, secretRGB, 40)
					t.Fatalf("%+v: a screenshot during the transition was returned (%d denied pixels)", o, n)
				}
				wantCode(t, err, fsm.OriginDenied)
				if !strings.Contains(err.Error(), "view transition") {
					t.Fatalf("%+v: the refusal does not say why: %v", o, err)
				}
			}
		})
	}
}

// TestScreenshotWaitsOutShortViewTransition: a transition that ends by
// itself within the bound is waited out: the screenshot is taken after it,
// shows the allowed content and none of the denied pages.
func TestScreenshotWaitsOutShortViewTransition(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	ctx := vtCtx(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	must(p.Navigate(ctx, s.a+"/vt?d=1&kind=doc"))(t)
	framesLoaded(t, p)
	must(p.Evaluate(ctx, "vt()"))(t)
	waitText(t, p, "VT-ON") // its one second starts at its first frame, late on a loaded machine
	data := must(p.Screenshot(ctx, ScreenshotOptions{}))(t)
	secret, _ := countRGB(t, data, secretRGB, 40)
	allowed, _ := countRGB(t, data, allowedRGB, 30)
	if secret != 0 || allowed < 20000 {
		t.Fatalf("after the transition: %d denied, %d allowed pixels", secret, allowed)
	}
	if v := jsString(t, p, "String(document.activeViewTransition)"); v != "null" {
		t.Fatalf("the screenshot was returned while a transition ran: %s", v)
	}
}

// TestScreenshotRefusesCrossDocumentViewTransition: an allowed page with
// denied frames navigates to another allowed page; both opted in to
// cross-document view transitions, and the new page holds the old page's
// snapshot. The browser's capture shows the denied pages; the screenshot is
// refused.
func TestScreenshotRefusesCrossDocumentViewTransition(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	ctx := vtCtx(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	// Chromium skips a cross-document transition whose old page is not
	// captured in time (on a loaded machine): navigate again, at most 5
	// times, until one holds.
	held := false
	for i := 0; i < 5 && !held; i++ {
		must(p.Navigate(ctx, s.a+"/vtnav"))(t)
		framesLoaded(t, p)
		// Navigations the page starts take part in view transitions (not
		// the browser's own). (The document it ran in is gone before its
		// value is read.)
		if _, err := p.Evaluate(ctx, "location.href = '/vtnext', 1"); err != nil && !fsm.IsCode(err, fsm.BindingStale) {
			t.Fatal(err)
		}
		r, err := p.Wait(ctx, WaitOptions{Condition: "text", Text: "VT-ON", Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		held = r.Found
	}
	if !held {
		t.Fatal("no cross-document transition held in 5 navigations")
	}
	if n, _ := countRGB(t, rawCapture(t, p), secretRGB, 40); n < 1000 {
		t.Fatalf("the browser's own capture shows %d pixels of the denied pages: the fixture does not hold the snapshot", n)
	}
	_, err := p.Screenshot(ctx, ScreenshotOptions{})
	wantCode(t, err, fsm.OriginDenied)
}

// BenchmarkScreenshotJudged is a judged viewport capture of the page with
// denied frames in every placement (the view transition checks included),
// reported as a multiple of one raw capture of the same page in the same
// run (x-raw).
func BenchmarkScreenshotJudged(b *testing.B) {
	s := newAttackSites(b)
	p, _ := testPage(b, "", Options{Judge: s.gate.Check})
	ctx := context.Background()
	if _, err := p.Navigate(ctx, s.a+"/shot"); err != nil {
		b.Fatal(err)
	}
	raw := func() time.Duration {
		t0 := time.Now()
		if _, err := cdproto.Call(ctx, p.sess, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var floor time.Duration
	for i := 0; i < 10; i++ {
		floor += raw()
	}
	floor /= 10
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Screenshot(ctx, ScreenshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(per)/float64(floor), "x-raw")
}

// TestPDFRefusesHeldViewTransition: the PDF route applies the same
// detection. The agent removes the denied frames inside a document
// transition held for a minute: the PDF is refused, naming the transition.
// With a transition of one second the PDF waits it out and prints the page
// (its frames are gone by then).
func TestPDFRefusesHeldViewTransition(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	for _, c := range []struct {
		d    string
		held bool
	}{{"60", true}, {"1", false}} {
		ctx := vtCtx(t)
		p, _ := testPage(t, "", Options{Judge: s.gate.Check})
		must(p.Navigate(ctx, s.a+"/vt?kind=doc&d="+c.d))(t)
		framesLoaded(t, p)
		_, err := p.PDF(ctx)
		wantCode(t, err, fsm.OriginDenied) // the denied frames are there
		must(p.Evaluate(ctx, "vt()"))(t)
		if !c.held {
			// The transition's clock starts at its first frame, which a
			// loaded machine renders late; its denied frames are removed
			// by then too (a frame removed while printing voids the PDF).
			waitText(t, p, "VT-ON")
		}
		data, err := p.PDF(ctx)
		if c.held {
			wantCode(t, err, fsm.OriginDenied)
			if !strings.Contains(err.Error(), "view transition") {
				t.Fatalf("the refusal does not say why: %v", err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(string(data), "%PDF") {
			t.Fatalf("after a short transition: %v (%d bytes)", err, len(data))
		}
	}
}

package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
)

var (
	fxOnce sync.Once
	fxSrv  *httptest.Server
)

// effectSite serves the pages of the effect and typing tests.
func effectSite(tb testing.TB) *httptest.Server {
	fxOnce.Do(func() {
		fxSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/fx":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, html5("Effects", `<a href="/fx2">Next page</a>
<button onclick="window.open('/fx2')">Open tab</button>
<a href="/file.txt">Get file</a>
<button onclick="history.pushState(null, '', '#moved')">Move</button>
<input aria-label="Plain">
<input aria-label="Drops" onkeydown="if (++window.keyCount > 5) event.preventDefault()">
<input aria-label="Keys" onkeydown="window.keyLog.push(event.key)">
<form action="/fx2"><input aria-label="Query" name=q></form>
<a href="/hang">Never answers</a> <a href="/slowload">Slow load</a>
<script>window.keyCount = 0; window.keyLog = [];</script>`))
			case "/aria":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, html5("ARIA", ariaPage))
			case "/hang":
				<-r.Context().Done() // answers never; ends when the page goes
			case "/slowload":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, html5("Slow", `<h1>Slow</h1><img src="/hang" alt="never loads">`))
			case "/list":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				var b strings.Builder
				for i := 1; i <= 30; i++ {
					fmt.Fprintf(&b, `<li><a href="#%d">Result %d</a></li>`, i, i)
				}
				fmt.Fprint(w, html5("List", "<ul>"+b.String()+"</ul>"))
			case "/fx2":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, html5("Second page", `<h1>Second</h1>`))
			case "/file.txt":
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
				fmt.Fprint(w, "data")
			default:
				http.NotFound(w, r)
			}
		}))
	})
	return fxSrv
}

// ariaPage has the kinds of controls agents meet, named every way HTML
// and ARIA allow: the accessibility conformance test reads it.
const ariaPage = `<nav aria-label="Main"><a href="/a">Home</a> <a href="/b" title="Titled link"><img src="data:," alt="Logo"></a></nav>
<span id=lbl>Labelled by id</span><button aria-labelledby=lbl>ignored text</button>
<button aria-label="Close dialog">×</button>
<input type=submit> <input type=reset> <input type=button value="Plain input button"> <input type=image alt="Go image">
<label>Wrapped <input name=w></label> <label for=sep>Separate</label><input id=sep>
<input placeholder="Only placeholder"> <input title="Only title"> <input type=search aria-label="Find">
<input type=number aria-label="Amount"> <input type=range aria-label="Volume"> <input type=email list=dl aria-label="Suggest"><datalist id=dl><option>a@b.c</option></datalist>
<textarea aria-label="Notes"></textarea>
<label><input type=checkbox> Tick me</label> <label><input type=radio name=r> Radio one</label>
<select aria-label="Single"><option>One</option><option>Two</option></select>
<select multiple aria-label="Many"><option>X</option><option>Y</option></select>
<div role=switch aria-checked=false tabindex=0>Dark mode</div>
<div role=tablist><div role=tab aria-selected=true tabindex=0>First tab</div><div role=tab tabindex=-1>Second tab</div></div>
<ul role=menu><li role=menuitem tabindex=0>Cut</li><li role=menuitemcheckbox aria-checked=true tabindex=0>Bold</li></ul>
<details><summary>More details</summary>Hidden text</details>
<div contenteditable=true aria-label="Editor"></div>
<div onclick="void 0">Clickable div</div>
<span tabindex=0>Focusable span</span>
<a href="/c"><span>Nested</span> <b>link text</b></a>
<button><img src="data:," alt="Icon only"></button>
<table><tr><td><button>In a cell</button></td></tr></table>
<fieldset><legend>Group</legend><input aria-label="In group"></fieldset>`

func effectPage(t *testing.T) *Page {
	t.Helper()
	p, _ := testPage(t, "")
	must(p.Navigate(tctx(t), effectSite(t).URL+"/fx"))(t)
	return p
}

func compact(t *testing.T, r *ActionResult) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestActionEffects: an action reports the navigation, new tab and
// download it caused, and nothing when it caused none.
func TestActionEffects(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p := effectPage(t)
	ctx := tctx(t)
	base := effectSite(t).URL

	r := must(p.Fill(ctx, Target{Label: "Plain"}, "héllo"))(t)
	if r.Navigation != nil || r.NewTab != nil || r.Download != nil || r.Length != 5 || r.Delivered != 5 {
		t.Fatalf("fill: %s", compact(t, r))
	}
	r = must(p.Type(ctx, Target{Label: "Plain"}, "!!"))(t)
	if r.Length != 7 || r.Delivered != 2 {
		t.Fatalf("type: %s", compact(t, r))
	}

	r = must(p.Click(ctx, Target{Role: "button", Name: "Move"}))(t)
	if n := r.Navigation; n == nil || !n.SameDocument || n.URL != base+"/fx#moved" {
		t.Fatalf("pushState: %s", compact(t, r))
	}

	r = must(p.Click(ctx, Target{Role: "button", Name: "Open tab"}))(t)
	if r.NewTab == nil || r.NewTab.URL != base+"/fx2" || r.Navigation != nil {
		t.Fatalf("window.open: %s", compact(t, r))
	}

	r = must(p.Click(ctx, Target{Role: "link", Name: "Next page"}))(t)
	if n := r.Navigation; n == nil || n.SameDocument || n.Pending || n.URL != base+"/fx2" || n.Title != "Second page" {
		t.Fatalf("link: %s", compact(t, r))
	}
	if r.NewTab != nil || r.Download != nil {
		t.Fatalf("link: %s", compact(t, r))
	}

	// Enter in a form submits it: a navigation with no target given to
	// the key, and one after typing into the field.
	must(p.Navigate(ctx, base+"/fx"))(t)
	must(p.Fill(ctx, Target{Label: "Query"}, "cats"))(t)
	r = must(p.Press(ctx, nil, "Enter"))(t)
	if n := r.Navigation; n == nil || n.URL != base+"/fx2?q=cats" || n.Title != "Second page" {
		t.Fatalf("enter: %s", compact(t, r))
	}
	must(p.Navigate(ctx, base+"/fx"))(t)
	r = must(p.Press(ctx, &Target{Label: "Query"}, "d o g Enter"))(t)
	if n := r.Navigation; n == nil || n.URL != base+"/fx2?q=dog" {
		t.Fatalf("enter on a target: %s", compact(t, r))
	}
}

// TestEffectWaitBounds: a navigation that never commits is reported as
// pending once its wait ends (Chromium holds every command to the page
// meanwhile: the surface does not wait for one), and one whose load never
// stops gets its title once the title wait ends: neither holds the action
// to its deadline. Typing that submits a form to such a page is told too.
func TestEffectWaitBounds(t *testing.T) {
	t.Parallel() // its own tabs, in windows of their own
	ctx := tctx(t)
	base := effectSite(t).URL
	p := effectPage(t)
	p.limits.navCommit = 300 * time.Millisecond
	r := must(p.Click(ctx, Target{Role: "link", Name: "Never answers"}))(t)
	if n := r.Navigation; n == nil || !n.Pending || n.URL != base+"/hang" {
		t.Fatalf("no answer: %s", compact(t, r))
	}

	p = effectPage(t)
	p.limits.navCommit = 300 * time.Millisecond
	js(t, p, "document.querySelector('form').action = '/hang', 1", new(int))
	r, err := p.TypeText(ctx, Target{Label: "Query"}, "x\n", TypeOptions{Slowly: true})
	wantCode(t, err, fsm.OutcomeUnknown)
	if n := r.Navigation; n == nil || !n.Pending || n.URL != base+"/hang?q=x" {
		t.Fatalf("typing that submits: %s", compact(t, r))
	}

	p = effectPage(t)
	p.limits.navTitle = 300 * time.Millisecond
	r = must(p.Click(ctx, Target{Role: "link", Name: "Slow load"}))(t)
	if n := r.Navigation; n == nil || n.Pending || n.URL != base+"/slowload" || n.Title != "Slow" {
		t.Fatalf("slow load: %s", compact(t, r))
	}
	if ctx.Err() != nil {
		t.Fatal("the waits ran to the call's deadline")
	}
}

// TestEffectLogBound: the log keeps the newest maxEffectEvents events.
func TestEffectLogBound(t *testing.T) {
	var l effectLog
	for i := 0; i < maxEffectEvents+36; i++ {
		l.addLocked(effectEvent{kind: effWindowOpen})
	}
	if len(l.events) != maxEffectEvents || l.events[0].seq != 37 || l.seq != maxEffectEvents+36 {
		t.Fatalf("%d events kept, first seq %d, last seq %d", len(l.events), l.events[0].seq, l.seq)
	}
}

// TestActionEffectDownload: a click that starts a download reports it
// (Chromium tells the page session, once the browser's download behaviour
// has events enabled); a download told by the browser session's event
// (NoteDownload) counts only for a frame of this page.
func TestActionEffectDownload(t *testing.T) {
	b := sharedBrowser(t)
	ctx := tctx(t)
	downloadsInto(t, b.conn.Browser())
	p := effectPage(t)
	r := must(p.Click(ctx, Target{Role: "link", Name: "Get file"}))(t)
	if r.Download == nil || r.Download.SuggestedFilename != "report.txt" || !strings.HasSuffix(r.Download.URL, "/file.txt") || r.Download.GUID == "" {
		t.Fatalf("download: %s", compact(t, r))
	}
	if r.Navigation != nil {
		t.Fatalf("a download is not a navigation: %s", compact(t, r))
	}

	m := p.effectMark()
	p.NoteDownload("another-page-frame", "g1", "http://127.0.0.1/x", "x.bin")
	out := &ActionResult{}
	p.collectEffects(ctx, m, out)
	if out.Download != nil {
		t.Fatalf("another page's download reported: %s", compact(t, out))
	}
	p.NoteDownload(string(p.main), "g2", "http://127.0.0.1/y", "y.bin")
	p.NoteDownload(string(p.main), "g2", "http://127.0.0.1/y", "y.bin") // told twice, once by each session
	p.collectEffects(ctx, m, out)
	if out.Download == nil || out.Download.GUID != "g2" || out.Download.SuggestedFilename != "y.bin" {
		t.Fatalf("this page's download: %s", compact(t, out))
	}
	if evs, _ := p.effectsSince(m.seq); len(evs) != 1 {
		t.Fatalf("a download told twice is recorded %d times", len(evs))
	}
}

// downloadsInto makes the browser save downloads into a directory of the
// test's and report them. When the test ends the behaviour is reset and
// every download that began has ended (completed or cancelled) before the
// directory is removed: Chromium writes a download after the click that
// started it has returned, and a removal racing that writer fails with
// "directory not empty".
func downloadsInto(t *testing.T, br *cdp.Session) {
	t.Helper()
	dir := t.TempDir()
	// Subscribed before the behaviour allows a download, so none is missed.
	began, stopBegan := br.Subscribe(browser.DownloadWillBegin.Method)
	progress, stopProgress := br.Subscribe(browser.DownloadProgress.Method)
	if _, err := cdproto.Call(tctx(t), br, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: new(true),
	}); err != nil {
		t.Fatal(err)
	}
	// Registered after TempDir, so it runs before the directory's removal.
	t.Cleanup(func() {
		defer stopBegan()
		defer stopProgress()
		ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(30*time.Second))
		defer cancel()
		// Reset last: the default behaviour reports no more progress.
		defer func() {
			if _, err := cdproto.Call(ctx, br, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDefault}); err != nil {
				t.Errorf("reset the download behaviour: %v", err)
			}
		}()
		started, ended := map[string]bool{}, map[string]bool{}
		writing := func() int {
			n := 0
			for g := range started {
				if !ended[g] {
					n++
				}
			}
			return n
		}
		for {
			select {
			case raw := <-began:
				var ev browser.EventDownloadWillBegin
				if jsonv2.Unmarshal(raw, &ev) == nil {
					started[ev.GUID] = true
				}
				continue
			default:
			}
			if writing() == 0 {
				return
			}
			select {
			case raw := <-progress:
				var ev browser.EventDownloadProgress
				if jsonv2.Unmarshal(raw, &ev) == nil && ev.State != browser.DownloadProgressStateInProgress {
					ended[ev.GUID] = true
				}
			case raw := <-began:
				var ev browser.EventDownloadWillBegin
				if jsonv2.Unmarshal(raw, &ev) == nil {
					started[ev.GUID] = true
				}
			case <-ctx.Done():
				t.Errorf("%d downloads still being written when the test ended", writing())
				return
			}
		}
	})
}

// TestTypeSlowly: keystroke by keystroke, every key reaches the page's
// handler; a handler that drops keys after the fifth makes the delivery
// incomplete, with the counts and a next step.
func TestTypeSlowly(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p := effectPage(t)
	ctx := tctx(t)
	r := must(p.TypeText(ctx, Target{Label: "Keys"}, "Ab c", TypeOptions{Slowly: true}))(t)
	if r.Requested != 4 || r.Delivered != 4 || r.Length != 4 {
		t.Fatalf("slowly: %s", compact(t, r))
	}
	var keys []string
	js(t, p, "window.keyLog", &keys)
	if strings.Join(keys, ",") != "A,b, ,c" {
		t.Fatalf("key events = %q", keys)
	}
	r, err := p.TypeText(ctx, Target{Label: "Drops"}, "abcdefgh", TypeOptions{Slowly: true})
	wantCode(t, err, fsm.InputIncomplete)
	if r == nil || r.Requested != 8 || r.Delivered != 5 {
		t.Fatalf("dropped keys: %+v", r)
	}
	ref, _ := fsm.AsRefusal(err)
	if !strings.Contains(ref.Next, "remaining 3 characters") {
		t.Fatalf("next step: %q", ref.Next)
	}
	if got := jsString(t, p, "document.querySelector('[aria-label=Drops]').value"); got != "abcde" {
		t.Fatalf("field = %q", got)
	}
	_, err = p.TypeText(ctx, Target{Label: "Keys"}, strings.Repeat("x", MaxSlowlyChars+1), TypeOptions{Slowly: true})
	wantCode(t, err, fsm.LimitExceeded)
}

// wrappedSession is a page session seen through a wrapper that embeds
// *cdp.Session and overrides Call, as the runner's frame gate does.
type wrappedSession struct {
	*cdp.Session
	calls *atomic.Int64
}

func (w wrappedSession) Call(ctx context.Context, method string, params, result any) error {
	w.calls.Add(1)
	return w.Session.Call(ctx, method, params, result)
}

// TestWrappedSessionEvents: a wrapped session feeds the page its commands
// through the wrapper and its events in order (navigation effects, the end
// of the session).
func TestWrappedSessionEvents(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	b := sharedBrowser(t)
	sess, id := b.newTab(t)
	ctx := tctx(t)
	calls := new(atomic.Int64)
	p := must(New(ctx, wrappedSession{sess, calls}, Options{}))(t)
	defer p.Close()
	if calls.Load() == 0 {
		t.Fatal("the page's commands did not go through the wrapper")
	}
	base := effectSite(t).URL
	must(p.Navigate(ctx, base+"/fx"))(t)
	r := must(p.Click(ctx, Target{Role: "link", Name: "Next page"}))(t)
	if n := r.Navigation; n == nil || n.URL != base+"/fx2" {
		t.Fatalf("link: %s", compact(t, r))
	}
	if err := b.closeTarget(id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.gone:
	case <-ctx.Done():
		t.Fatal("the page did not see its session end")
	}
}

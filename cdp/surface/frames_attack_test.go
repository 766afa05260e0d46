package surface

// Attacks on frames of denied origins through every verb: the test serves
// an allowed origin (127.0.0.1:A), a denied one on the same site
// (127.0.0.1:B) and a denied cross-site one (localhost:C), and allows only A
// through the real origin gate. Each denied page holds a secret token in
// its text and title, paints itself in a colour nothing else uses, and
// records every key and pointer event it receives; on request it reports
// them to its own server. No verb may return the secret, show the colour or
// deliver an event to a denied document.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
)

// The colours of the fixture pages, compared with a tolerance.
var (
	secretRGB  = [3]uint8{255, 0, 200} // denied documents only
	allowedRGB = [3]uint8{0, 160, 0}   // the allowed page
	nestedRGB  = [3]uint8{0, 0, 170}   // the allowed cross-site page D
)

// attackSites serves the four origins of these tests: A (allowed), B and C
// (denied) and D (cross-site, allowed only by the nested judge).
type attackSites struct {
	secret     string
	a, b, c, d string
	gate       *origin.Gate // allows A
	gateAD     *origin.Gate // allows A and D

	mu   sync.Mutex
	logs map[string][]string // label + "/" + flush id -> event lists reported
	hit  chan struct{}       // closed and replaced on every report
}

func newAttackSites(t testing.TB) *attackSites {
	t.Helper()
	s := &attackSites{secret: "wcsecret" + randomHex(8), logs: map[string][]string{}, hit: make(chan struct{})}
	serve := func(h func(http.ResponseWriter, *http.Request)) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(h))
		t.Cleanup(srv.Close)
		return srv
	}
	localhost := func(srv *httptest.Server) string {
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
		return "http://localhost:" + port
	}
	s.a = serve(s.serveA).URL
	s.b = serve(func(w http.ResponseWriter, r *http.Request) { s.serveDenied(w, r, "B") }).URL
	s.c = localhost(serve(func(w http.ResponseWriter, r *http.Request) { s.serveDenied(w, r, "C") }))
	s.d = localhost(serve(s.serveD))
	s.gate, _ = origin.New(origin.Attached, []string{strings.TrimPrefix(s.a, "http://")})
	s.gateAD, _ = origin.New(origin.Attached, []string{strings.TrimPrefix(s.a, "http://"), strings.TrimPrefix(s.d, "http://")})
	for _, u := range []string{s.b, s.c, s.d} {
		if s.gate.Check(u) == nil {
			t.Fatalf("the gate allows %s", u)
		}
	}
	if s.gate.Check(s.a) != nil || s.gateAD.Check(s.d) != nil || s.gateAD.Check(s.b) == nil {
		t.Fatal("the gates do not judge as the tests assume")
	}
	return s
}

// recorder is the script of every denied document: it keeps each key and
// pointer event it receives and, when asked by a message, reports them to
// its own server.
const recorder = `<script>
window.events = [];
for (const t of ['keydown', 'keyup', 'keypress', 'input', 'beforeinput', 'mousedown', 'mouseup', 'click', 'mousemove', 'mouseover', 'wheel', 'paste'])
  addEventListener(t, e => events.push(t + (e.key ? ':' + e.key : '')), true);
addEventListener('focus', () => { const i = document.getElementById('in'); if (i) i.focus(); });
addEventListener('message', e => { if (e.data && e.data.flush)
  fetch('/log?id=' + e.data.flush + '&ev=' + encodeURIComponent(events.join(',')), {keepalive: true}); });
</script>`

func (s *attackSites) serveDenied(w http.ResponseWriter, r *http.Request, label string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/secret":
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset=utf-8><title>%[1]s %[2]s</title></head>
<body style="margin:0;background:rgb(255,0,200);color:rgb(255,0,200);font:40px sans-serif">
<p>SECRET-%[1]s-%[2]s</p><input id=in autofocus aria-label="Secret field %[2]s" style="background:rgb(255,0,200);border:0">
<button style="width:100%%;height:400px;background:rgb(255,0,200);border:0">Secret button %[2]s</button>%[3]s</body></html>`, label, s.secret, recorder)
	case "/log":
		s.mu.Lock()
		k := label + "/" + r.URL.Query().Get("id")
		s.logs[k] = append(s.logs[k], r.URL.Query().Get("ev"))
		close(s.hit)
		s.hit = make(chan struct{})
		s.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

// serveD is the allowed cross-site page of the nested tests: it embeds a
// denied B document.
func (s *attackSites) serveD(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/nest":
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:0;background:rgb(0,0,170)"><p style="color:#fff">D-allowed</p>
<iframe title="B in D" src="%s/secret" style="position:absolute;left:20px;top:60px;width:200px;height:120px;border:0"></iframe></body></html>`, s.b)
	default:
		http.NotFound(w, r)
	}
}

func (s *attackSites) serveA(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	denied := s.b
	if q.Get("to") == "C" {
		denied = s.c
	}
	green := "background:rgb(0,160,0)"
	switch r.URL.Path {
	case "/shot":
		// Every way a frame can be placed: plain, bordered and padded,
		// inside a same-origin frame, scaled and rotated, blurred, under a
		// backdrop filter, fixed, and below the fold.
		fmt.Fprintf(w, html5("Shot", `<div id=allowed style="position:absolute;left:0;top:0;width:300px;height:100px;%[3]s">ALLOWED</div>
<iframe id=fb src="%[1]s/secret" style="position:absolute;left:320px;top:0;width:200px;height:150px;border:0"></iframe>
<iframe id=fc src="%[2]s/secret" style="position:absolute;left:0;top:110px;width:200px;height:120px;border:4px solid #000;padding:3px"></iframe>
<iframe id=same src="/inner" style="position:absolute;left:230px;top:170px;width:260px;height:170px;border:0"></iframe>
<iframe id=tf src="%[1]s/secret" style="position:absolute;left:560px;top:20px;width:90px;height:90px;border:0;transform:scale(1.4) rotate(12deg);transform-origin:0 0"></iframe>
<iframe id=blur src="%[2]s/secret" style="position:absolute;left:520px;top:230px;width:100px;height:70px;border:0;filter:blur(5px)"></iframe>
<iframe id=under src="%[2]s/secret" style="position:absolute;left:20px;top:260px;width:120px;height:60px;border:0"></iframe>
<div style="position:absolute;left:100px;top:250px;width:120px;height:120px;backdrop-filter:blur(12px)"></div>
<div id=box style="position:absolute;left:0;top:360px;width:330px;height:120px;%[3]s"><iframe src="%[1]s/secret" style="margin:10px;width:150px;height:80px;border:0"></iframe></div>
<iframe id=fixed src="%[1]s/secret" style="position:fixed;right:0;bottom:0;width:120px;height:60px;border:0"></iframe>
<iframe id=far src="%[2]s/secret" style="position:absolute;left:0;top:1500px;width:200px;height:150px;border:0"></iframe>
<div style="position:absolute;left:0;top:1700px;width:300px;height:60px;%[3]s">bottom</div>`), s.b, s.c, green)
	case "/inner":
		fmt.Fprintf(w, html5("Inner", `<div style="width:60px;height:40px;%s"></div>
<iframe src="%s/secret" style="position:absolute;left:70px;top:30px;width:150px;height:100px;border:0"></iframe>`), green, s.c)
	case "/nest":
		fmt.Fprintf(w, html5("Nest", `<div style="width:300px;height:40px;%s">ALLOWED</div>
<iframe title="D" src="%s/nest" style="position:absolute;left:10px;top:60px;width:300px;height:220px;border:0"></iframe>`), green, s.d)
	case "/focus":
		// The page moves the focus into the denied frame once it loads and
		// says so; the denied frame then focuses its own field.
		fmt.Fprintf(w, html5("Focus", `<label>Allowed field <input id=mine></label>
<iframe id=f src="%s/secret" style="width:300px;height:150px"></iframe><p id=state>waiting</p>
<script>document.getElementById('f').addEventListener('load', () => { document.getElementById('f').focus();
 requestAnimationFrame(() => { if (document.activeElement.id === 'f') document.getElementById('state').textContent = 'FOCUS-IN-FRAME'; }); });
document.getElementById('mine').addEventListener('focus', () => { if (window.steal) queueMicrotask(() => document.getElementById('f').focus()); });</script>`), denied)
	case "/cover":
		// A denied frame lies over the allowed button "Under".
		fmt.Fprintf(w, html5("Cover", `<button id=under style="position:absolute;left:40px;top:40px;width:200px;height:80px" onclick="clicks.push('under')">Under</button>
<iframe id=f src="%s/secret" style="position:absolute;left:30px;top:30px;width:240px;height:120px;border:0;z-index:2"></iframe>
<button style="position:absolute;left:40px;top:200px" onclick="clicks.push('free')">Free</button>
<script>window.clicks = [];</script>`), denied)
	case "/object":
		// An <object> of HTML holds a document as an <iframe> does.
		fmt.Fprintf(w, html5("Object", `<div style="width:300px;height:40px;%s">ALLOWED</div>
<object data="%s/secret" type="text/html" style="position:absolute;left:30px;top:60px;width:240px;height:120px"></object>`), green, denied)
	case "/race":
		// Where the allowed button and field are, the denied pages have
		// their own button and focused field.
		var b strings.Builder
		for i := 1; i <= 300; i++ {
			fmt.Fprintf(&b, `<p>Line %d <button>Item %d</button></p>`, i, i)
		}
		fmt.Fprintf(w, html5("Race", `<h1>ALLOWED-PAGE</h1>
<button style="position:absolute;left:0;top:0;width:100%%;height:300px;%s" onclick="clicks.push(1)">Allowed button</button>
<input aria-label="Allowed field" style="position:absolute;left:0;top:320px">
<div style="position:absolute;top:360px">%s</div><script>window.clicks = [];</script>`), green, b.String())
	default:
		s.serveViewTransitions(w, r)
	}
}

// flush asks every denied frame of the page to report the events it
// received and returns them by origin label, waiting for want[label]
// reports from each label.
func (s *attackSites) flush(t *testing.T, p *Page, want map[string]int) map[string]string {
	t.Helper()
	id := randomHex(6)
	js(t, p, `(() => { const all = w => { for (let i = 0; i < w.length; i++) { w[i].postMessage({flush: '`+id+`'}, '*'); all(w[i]); } }; all(window); return 1; })()`, new(int))
	deadline := time.After(20 * time.Second)
	out := map[string]string{}
	for {
		s.mu.Lock()
		done := true
		for label, n := range want {
			l := s.logs[label+"/"+id]
			if len(l) < n {
				done = false
			}
			out[label] = strings.Join(l, ",")
		}
		ch := s.hit
		s.mu.Unlock()
		if done {
			return out
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the denied frames did not report (want %v, have %v)", want, out)
		}
	}
}

// countRGB counts the pixels of png data within tol of c on every channel.
func countRGB(t *testing.T, data []byte, c [3]uint8, tol int) (int, image.Rectangle) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c[0], tol) && near(g>>8, c[1], tol) && near(bl>>8, c[2], tol) {
				n++
			}
		}
	}
	return n, b
}

func near(v uint32, c uint8, tol int) bool {
	d := int(v) - int(c)
	return d <= tol && d >= -tol
}

// framesLoaded waits until the page's frames have all loaded (the page's
// own load event covers its iframes).
func framesLoaded(t *testing.T, p *Page) {
	t.Helper()
	r, err := p.Wait(tctx(t), WaitOptions{Condition: "load", Timeout: 20 * time.Second})
	if err != nil || !r.Found {
		t.Fatalf("load: %+v %v", r, err)
	}
}

// TestScreenshotMasksDeniedFrames: a page embedding both denied origins in
// every placement (plain, bordered, in a same-origin frame, transformed,
// blurred, under a backdrop filter, fixed, below the fold, inside an
// element) is captured as viewport, full page, element and at device scale
// 2: the denied pages' colour never appears, the allowed content does. The
// same captures without a Judge show the colour (the attack is real).
func TestScreenshotMasksDeniedFrames(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	open := func(judge func(string) error) *Page {
		p, _ := testPage(t, "", Options{Judge: judge})
		if _, err := p.Navigate(tctx(t), s.a+"/shot"); err != nil {
			t.Fatal(err)
		}
		framesLoaded(t, p)
		return p
	}
	// Eight captures of a page with eleven frames on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	control := open(nil)
	shot := must(control.Screenshot(ctx, ScreenshotOptions{}))(t)
	if n, _ := countRGB(t, shot, secretRGB, 30); n < 1000 {
		t.Fatalf("without a Judge the denied frames show %d pixels of their colour: the fixture does not work", n)
	}

	p := open(s.gate.Check)
	cases := []struct {
		name string
		o    ScreenshotOptions
		min  int // least allowed-colour pixels
	}{
		{"viewport", ScreenshotOptions{}, 20000},
		{"full page", ScreenshotOptions{FullPage: true}, 30000},
		{"element", ScreenshotOptions{Target: &Target{CSS: "#box"}}, 20000},
	}
	for _, c := range cases {
		data, err := p.Screenshot(ctx, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		secret, b := countRGB(t, data, secretRGB, 40)
		allowed, _ := countRGB(t, data, allowedRGB, 30)
		t.Logf("%s: %v, %d allowed pixels", c.name, b.Size(), allowed)
		if secret != 0 {
			t.Fatalf("%s: %d pixels of the denied pages' colour", c.name, secret)
		}
		if allowed < c.min {
			t.Fatalf("%s: only %d pixels of allowed content", c.name, allowed)
		}
		if c.o.FullPage && b.Dy() < 1700 {
			t.Fatalf("full page is %v: the part below the fold is missing", b.Size())
		}
	}

	// Device scale 2: boxes map to twice the pixels.
	if _, err := cdproto.Call(ctx, p.sess, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{DeviceScaleFactor: 2}); err != nil {
		t.Fatal(err)
	}
	data := must(p.Screenshot(ctx, ScreenshotOptions{}))(t)
	secret, b := countRGB(t, data, secretRGB, 40)
	allowed, _ := countRGB(t, data, allowedRGB, 30)
	if secret != 0 || allowed < 80000 {
		t.Fatalf("device scale 2 (%v): %d denied, %d allowed pixels", b.Size(), secret, allowed)
	}
}

// TestScreenshotMasksDeniedFrameInAllowedCrossSiteFrame: an allowed
// cross-site frame (D, allowed by this Judge) embeds a denied B document:
// D's content shows, B's is masked.
func TestScreenshotMasksDeniedFrameInAllowedCrossSiteFrame(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gateAD.Check})
	ctx := tctx(t)
	must(p.Navigate(ctx, s.a+"/nest"))(t)
	framesLoaded(t, p)
	data := must(p.Screenshot(ctx, ScreenshotOptions{}))(t)
	secret, _ := countRGB(t, data, secretRGB, 40)
	nested, _ := countRGB(t, data, nestedRGB, 30)
	if secret != 0 {
		t.Fatalf("%d pixels of the denied page in the allowed frame", secret)
	}
	if nested < 20000 {
		t.Fatalf("the allowed cross-site frame shows only %d pixels", nested)
	}
}

// TestScreenshotFrameNavigatingDuringCapture: an allowed same-origin frame
// navigates itself to a denied origin at varying moments while captures
// run; no capture shows the denied page.
func TestScreenshotFrameNavigatingDuringCapture(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(3*time.Minute))
	defer cancel()
	refused := 0
	for i, delay := range []int{0, 2, 5, 10, 20, 40, 80} {
		for _, to := range []string{s.b, s.c} {
			must(p.Navigate(ctx, s.a+"/inner"))(t)
			// A same-origin frame of the allowed page, navigated away by
			// the page at a moment the capture does not know.
			js(t, p, fmt.Sprintf(`(() => { const f = document.createElement('iframe'); f.src = '/inner';
 f.style = 'position:absolute;left:0;top:0;width:400px;height:300px;border:0';
 f.onload = () => { f.onload = null; setTimeout(() => { f.contentWindow.location.href = %q; }, %d);
  const m = document.createElement('p'); m.textContent = 'FRAME-LOADED'; document.body.appendChild(m); };
 document.body.appendChild(f); return 1; })()`, to+"/secret", delay), new(int))
			if w, err := p.Wait(ctx, WaitOptions{Condition: "text", Text: "FRAME-LOADED", Timeout: 20 * time.Second}); err != nil || !w.Found {
				t.Fatalf("the allowed frame did not load: %+v %v", w, err)
			}
			for k := 0; k < 3; k++ {
				data, err := p.Screenshot(ctx, ScreenshotOptions{})
				if err != nil {
					if !fsm.IsCode(err, fsm.BindingStale) {
						t.Fatalf("iteration %d: %v", i, err)
					}
					refused++
					continue
				}
				if n, _ := countRGB(t, data, secretRGB, 40); n != 0 {
					t.Fatalf("delay %d to %s: %d pixels of the denied page", delay, to, n)
				}
			}
		}
	}
	t.Logf("%d captures refused as unstable", refused)
}

// TestKeysRefusedWhenFocusInDeniedFrame: the page moves the focus into a
// denied frame; a key press without a target is refused and the frame's
// own log stays empty. Without a Judge the same press reaches it.
func TestKeysRefusedWhenFocusInDeniedFrame(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	for _, label := range []string{"B", "C"} {
		t.Run(label, func(t *testing.T) {
			ctx := tctx(t)
			openFocused := func(judge func(string) error) *Page {
				p, _ := testPage(t, "", Options{Judge: judge})
				must(p.Navigate(ctx, s.a+"/focus?to="+label))(t)
				w := must(p.Wait(ctx, WaitOptions{Condition: "text", Text: "FOCUS-IN-FRAME", Timeout: 20 * time.Second}))(t)
				if !w.Found {
					t.Fatal("the page did not move the focus into the frame")
				}
				return p
			}
			control := openFocused(nil)
			must(control.Press(ctx, nil, "Enter"))(t)
			if ev := s.flush(t, control, map[string]int{label: 1})[label]; !strings.Contains(ev, "keydown:Enter") {
				t.Fatalf("without a Judge the frame got %q: the fixture does not work", ev)
			}

			p := openFocused(s.gate.Check)
			_, err := p.Press(ctx, nil, "Enter")
			wantCode(t, err, fsm.OriginDenied)
			_, err = p.Press(ctx, nil, "s e c r e t")
			wantCode(t, err, fsm.OriginDenied)
			// A press aimed at the allowed field is delivered there.
			must(p.Press(ctx, &Target{Label: "Allowed field"}, "o k"))(t)
			if v := jsString(t, p, "document.getElementById('mine').value"); v != "ok" {
				t.Fatalf("the allowed field holds %q", v)
			}
			// The page steals the focus back into the frame as soon as the
			// field is focused: typing into the field is refused.
			js(t, p, "window.steal = true, document.getElementById('mine').blur(), 1", new(int))
			_, err = p.Type(ctx, Target{Label: "Allowed field"}, "typed")
			if err == nil {
				t.Fatal("typing while the page moves the focus into a denied frame was not refused")
			}
			if ev := s.flush(t, p, map[string]int{label: 1})[label]; ev != "" {
				t.Fatalf("the denied frame received %q", ev)
			}
		})
	}
}

// TestPointerRefusedOverDeniedFrame: a denied frame lies over an allowed
// button. A click on the button's ref, a hover on it (which has no hit
// check of its own) and a click at the frame's coordinates are all refused,
// and the frame's log stays empty; the free button still clicks. Without a
// Judge the same pointer input reaches the frame.
func TestPointerRefusedOverDeniedFrame(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	for _, label := range []string{"B", "C"} {
		t.Run(label, func(t *testing.T) {
			ctx := tctx(t)
			control, _ := testPage(t, "", Options{})
			must(control.Navigate(ctx, s.a+"/cover?to="+label))(t)
			framesLoaded(t, control)
			// A new cross-site frame takes input once it has painted: click
			// until it reports (bounded).
			reached := false
			for i := 0; i < 20 && !reached; i++ {
				must(control.clickAt(ctx, 100, 80))(t)
				reached = strings.Contains(s.flush(t, control, map[string]int{label: 1})[label], "mouse")
			}
			if !reached {
				t.Fatal("without a Judge no click reached the frame: the fixture does not work")
			}

			p, _ := testPage(t, "", Options{Judge: s.gate.Check})
			must(p.Navigate(ctx, s.a+"/cover?to="+label))(t)
			framesLoaded(t, p)
			snap := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
			under := Target{Ref: refOf(t, snap, `button "Under"`), SnapshotID: snap.ID}
			if _, err := p.Click(ctx, under); err == nil {
				t.Fatal("a click on a button under a denied frame was not refused")
			}
			_, err := p.Hover(ctx, under)
			wantCode(t, err, fsm.OriginDenied)
			_, err = p.clickAt(ctx, 100, 80)
			wantCode(t, err, fsm.OriginDenied)
			must(p.Click(ctx, Target{Role: "button", Name: "Free"}))(t)
			var clicks []string
			js(t, p, "window.clicks", &clicks)
			if strings.Join(clicks, ",") != "free" {
				t.Fatalf("clicks = %v", clicks)
			}
			if ev := s.flush(t, p, map[string]int{label: 1})[label]; ev != "" {
				t.Fatalf("the denied frame received %q", ev)
			}
		})
	}
}

// TestPointerRefusedOverDeniedFrameInAllowedFrame: the denied frame is
// inside an allowed cross-site frame; the hit test enters the allowed frame
// and refuses the point over the denied one, and allows a point on the
// allowed frame's own content.
func TestPointerRefusedOverDeniedFrameInAllowedFrame(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gateAD.Check})
	ctx := tctx(t)
	must(p.Navigate(ctx, s.a+"/nest"))(t)
	framesLoaded(t, p)
	// D is at (10, 60) in the page; B at (20, 60) in D.
	_, err := p.clickAt(ctx, 10+20+100, 60+60+60)
	wantCode(t, err, fsm.OriginDenied)
	must(p.clickAt(ctx, 10+250, 60+20))(t)
	if ev := s.flush(t, p, map[string]int{"B": 1})["B"]; ev != "" {
		t.Fatalf("the denied frame received %q", ev)
	}
}

// TestFramesOfDeniedOriginsAbsentFromReads: snapshots, semantic targets
// and reads never show the denied frames' content; a target that exists
// only in a denied frame is not found.
func TestFramesOfDeniedOriginsAbsentFromReads(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	p, _ := testPage(t, "", Options{Judge: s.gate.Check})
	ctx := tctx(t)
	must(p.Navigate(ctx, s.a+"/shot"))(t)
	framesLoaded(t, p)
	snap := must(p.Snapshot(ctx, SnapshotOptions{}))(t)
	if strings.Contains(snap.Text, s.secret) || strings.Contains(snap.Text, "SECRET") {
		t.Fatalf("the snapshot shows a denied frame:\n%s", snap.Text)
	}
	if !strings.Contains(snap.Text, "not allowed") {
		t.Fatalf("the snapshot does not mark the denied frames:\n%s", snap.Text)
	}
	rd := must(p.Read(ctx, 0))(t)
	if strings.Contains(rd.Text, s.secret) {
		t.Fatal("read shows a denied frame")
	}
	_, err := p.Click(ctx, Target{Role: "button", Name: "Secret button " + s.secret})
	wantCode(t, err, fsm.ElementNotFound)
	_, err = p.Type(ctx, Target{Label: "Secret field " + s.secret}, "x")
	wantCode(t, err, fsm.ElementNotFound)
}

// rawEval evaluates expr in the main frame's current document, as the test
// (not the agent) sees it.
func rawEval(t *testing.T, p *Page, expr string) string {
	t.Helper()
	res, err := cdproto.Call(tctx(t), p.sess, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true)})
	if err != nil || res.Result == nil {
		t.Fatalf("raw evaluate: %v", err)
	}
	var s string
	_ = jsonUnmarshal(res.Result.Value, &s)
	return s
}

// TestObjectElementIsAFrame: a denied document in an <object> is masked in
// captures and out of reach of the pointer, like one in an <iframe>.
func TestObjectElementIsAFrame(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	s := newAttackSites(t)
	for _, label := range []string{"B", "C"} {
		t.Run(label, func(t *testing.T) {
			ctx := tctx(t)
			control, _ := testPage(t, "", Options{})
			must(control.Navigate(ctx, s.a+"/object?to="+label))(t)
			framesLoaded(t, control)
			if n, _ := countRGB(t, must(control.Screenshot(ctx, ScreenshotOptions{}))(t), secretRGB, 40); n < 1000 {
				t.Fatalf("without a Judge the object shows %d pixels of its colour: the fixture does not work", n)
			}
			p, _ := testPage(t, "", Options{Judge: s.gate.Check})
			must(p.Navigate(ctx, s.a+"/object?to="+label))(t)
			framesLoaded(t, p)
			data := must(p.Screenshot(ctx, ScreenshotOptions{}))(t)
			if n, _ := countRGB(t, data, secretRGB, 40); n != 0 {
				t.Fatalf("%d pixels of the denied document in the object", n)
			}
			if n, _ := countRGB(t, data, allowedRGB, 30); n < 10000 {
				t.Fatalf("only %d allowed pixels", n)
			}
			_, err := p.clickAt(ctx, 150, 120)
			wantCode(t, err, fsm.OriginDenied)
			if ev := s.flush(t, p, map[string]int{label: 1})[label]; ev != "" {
				t.Fatalf("the denied document received %q", ev)
			}
		})
	}
}

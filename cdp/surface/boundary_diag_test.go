package surface

// Attacks on the diagnostics, waits and probes of a page under a Judge: the
// test serves three origins, allows only the first (through the real origin
// gate the Runner wires), and plants a secret in the other two. No read may
// return the secret; waits and probes on a page that leaves for a denied
// origin end at its navigation with the Judge's refusal.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// threeOrigins is an allowed origin (127.0.0.1:A), a denied one on the same
// site (127.0.0.1:B) and a denied cross-site one (localhost:C), with a
// secret only the denied ones know, and the gate that allows only A.
type threeOrigins struct {
	secret     string
	a, b, c    string // origins as the browser sees them
	gate       *origin.Gate
	mu         sync.Mutex
	deniedHits map[string]int // path requests the denied servers answered
}

func newThreeOrigins(t *testing.T) *threeOrigins {
	t.Helper()
	o := &threeOrigins{secret: "wcsecret" + randomHex(8), deniedHits: map[string]int{}}
	sa := httptest.NewServer(http.HandlerFunc(o.serveAllowed))
	sb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { o.serveDenied(w, r, "B") }))
	sc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { o.serveDenied(w, r, "C") }))
	t.Cleanup(sa.Close)
	t.Cleanup(sb.Close)
	t.Cleanup(sc.Close)
	o.a, o.b = sa.URL, sb.URL
	_, portC, _ := net.SplitHostPort(strings.TrimPrefix(sc.URL, "http://"))
	o.c = "http://localhost:" + portC
	o.gate, _ = origin.New(origin.Attached, []string{strings.TrimPrefix(sa.URL, "http://")})
	for _, u := range []string{o.b, o.c} {
		if o.gate.Check(u) == nil {
			t.Fatalf("the gate allows %s", u)
		}
	}
	if err := o.gate.Check(o.a); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *threeOrigins) hits(label, path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.deniedHits[label+path]
}

func (o *threeOrigins) serveAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	to := quoteJS(r.URL.Query().Get("to"))
	switch r.URL.Path {
	case "/framed":
		// The allowed page embeds both denied origins, and itself fetches a
		// denied URL carrying the secret (the CORS error quotes it).
		fmt.Fprintf(w, html5("Allowed", `<h1>Allowed</h1>
<iframe id=bf title="Same-site frame" src="%[1]s/frame"></iframe>
<iframe id=cf title="Cross-site frame" src="%[2]s/frame"></iframe>
<button onclick="console.error('A-click error'); fetch('%[2]s/x?t=%[3]s').catch(() => {}); document.getElementById('bf').contentWindow.postMessage('log', '*')">Probe me</button>
<script>
window.frameDone = {};
addEventListener('message', e => { if (e.data && e.data.done) frameDone[e.data.done] = true; });
console.log('A-log hello'); console.error('A-error own');
fetch('/a-missing');
fetch('%[2]s/x?t=%[3]s').catch(e => console.log('A caught ' + e));
</script>`), o.b, o.c, o.secret)
	case "/a-missing":
		http.NotFound(w, r)
	case "/leave":
		fmt.Fprint(w, html5("Leaving", `<p>A-leaving</p><script>setTimeout(() => { location.href = `+to+` }, 300)</script>`))
	case "/go":
		fmt.Fprint(w, html5("Go", `<button onclick="location.href = `+htmlEscape(to)+`">Go away</button>`))
	case "/ready":
		fmt.Fprint(w, html5("Ready", `<p>A-ready</p>`))
	default:
		http.NotFound(w, r)
	}
}

func (o *threeOrigins) serveDenied(w http.ResponseWriter, r *http.Request, label string) {
	o.mu.Lock()
	o.deniedHits[label+r.URL.Path]++
	o.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s := o.secret
	// Everything a denied document can put into the diagnostics: console
	// messages, an error, an exception, a failing fetch with the secret in
	// its URL.
	noisy := fmt.Sprintf(`<script>
console.log('%[1]s-log %[2]s'); console.error('%[1]s-error %[2]s');
fetch('/fetch?t=%[2]s');
setTimeout(() => { throw new Error('%[1]s-throw %[2]s') }, 0);
addEventListener('message', () => console.error('%[1]s-probe %[2]s'));
</script>`, label, s)
	switch r.URL.Path {
	case "/frame":
		fmt.Fprint(w, html5(label, `<p>`+label+` frame `+s+`</p>`+noisy+
			`<script>setTimeout(() => parent.postMessage({done: '`+label+`'}, '*'), 100)</script>`))
	case "/page":
		text := ""
		if r.URL.Query().Get("text") != "0" {
			text = `<p>WAITED-` + s + `</p>`
		}
		// The DOM never settles: a probe that watched this page would run
		// to its bound.
		fmt.Fprint(w, html5(label+" page "+s, `<p>`+label+`-page</p>`+text+noisy+
			`<script>console.log('`+label+`-page-log `+s+`'); setInterval(() => { document.body.dataset.n = Date.now() }, 20)</script>`))
	case "/fetch":
		http.NotFound(w, r)
	case "/x":
		fmt.Fprint(w, "no CORS header: the allowed page cannot read this")
	default:
		http.NotFound(w, r)
	}
}

// rawHas reports whether the page's unfiltered logs hold an entry
// containing s in its text or URL: proof that the attack reached the
// browser's diagnostics, which the reads then withhold.
func rawHas(p *Page, s string) bool {
	d := &p.diag
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range []*ring{&d.console, &d.network} {
		for _, e := range r.entries {
			if strings.Contains(e.Text, s) || strings.Contains(e.URL, s) {
				return true
			}
		}
	}
	return false
}

// eventuallyRaw waits, on the logs' own signals, until cond holds.
func eventuallyRaw(t *testing.T, p *Page, what string, cond func() bool) {
	t.Helper()
	waitfor.Start(20*time.Second).UntilWoken(t, "saw "+what, cond, func(max time.Duration) {
		p.diag.mu.Lock()
		logged, changed := p.diag.logged, p.diag.changed
		p.diag.mu.Unlock()
		waitEither(logged, changed, time.Now().Add(max), context.Background())
	})
}

// rawNavigate navigates the tab behind the surface's back, as the page or
// the person would, and waits for the main frame to commit url's origin.
func rawNavigate(t *testing.T, p *Page, dest string) {
	t.Helper()
	ctx := tctx(t)
	if _, err := cdproto.Call(ctx, p.sess, page.Navigate, page.NavigateParams{URL: dest}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		u, nav := p.mainDoc()
		if strings.HasPrefix(u, dest) {
			return
		}
		if !waitChan(nav, deadline, ctx) {
			t.Fatalf("the main frame never committed the navigation")
		}
	}
}

// noSecret fails when v, as the agent would receive it, holds the secret.
func (o *threeOrigins) noSecret(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), o.secret) {
		t.Fatalf("%s returned the denied origins' secret:\n%s", what, b)
	}
}

// allReads returns every read an agent can make of the logs.
func allReads(p *Page) map[string]DiagRead {
	return map[string]DiagRead{
		"console":             p.Console(DiagOptions{}),
		"console errors":      p.Console(DiagOptions{ErrorsOnly: true}),
		"network":             p.Network(DiagOptions{}),
		"network errors":      p.Network(DiagOptions{ErrorsOnly: true}),
		"console small":       p.Console(DiagOptions{MaxChars: 300}),
		"network from cursor": p.Network(DiagOptions{Since: 1}),
	}
}

func (o *threeOrigins) checkReads(t *testing.T, p *Page, when string) {
	t.Helper()
	for name, r := range allReads(p) {
		o.noSecret(t, when+": "+name, r)
		for _, e := range r.Entries {
			if e.Origin != o.a {
				t.Fatalf("%s: %s entry of origin %q (only %s is allowed): %+v", when, name, e.Origin, o.a, e)
			}
		}
	}
}

// TestDiagnosticsWithholdDeniedOrigins: the console, exceptions, log and
// network entries of denied frames (same-site and cross-site), and of the
// allowed page's own request to a denied URL, are never returned — while
// framed, while the page is on a denied origin, and after it comes back
// (when the execution context ids of the denied document are reused) —
// and not through a probe; the allowed page's own entries are, tagged with
// their origin.
func TestDiagnosticsWithholdDeniedOrigins(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	o := newThreeOrigins(t)
	p, _ := testPage(t, "", Options{Judge: o.gate.Check})
	ctx := tctx(t)
	if _, err := p.Navigate(ctx, o.a+"/framed"); err != nil {
		t.Fatal(err)
	}
	// The attack reached the browser: the same-site frame's messages, its
	// exception and its request, the CORS error quoting the denied URL and
	// the allowed page's request to it are all in the unfiltered logs.
	for _, s := range []string{"B-log " + o.secret, "B-error " + o.secret, "B-throw " + o.secret, "/fetch?t=" + o.secret, "Access to fetch", "/x?t=" + o.secret} {
		eventuallyRaw(t, p, s, func() bool { return rawHas(p, s) })
	}
	eventuallyRaw(t, p, "the /a-missing response", func() bool {
		for _, e := range p.Network(DiagOptions{ErrorsOnly: true}).Entries {
			if strings.HasSuffix(e.URL, "/a-missing") && e.Status == 404 {
				return true
			}
		}
		return false
	})
	var done map[string]bool
	for i := 0; !done["B"] || !done["C"]; i++ { // both frames ran their scripts
		if i > 200 {
			t.Fatalf("frames never finished: %v", done)
		}
		p.diag.waitConsole(ctx, 100*time.Millisecond)
		js(t, p, "window.frameDone", &done)
	}

	o.checkReads(t, p, "framed")
	c := p.Console(DiagOptions{})
	texts := entryTexts(c.Entries)
	if !strings.Contains(texts, "A-log hello") || !strings.Contains(texts, "A-error own") {
		t.Fatalf("the allowed page's own messages are missing: %s", texts)
	}
	if !strings.Contains(texts, "Access to fetch at '"+deniedURL+"'") {
		t.Fatalf("the CORS error on the allowed page is not there with its denied URL replaced: %s", texts)
	}
	for _, e := range p.Network(DiagOptions{}).Entries {
		if !strings.HasPrefix(e.URL, o.a) {
			t.Fatalf("network read shows a request to another origin: %+v", e)
		}
	}

	// The page leaves for the denied cross-site origin, which logs its
	// secret into the main frame's own (collected) console.
	rawNavigate(t, p, o.c+"/page")
	eventuallyRaw(t, p, "the denied page's log", func() bool { return rawHas(p, "C-page-log "+o.secret) })
	o.checkReads(t, p, "on the denied page")

	// Back on the allowed origin: a new renderer process whose execution
	// context ids repeat the denied document's.
	rawNavigate(t, p, o.a+"/framed")
	eventuallyRaw(t, p, "the allowed page's log again", func() bool {
		n := 0
		for _, e := range p.Console(DiagOptions{}).Entries {
			if e.Text == "A-log hello" {
				n++
			}
		}
		return n == 2
	})
	eventuallyRaw(t, p, "the same-site frame's log again", func() bool { return strings.Count(rawText(p), "B-log "+o.secret) == 2 })
	o.checkReads(t, p, "after coming back")

	// A probe whose action makes the denied frame log the secret.
	pr, err := p.Probe(ctx, ProbeAction{Act: clickOn(p, Target{Role: "button", Name: "Probe me"})})
	if err != nil {
		t.Fatal(err)
	}
	eventuallyRaw(t, p, "the frame's answer to the probe", func() bool { return rawHas(p, "B-probe "+o.secret) })
	o.noSecret(t, "probe", pr)
	if !strings.Contains(entryTexts(pr.ConsoleErrors), "A-click error") {
		t.Fatalf("probe console errors miss the allowed page's own: %s", entryTexts(pr.ConsoleErrors))
	}
	o.checkReads(t, p, "after the probe")
}

func rawText(p *Page) string {
	d := &p.diag
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	for _, e := range d.console.entries {
		b.WriteString(e.Text + "\n")
	}
	return b.String()
}

// TestWaitEndsWhenPageLeavesForDeniedOrigin: a wait for text on an allowed
// page that navigates itself to a denied page ends at that navigation with
// the Judge's refusal and nothing else, whether or not the denied page
// holds the text: neither the answer nor the time taken tells them apart.
func TestWaitEndsWhenPageLeavesForDeniedOrigin(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	o := newThreeOrigins(t)
	p, _ := testPage(t, "", Options{Judge: o.gate.Check})
	ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(90*time.Second))
	defer cancel()

	// An allowed page: the wait works.
	if _, err := p.Navigate(ctx, o.a+"/ready"); err != nil {
		t.Fatal(err)
	}
	w, err := p.Wait(ctx, WaitOptions{Condition: "text", Text: "A-ready"})
	if err != nil || !w.Found {
		t.Fatalf("wait on the allowed page = %+v, %v", w, err)
	}

	// A wait that watched the denied page would run to its timeout; one
	// that ends at the navigation returns well before, however loaded the
	// machine. Each wait gets a context that outlives its timeout, so
	// nothing but the navigation or the timeout can end it.
	const timeout = 40 * time.Second
	for _, label := range []string{"B", "C"} {
		base := map[string]string{"B": o.b, "C": o.c}[label]
		want := o.gate.Check(base + "/page")
		for _, present := range []bool{true, false} {
			dest := base + "/page"
			if !present {
				dest += "?text=0"
			}
			name := fmt.Sprintf("%s present=%v", label, present)
			before := o.hits(label, "/page")
			// The page leaves as soon as it loads, so the navigation may
			// itself see its document replaced or refused: either is fine.
			if _, err := p.Navigate(ctx, o.a+"/leave?to="+url.QueryEscape(dest)); err != nil &&
				!fsm.IsCode(err, fsm.BindingStale) && !fsm.IsCode(err, fsm.OriginDenied) {
				t.Fatal(err)
			}
			wctx, wcancel := context.WithTimeout(context.Background(), timeout+slow.Scale(30*time.Second))
			start := time.Now()
			res, err := p.Wait(wctx, WaitOptions{Condition: "text", Text: "WAITED-" + o.secret, Timeout: timeout})
			elapsed := time.Since(start)
			wcancel()
			if res != nil {
				t.Fatalf("%s: the wait returned a result: %+v", name, res)
			}
			if !fsm.IsCode(err, fsm.OriginDenied) || err.Error() != want.Error() {
				t.Fatalf("%s: err = %v, want the Judge's refusal %v", name, err, want)
			}
			if elapsed >= timeout {
				t.Fatalf("%s: the refusal took %v, the wait's whole timeout: it watched the denied page", name, elapsed)
			}
			if o.hits(label, "/page") == before {
				t.Fatalf("%s: the page never reached the denied origin", name)
			}
			t.Logf("%s: refused after %v", name, elapsed)
		}
	}
}

// TestProbeEndsWhenActionLeavesForDeniedOrigin: a probe whose click takes
// the page to a denied origin ends at the navigation with the Judge's
// refusal, without the after-identity, console errors or settle time of
// the denied page (which never settles).
func TestProbeEndsWhenActionLeavesForDeniedOrigin(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	o := newThreeOrigins(t)
	p, _ := testPage(t, "", Options{Judge: o.gate.Check})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, label := range []string{"B", "C"} {
		dest := map[string]string{"B": o.b, "C": o.c}[label] + "/page"
		if _, err := p.Navigate(ctx, o.a+"/go?to="+url.QueryEscape(dest)); err != nil {
			t.Fatal(err)
		}
		const settle = 30 * time.Second
		start := time.Now()
		pr, err := p.Probe(ctx, ProbeAction{Act: clickOn(p, Target{Role: "button", Name: "Go away"}), Settle: settle})
		elapsed := time.Since(start)
		if pr != nil {
			t.Fatalf("%s: the probe returned a result: %+v", label, pr)
		}
		if want := o.gate.Check(dest); !fsm.IsCode(err, fsm.OriginDenied) || err.Error() != want.Error() {
			t.Fatalf("%s: err = %v, want the Judge's refusal %v", label, err, want)
		}
		if elapsed > settle/3 {
			t.Fatalf("%s: the refusal took %v: the probe watched the denied page settle", label, elapsed)
		}
		if o.hits(label, "/page") == 0 {
			t.Fatalf("%s: the click never reached the denied origin", label)
		}
	}
}

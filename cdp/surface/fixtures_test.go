package surface

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webcodex/webcodex/internal/slow"
)

// site serves the fixture pages on 127.0.0.1; other serves cross-site
// frames, reached as localhost:<port> so that they are another site.
type site struct {
	main, other *httptest.Server
}

var (
	siteOnce sync.Once
	siteInst *site
)

func fixtures(tb testing.TB) *site {
	tb.Helper()
	siteOnce.Do(func() {
		s := &site{}
		s.other = httptest.NewServer(http.HandlerFunc(s.serveOther))
		s.main = httptest.NewServer(http.HandlerFunc(s.serveMain))
		siteInst = s
	})
	return siteInst
}

func (s *site) url(path string) string { return s.main.URL + path }

func (s *site) otherURL(path string) string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.other.URL, "http://"))
	return "http://localhost:" + port + path
}

func html5(title, body string) string {
	return `<!doctype html><html><head><meta charset=utf-8><title>` + title + `</title>
<style>body{font:14px sans-serif;margin:8px} .hidden{display:none}</style></head><body>` + body + `</body></html>`
}

const reactLike = `
<script>
// Like React: the page owns the value. A direct write to .value goes
// through a setter the page intercepts and ignores, so only real input
// events change its state.
const proto = HTMLInputElement.prototype;
const desc = Object.getOwnPropertyDescriptor(proto, 'value');
window.directWrites = 0;
Object.defineProperty(proto, 'value', {configurable: true, get() { return desc.get.call(this); }, set(v) { window.directWrites++; }});
window.state = {email: '', password: ''};
document.addEventListener('input', e => { if (e.target.name in window.state) window.state[e.target.name] = desc.get.call(e.target); }, true);
</script>`

func (s *site) serveMain(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/login":
		fmt.Fprint(w, html5("Login", `<h1>Sign in</h1>
<form id=f><label for=email>Email</label><input id=email name=email type=email>
<label>Password <input name=password type=password></label>
<label><input type=checkbox name=remember> Remember me</label>
<button type=submit>Sign in</button></form><p id=out></p>`+reactLike+`
<script>document.getElementById('f').addEventListener('submit', e => { e.preventDefault();
 document.getElementById('out').textContent = 'Signed in as ' + state.email; });</script>`))
	case "/shadow":
		fmt.Fprint(w, html5("Shadow", `<h1>Shadow</h1><open-field></open-field><closed-box></closed-box>
<script>
customElements.define('open-field', class extends HTMLElement { constructor() { super();
 const r = this.attachShadow({mode: 'open'});
 r.innerHTML = '<label for=sx>Shadow email</label><input id=sx><button id=sb>Shadow go</button>';
 r.getElementById('sb').addEventListener('click', () => { window.shadowClicks = (window.shadowClicks||0) + 1; });
 r.getElementById('sx').addEventListener('input', e => { window.shadowValue = e.target.value; }); } });
customElements.define('closed-box', class extends HTMLElement { constructor() { super();
 const r = this.attachShadow({mode: 'closed'}); r.innerHTML = '<button>Hidden inside</button>'; } });
</script>`))
	case "/frames":
		fmt.Fprintf(w, html5("Frames", `<h1>Frames</h1>
<iframe title="Same frame" src="/inner" width=400 height=150></iframe>
<iframe title="Other frame" src="%s" width=400 height=150></iframe>
<iframe title="Port frame" src="%s" width=400 height=150></iframe>
<script>window.crossClicks = 0; addEventListener('message', e => { if (e.data === 'clicked') window.crossClicks++; if (typeof e.data === 'object' && e.data.typed != null) { window.crossTyped = e.data.typed; window.crossFrom = e.data.from; } });</script>`), s.otherURL("/xframe"), s.other.URL+"/xframe")
	case "/inner":
		fmt.Fprint(w, html5("Inner", `<p>Inner text</p><button onclick="parent.innerClicks=(parent.innerClicks||0)+1">Inner button</button>
<input aria-label="Inner field" oninput="parent.innerValue=this.value">`))
	case "/controls":
		fmt.Fprint(w, html5("Controls", `<h1>Controls</h1>
<div id=ce contenteditable=true aria-label="Notes" style="border:1px solid;min-height:20px" oninput="window.ceText=this.innerText"></div>
<label for=color>Color</label><select id=color onchange="window.selected=this.value"><option value=r>Red</option><option value=g>Green</option><option value=b>Blue</option></select>
<button onclick="clicks.push('save-visible')">Save</button>
<button class=hidden onclick="clicks.push('save-hidden')">Save</button>
<button disabled onclick="clicks.push('disabled')">Delete all</button>
<div style="position:relative;width:200px;height:40px"><button style="position:absolute;left:0;top:0" onclick="clicks.push('covered')">Covered</button>
<div style="position:absolute;left:0;top:0;width:200px;height:40px;background:rgba(0,0,0,.3)"></div></div>
<label><input type=checkbox id=agree onchange="window.agreed=this.checked"> I agree</label>
<input id=keys aria-label="Keys" onkeydown="keys.push(event.key)" oninput="window.keysValue=this.value">
<button onclick="alert('Hello dialog')">Alert me</button>
<button onclick="window.confirmed = confirm('Sure?')">Confirm me</button>
<input type=file id=up aria-label="Upload" onchange="window.uploaded=Array.from(this.files, f => f.name + ':' + f.size)">
<input aria-label="Short" maxlength=3 oninput="window.short=this.value">
<div data-testid="tid" onclick="clicks.push('tid')" style="cursor:pointer">Test id box</div>
<button onmouseenter="this.dataset.entered = 1" onclick="if (this.dataset.entered) clicks.push('entered')">Enter first</button>
<script>window.clicks = []; window.keys = [];</script>`))
	case "/late":
		fmt.Fprint(w, html5("Late", `<h1>Late</h1><p id=gone>Loading…</p><button id=en disabled onclick="clicks.push('en')">Later enabled</button>
<script>window.clicks=[]; addEventListener('load', () => setTimeout(() => {
 const b = document.createElement('button'); b.textContent = 'Late button'; b.onclick = () => clicks.push('late'); document.body.appendChild(b);
 const p = document.createElement('p'); p.textContent = 'Ready now'; document.body.appendChild(p); window.readyAt = performance.now();
 document.getElementById('gone').remove(); document.getElementById('en').disabled = false; }, 1500));</script>`))
	case "/table":
		var b strings.Builder
		b.WriteString(`<h1>Big table</h1><table id=t><tbody>`)
		for i := 1; i <= 3000; i++ {
			fmt.Fprintf(&b, `<tr><td>%d</td><td>Item %d</td><td><button onclick="hit(%d)">Open</button></td></tr>`, i, i, i)
		}
		b.WriteString(`</tbody></table><button id=more onclick="more()">Load more</button>
<script>window.hits=[]; function hit(i){ hits.push(i); }
function more(){ const tb = document.querySelector('#t tbody'); const n = tb.rows.length;
 for (let i = n + 1; i <= n + 100; i++) { const tr = tb.insertRow(); tr.insertCell().textContent = i; tr.insertCell().textContent = 'Item ' + i;
  const btn = document.createElement('button'); btn.textContent = 'Open'; btn.onclick = () => hit(i); tr.insertCell().appendChild(btn); } }</script>`)
		fmt.Fprint(w, html5("Table", b.String()))
	case "/form":
		fmt.Fprint(w, html5("Search form", `<form action="/done" method=get><label for=q>Query</label><input id=q name=q><button>Go</button></form>
<a href="/done?from=link" target=_blank>Open in new tab</a>`))
	case "/done":
		fmt.Fprint(w, html5("Done", `<h1>Done</h1><p id=q>`+htmlEscape(r.URL.Query().Get("q"))+`</p>`))
	case "/vanish":
		fmt.Fprint(w, html5("Vanish", `<div id=box><button onclick="clicks.push('original')">Pay</button></div>
<button onclick="clicks.push('other')">Other</button>
<script>window.clicks=[];
window.rerender = () => { const b = document.createElement('button'); b.textContent = 'Pay'; b.onclick = () => clicks.push('rerendered');
 const box = document.getElementById('box'); box.replaceChildren(b); };
window.removeIt = () => document.getElementById('box').replaceChildren();
window.replaceOther = () => { const b = document.createElement('button'); b.textContent = 'Refund'; document.getElementById('box').replaceChildren(b); };</script>`))
	case "/diag":
		fmt.Fprint(w, html5("Diag", `<button onclick="console.error('boom from button'); fetch('/missing')">Break</button>
<button onclick="for (let i = 0; i < 300; i++) console.log('log ' + i)">Flood</button>
<script>console.log('hello log'); console.error('early error'); setTimeout(() => { throw new Error('thrown later') }, 0);</script>`))
	case "/busy":
		fmt.Fprint(w, html5("Busy", `<button onclick="const t = Date.now(); while (Date.now() - t < 1500) {} window.busyClicks = (window.busyClicks||0) + 1">Busy</button>
<input aria-label="Leaves" oninput="location.href = '/done?q=left'">`))
	case "/alert-on-load":
		fmt.Fprint(w, html5("Alerting", `<p>before</p><script>alert('loaded?')</script><p>after</p>`))
	case "/scroll":
		fmt.Fprint(w, html5("Scroll", `<div style="height:3000px">tall</div><p id=end>End</p>`))
	case "/slow":
		time.Sleep(300 * time.Millisecond) // the server is slow on purpose: navigation must wait for load
		fmt.Fprint(w, html5("Slow", `<p>slow page</p><img src="/slowimg">`))
	case "/slowimg":
		time.Sleep(300 * time.Millisecond)
		http.Error(w, "no image", http.StatusNotFound)
	case "/form-small":
		fmt.Fprint(w, html5("Small form", `<h1>Contact</h1><form><label>Name <input name=n></label><label>Email <input name=e type=email></label>
<label>Topic <select name=t><option>Sales</option><option>Support</option></select></label><textarea aria-label="Message"></textarea>
<label><input type=checkbox> Subscribe</label><button>Send</button></form><a href="/done">Help</a>`))
	default:
		http.NotFound(w, r)
	}
}

func (s *site) serveOther(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/xframe":
		fmt.Fprint(w, html5("Cross", `<p>Cross-site content</p><button onclick="parent.postMessage('clicked', '*')">Cross button</button>
<input aria-label="Cross field" oninput="parent.postMessage({typed: this.value, from: location.hostname}, '*')">`))
	default:
		http.NotFound(w, r)
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

// testPage opens a new tab, wraps it in a Page and navigates to path.
func testPage(t testing.TB, path string, opts ...Options) (*Page, *testBrowser) {
	t.Helper()
	b := sharedBrowser(t)
	sess, _ := b.newTab(t)
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	ctx := tctx(t)
	p, err := New(ctx, sess, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if path != "" {
		if _, err := p.Navigate(ctx, fixtures(t).url(path)); err != nil {
			t.Fatal(err)
		}
	}
	return p, b
}

// tctx bounds one step of a test: 30 s on an idle machine, stretched with
// the machine's load (internal/slow).
func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(30*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// js evaluates expr in the page's main world and decodes it into out: the
// tests read the page's own state back with it.
func js(t testing.TB, p *Page, expr string, out any) {
	t.Helper()
	r, err := p.Evaluate(tctx(t), expr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Exception != "" {
		t.Fatalf("%s threw %s", expr, r.Exception)
	}
	if err := jsonv2.Unmarshal(r.Value, out); err != nil {
		t.Fatalf("%s = %s: %v", expr, r.Value, err)
	}
}

func jsString(t testing.TB, p *Page, expr string) string {
	var s string
	js(t, p, expr, &s)
	return s
}

package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/gorilla/websocket"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// reachSecret is the token each denied server hands out; the agent must
// never see it, and the denied server must never be asked for anything.
const reachSecret = "DENIED-SECRET-7f3a91"

// deniedServer counts every request it receives and answers with the
// secret. Its base URL is returned with host 127.0.0.1 (same site as the
// allowed server) or localhost (cross-site).
type deniedServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string
}

func newDeniedServer(t *testing.T) *deniedServer {
	d := &deniedServer{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.hits = append(d.hits, r.Method+" "+r.URL.Path)
		d.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>%s</p>", reachSecret, reachSecret)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *deniedServer) sameSite() string { return d.srv.URL }

func (d *deniedServer) crossSite() string {
	return "http://localhost:" + strconv.Itoa(d.srv.Listener.Addr().(*net.TCPAddr).Port)
}

func (d *deniedServer) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.hits...)
}

// targetURLs lists the URLs of every page target of the browser, as the
// browser reports them (a blocked navigation commits an error page at the
// URL it tried).
func targetURLs(t *testing.T, r *Runner, browserID string) []string {
	t.Helper()
	b, err := r.browser(browserID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cdproto.Call(ctx, b.c().Browser(), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ti := range res.TargetInfos {
		if ti.Type == "page" {
			out = append(out, ti.URL)
		}
	}
	return out
}

// TestDeniedOriginsUnreachableInOwnedBrowser: with an allowlist, a page of
// an owned browser cannot make the browser send any request to a denied
// origin, same-site on another port or cross-site: subresources, fetch,
// XHR, iframes, a redirect, a script navigation, a form post and a popup
// all fail before leaving the browser, and so do WebSockets (which request
// interception never sees: the browser's egress proxy refuses them), so the
// denied servers see nothing and nothing of theirs reaches the agent.
func TestDeniedOriginsUnreachableInOwnedBrowser(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	same, cross := newDeniedServer(t), newDeniedServer(t)
	var allowedURL string
	settled := make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>allowed</title>
<form id="f" method="post" action="%[1]s/form"><input name="q" value="x"></form>
<a href="%[2]s/popup" target="_blank">popup</a>
<iframe src="%[1]s/frame"></iframe><iframe src="%[2]s/frame"></iframe>
<script>
const tries = [fetch("%[1]s/fetch?x"), fetch("%[2]s/fetch", {mode: "no-cors"}),
  new Promise(res => { const x = new XMLHttpRequest(); x.onloadend = res; x.open("GET", "%[1]s/xhr"); x.send(); }),
  new Promise(res => { const i = new Image(); i.onload = i.onerror = res; i.src = "%[2]s/img"; }),
  ...["%[3]s/ws", "%[4]s/ws", "%[5]s/ws"].map(u => new Promise(res => { const w = new WebSocket(u); w.onopen = w.onerror = res; }))];
Promise.allSettled(tries).then(() => fetch("/settled"));
</script>`, same.sameSite(), cross.crossSite(),
			wsURL(same.sameSite()), wsURL(cross.crossSite()), wsURL("http://"+r.Host))
	})
	mux.HandleFunc("/settled", func(w http.ResponseWriter, r *http.Request) { settled <- "subresources" })
	var allowedWS atomic.Int32
	up := websocket.Upgrader{}
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if c, err := up.Upgrade(w, r, nil); err == nil {
			allowedWS.Add(1)
			c.Close()
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, same.sameSite()+"/redirected", http.StatusFound)
	})
	allowed := httptest.NewServer(mux)
	defer allowed.Close()
	allowedURL = allowed.URL

	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{allowedURL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: allowedURL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-settled:
	case <-time.After(30 * time.Second):
		t.Fatal("the page's requests never settled")
	}
	if allowedWS.Load() == 0 {
		t.Fatal("the page's WebSocket to its own, allowed origin did not open: the blocking is too wide")
	}
	// A popup to the denied origin: the new tab commits an error page at
	// the denied URL without the request ever leaving the browser.
	if _, err := runAct(ctx, h.r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: "popup"})); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the popup ends on its (blocked) URL", func() bool {
		for _, u := range targetURLs(t, h.r, b.ID) {
			if strings.HasPrefix(u, cross.crossSite()+"/popup") {
				return true
			}
		}
		return false
	})
	// A redirect from the allowed origin to a denied one.
	runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: allowedURL + "/redirect"})
	waitfor.Until(t, 20*time.Second, "the redirect ends on its (blocked) URL", func() bool {
		for _, u := range targetURLs(t, h.r, b.ID) {
			if strings.HasPrefix(u, same.sameSite()+"/redirected") {
				return true
			}
		}
		return false
	})
	// A form post and a script navigation, each from a fresh allowed page.
	for _, attempt := range []struct{ expr, lands string }{
		{`document.getElementById("f").submit(); 1`, same.sameSite() + "/form"},
		{`location.href = "` + cross.crossSite() + `/nav"; 1`, cross.crossSite() + "/nav"},
	} {
		q, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: allowedURL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		<-settled
		res, err := runOp(ctx, h.r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: q.ID}, Expr: attempt.expr})
		if err == nil && strings.Contains(fmt.Sprint(res.Value), reachSecret) {
			t.Fatal("evaluate returned the denied page's secret")
		}
		waitfor.Until(t, 20*time.Second, "the navigation ends on its (blocked) URL", func() bool {
			for _, u := range targetURLs(t, h.r, b.ID) {
				if strings.HasPrefix(u, attempt.lands) {
					return true
				}
			}
			return false
		})
		if rd, err := runOp(ctx, h.r, op.ReadText, readIn(q.ID)); err == nil || strings.Contains(rd.Text, reachSecret) {
			t.Fatalf("a page that tried to leave is still readable: %+v, %v", rd, err)
		}
	}
	if got := append(same.requests(), cross.requests()...); len(got) != 0 {
		t.Fatalf("denied origins were reached: %q", got)
	}
}

// wsURL turns an http base URL into its ws one.
func wsURL(httpURL string) string { return "ws" + strings.TrimPrefix(httpURL, "http") }

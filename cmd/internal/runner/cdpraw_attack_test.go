package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/lifetime"
)

// origins3 serves the three origins of the raw CDP attack tests: an allowed
// page on http://127.0.0.1:A that embeds a frame of a denied same-site
// origin (http://127.0.0.1:B, another port: the same renderer) and a frame
// of a denied cross-site origin (http://localhost:C). Each denied frame
// holds its own secret token, and every server logs the requests it saw.
type origins3 struct {
	allowed, sameSite, crossSite *loggingServer
	allowedURL, sameSiteURL      string // http://127.0.0.1:port
	crossSiteURL                 string // http://localhost:port
	secretB, secretC             string
}

type loggingServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path?query header: value" per request
}

func (s *loggingServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

func newLoggingServer(t *testing.T, h http.HandlerFunc) *loggingServer {
	s := &loggingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var line strings.Builder
		fmt.Fprintf(&line, "%s %s", r.Method, r.URL.RequestURI())
		for k, v := range r.Header {
			fmt.Fprintf(&line, " %s: %s", k, strings.Join(v, ","))
		}
		s.mu.Lock()
		s.seen = append(s.seen, line.String())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func port(s *httptest.Server) string { return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port) }

func newOrigins3(t *testing.T) *origins3 {
	o := &origins3{secretB: "SECRET-SAMESITE-" + newID("s"), secretC: "SECRET-CROSSSITE-" + newID("s")}
	denied := func(secret string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>denied</title><p id="secret">%s</p><script>window.secretValue = %q</script>`, secret, secret)
		}
	}
	o.sameSite = newLoggingServer(t, denied(o.secretB))
	o.crossSite = newLoggingServer(t, denied(o.secretC))
	o.sameSiteURL = "http://127.0.0.1:" + port(o.sameSite.Server)
	o.crossSiteURL = "http://localhost:" + port(o.crossSite.Server)
	o.allowed = newLoggingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprintf(w, `<!doctype html><title>allowed</title><p>the allowed page</p>
<iframe id="same" src="%s/frame"></iframe><iframe id="cross" src="%s/frame"></iframe>`, o.sameSiteURL, o.crossSiteURL)
		default:
			fmt.Fprintf(w, `<!doctype html><title>%s</title><p>allowed %s</p>`, r.URL.Path, r.URL.Path)
		}
	})
	o.allowedURL = "http://127.0.0.1:" + port(o.allowed.Server)
	return o
}

// rawCDP sends one raw command through the Runner.
func rawCDP(h *harness, page, method, params string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var p json.RawMessage
	if params != "" {
		p = json.RawMessage(params)
	}
	res, err := h.r.CDP(ctx, localapi.CDPRequest{Page: page, Method: method, Params: p})
	return res.Result, err
}

// evalRaw runs a raw Runtime.evaluate by value and returns the result JSON.
func evalRaw(t *testing.T, h *harness, page, expr string) string {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	res, err := rawCDP(h, page, "Runtime.evaluate", string(params))
	if err != nil {
		t.Fatalf("raw evaluate %q: %v", expr, err)
	}
	return string(res)
}

// TestRawCDPUnderAnAllowlistNeverReachesDeniedFrames attacks raw CDP the
// way the review did, in an owned browser launched with --allow naming only
// the allowed origin (where the denied frames' requests may also be blocked
// in the browser) and in the person's own browser attached with that
// allowlist and --allow-evaluate (where they load): every id walk into the
// denied frames, every whole-page serialization, heap enumeration, planted
// script, extra header and raw key event is refused or yields nothing of
// the denied frames' secrets.
func TestRawCDPUnderAnAllowlistNeverReachesDeniedFrames(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	t.Run("owned", func(t *testing.T) {
		h := newHarness(t)
		o := newOrigins3(t)
		ctx := context.Background()
		b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{o.allowedURL}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: o.allowedURL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		attackRawCDP(t, h, o, p.ID, false, fsm.OriginDenied)
	})
	t.Run("attached", func(t *testing.T) {
		h := newHarness(t)
		o := newOrigins3(t)
		u := startUsersChrome(t)
		u.openTab(t, o.allowedURL+"/")
		res := h.approvedAttach(h.r, localapi.AttachRequest{ProfileDir: u.profile, Allow: []string{o.allowedURL}, AllowEvaluate: true})
		// The person's tab that leaves the allowlist is refused like an
		// unknown page.
		attackRawCDP(t, h, o, pageByURL(t, res.Browser.Pages, o.allowedURL+"/"), true, fsm.NotFound)
	})
}

// attackRawCDP runs the attack on page, the allowed page of o. framesLoad
// says the denied frames must load (a person's browser); left is the
// refusal once the page went to the denied origin.
func attackRawCDP(t *testing.T, h *harness, o *origins3, page string, framesLoad bool, left fsm.Code) {
	waitfor.Until(t, 20*time.Second, "the allowed page loaded with its frames", func() bool {
		loaded := strings.Contains(evalRaw(t, h, page, `document.readyState`), "complete")
		if framesLoad {
			loaded = loaded && strings.Contains(o.sameSite.log(), "GET /frame") && strings.Contains(o.crossSite.log(), "GET /frame")
		}
		return loaded
	})
	p := struct{ ID string }{page}

	var seen []string // every result and refusal the agent got
	attempt := func(method, params string, wantRefusal fsm.Code) json.RawMessage {
		t.Helper()
		res, err := rawCDP(h, p.ID, method, params)
		seen = append(seen, method+" "+params+" → "+string(res))
		if err != nil {
			seen = append(seen, err.Error())
		}
		if wantRefusal != "" && !fsm.IsCode(err, wantRefusal) {
			t.Errorf("%s %s = %s, %v; want %s", method, params, res, err, wantRefusal)
		}
		return res
	}

	// DOM ids: the document, the iframes' content documents, nodes by
	// backend id, and resolving them to objects.
	attempt("DOM.getDocument", `{"depth":-1}`, fsm.PolicyDenied)
	attempt("DOM.getDocument", `{"depth":-1,"pierce":true}`, fsm.PolicyDenied)
	attempt("DOM.enable", ``, fsm.PolicyDenied)
	for id := 1; id <= 12; id++ {
		attempt("DOM.describeNode", fmt.Sprintf(`{"nodeId":%d,"depth":-1}`, id), fsm.PolicyDenied)
		attempt("DOM.describeNode", fmt.Sprintf(`{"backendNodeId":%d,"depth":-1}`, id), fsm.PolicyDenied)
		attempt("DOM.querySelector", fmt.Sprintf(`{"nodeId":%d,"selector":"#secret"}`, id), fsm.PolicyDenied)
		attempt("DOM.resolveNode", fmt.Sprintf(`{"backendNodeId":%d}`, id), fsm.PolicyDenied)
		attempt("DOM.getOuterHTML", fmt.Sprintf(`{"backendNodeId":%d}`, id), fsm.PolicyDenied)
	}
	attempt("DOM.performSearch", `{"query":"SECRET"}`, fsm.PolicyDenied)
	attempt("DOM.getSearchResults", `{"searchId":"1","fromIndex":0,"toIndex":5}`, fsm.PolicyDenied)
	attempt("Accessibility.getFullAXTree", `{}`, fsm.PolicyDenied)
	attempt("CSS.getComputedStyleForNode", `{"nodeId":1}`, fsm.PolicyDenied)

	// Objects: frames[0]'s window by object id, and execution contexts by
	// guessed id (small integers).
	res := attempt("Runtime.evaluate", `{"expression":"frames[0]"}`, "")
	var obj struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	_ = json.Unmarshal(res, &obj)
	if obj.Result.ObjectID != "" {
		for _, own := range []string{"true", "false"} {
			attempt("Runtime.getProperties", fmt.Sprintf(`{"objectId":%q,"ownProperties":%s}`, obj.Result.ObjectID, own), fsm.PolicyDenied)
		}
		attempt("Runtime.callFunctionOn", fmt.Sprintf(`{"objectId":%q,"functionDeclaration":"function(){return this.document.body.innerText}","returnByValue":true}`, obj.Result.ObjectID), fsm.PolicyDenied)
		attempt("DOM.requestNode", fmt.Sprintf(`{"objectId":%q}`, obj.Result.ObjectID), fsm.PolicyDenied)
	}
	for id := 1; id <= 12; id++ {
		attempt("Runtime.evaluate", fmt.Sprintf(`{"expression":"document.body.innerText","contextId":%d,"returnByValue":true}`, id), fsm.PolicyDenied)
		attempt("Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){return document.body.innerText}","executionContextId":%d,"returnByValue":true}`, id), fsm.PolicyDenied)
	}
	attempt("Runtime.evaluate", `{"expression":"document.body.innerText","uniqueContextId":"1"}`, fsm.PolicyDenied)
	attempt("Runtime.evaluate", `{"expression":"queryObjects(Object)","includeCommandLineAPI":true}`, fsm.PolicyDenied)
	attempt("Runtime.evaluate", `{"expression":"frames[0]","generatePreview":true}`, fsm.PolicyDenied)
	attempt("Runtime.evaluate", `{"expression":"frames[0]","serializationOptions":{"serialization":"deep","maxDepth":5}}`, fsm.PolicyDenied)
	attempt("Runtime.evaluate", `{"expression":"1","userGesture":true}`, fsm.PolicyDenied)
	// What the main world's own script may do stays bounded by the
	// same-origin policy: the frames' documents throw, by value or not.
	for _, expr := range []string{
		"frames[0]", "frames[1]", "Array.from(frames).map(f => { try { return f.document.body.innerText } catch (e) { return String(e) } })",
		"document.getElementById('same').contentDocument", "(() => { try { return frames[0].secretValue } catch (e) { return String(e) } })()",
	} {
		for _, byValue := range []string{"true", "false"} {
			attempt("Runtime.evaluate", fmt.Sprintf(`{"expression":%q,"returnByValue":%s}`, expr, byValue), "")
		}
	}
	attempt("Runtime.queryObjects", `{"prototypeObjectId":"1"}`, fsm.PolicyDenied)
	attempt("HeapProfiler.takeHeapSnapshot", `{}`, fsm.PolicyDenied)
	attempt("Debugger.enable", `{}`, fsm.PolicyDenied)
	attempt("Debugger.setBreakpointByUrl", `{"lineNumber":0,"urlRegex":".*","condition":"fetch('/leak?'+document.body.innerText)"}`, fsm.PolicyDenied)

	// Whole-page serialization.
	attempt("Page.captureSnapshot", `{}`, fsm.PolicyDenied)
	attempt("Page.printToPDF", `{}`, fsm.PolicyDenied)
	attempt("DOMSnapshot.captureSnapshot", `{"computedStyles":[]}`, fsm.PolicyDenied)
	attempt("Page.captureScreenshot", `{}`, fsm.PolicyDenied)
	attempt("Page.getFrameTree", ``, fsm.PolicyDenied)
	attempt("Page.getNavigationHistory", ``, fsm.PolicyDenied)

	// Raw input would land in whichever frame has focus or is under the
	// point, including a denied one.
	attempt("Input.dispatchKeyEvent", `{"type":"keyDown","key":"a","text":"a"}`, fsm.PolicyDenied)
	attempt("Input.dispatchMouseEvent", `{"type":"mousePressed","x":10,"y":10,"button":"left","clickCount":1}`, fsm.PolicyDenied)
	attempt("Input.insertText", `{"text":"typed"}`, fsm.PolicyDenied)

	// State planted for later documents: a script for new documents, a
	// script for the reload, and an extra header; then the page itself goes
	// to the denied same-site origin.
	plant := fmt.Sprintf(`new Image().src = %q + "/planted?" + encodeURIComponent(document.body ? document.body.innerText : location.href)`, o.allowedURL)
	planted, _ := json.Marshal(map[string]any{"source": plant})
	attempt("Page.addScriptToEvaluateOnNewDocument", string(planted), fsm.PolicyDenied)
	attempt("Page.addScriptToEvaluateOnLoad", string(planted), fsm.PolicyDenied)
	reload, _ := json.Marshal(map[string]any{"scriptToEvaluateOnLoad": plant})
	attempt("Page.reload", string(reload), fsm.PolicyDenied)
	attempt("Network.setExtraHTTPHeaders", `{"headers":{"X-Planted":"by-the-agent"}}`, fsm.PolicyDenied)
	attempt("Emulation.setUserAgentOverride", `{"userAgent":"planted-agent"}`, fsm.PolicyDenied)
	attempt("Network.setBlockedURLs", `{"urlPatterns":[]}`, fsm.PolicyDenied)
	attempt("Runtime.addBinding", `{"name":"leak"}`, fsm.PolicyDenied)

	deniedPage := o.sameSiteURL + "/visited"
	leave, _ := json.Marshal(map[string]any{"expression": fmt.Sprintf("location.href = %q; 1", deniedPage), "returnByValue": true})
	attempt("Runtime.evaluate", string(leave), "")
	waitfor.Until(t, 20*time.Second, "the page leaves the allowlist", func() bool {
		_, err := rawCDP(h, p.ID, "Runtime.evaluate", `{"expression":"1"}`)
		return fsm.IsCode(err, left)
	})
	// Raw CDP on the denied document is refused like every verb.
	attempt("Runtime.evaluate", `{"expression":"document.body.innerText","returnByValue":true}`, left)
	attempt("Page.reload", `{}`, left)

	if framesLoad && !strings.Contains(o.sameSite.log(), "GET /visited") {
		t.Errorf("the page never reached the denied origin, so the planted state was not put to the test:\n%s", o.sameSite.log())
	}
	for _, s := range []*loggingServer{o.sameSite, o.crossSite, o.allowed} {
		if l := s.log(); strings.Contains(l, "X-Planted") || strings.Contains(l, "planted-agent") {
			t.Errorf("a header the agent tried to plant reached a server:\n%s", l)
		}
	}
	if l := o.allowed.log(); strings.Contains(l, "/planted") {
		t.Errorf("a script the agent tried to plant ran:\n%s", l)
	}
	all := strings.Join(seen, "\n")
	for _, secret := range []string{o.secretB, o.secretC} {
		if strings.Contains(all, secret) {
			t.Fatalf("a denied frame's secret reached the agent:\n%s", all)
		}
	}
	if framesLoad && !strings.Contains(all, "SecurityError") && !strings.Contains(all, "cross-origin") {
		t.Errorf("the main world's own reads of the frames did not throw as the same-origin policy says:\n%s", all)
	}
}

// TestRawSessionIsResetOnNavigation: on the open web the raw session may
// set state (an extra header, device metrics, a script for new documents);
// a navigation of the main frame resets the session by itself (no raw call
// needed), and nothing of that state reaches the document after the next.
// The surface's own session is untouched by what raw CDP disables.
func TestRawSessionIsResetOnNavigation(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	srv := newLoggingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><p>page %s</p>`, r.URL.Path, r.URL.Path)
	})
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/one"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.page(pi.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, params string }{
		{"Network.enable", ``},
		{"Network.setExtraHTTPHeaders", `{"headers":{"X-Raw-State":"set-by-raw"}}`},
		{"Emulation.setDeviceMetricsOverride", `{"width":555,"height":444,"deviceScaleFactor":1,"mobile":false}`},
		{"Page.addScriptToEvaluateOnNewDocument", `{"source":"window.__planted = 'yes'"}`},
	} {
		if _, err := rawCDP(h, pi.ID, c.method, c.params); err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
	}
	// The state took effect on this document.
	if got := evalRaw(t, h, pi.ID, `fetch("/probe-before").then(() => innerWidth)`); !strings.Contains(got, "555") {
		t.Fatalf("device metrics override not in effect: %s", got)
	}
	if !strings.Contains(srv.log(), "X-Raw-State: set-by-raw") {
		t.Fatalf("the extra header was not sent before the navigation:\n%s", srv.log())
	}
	// Disabling domains on the raw session must not disturb the surface.
	for _, m := range []string{"Page.disable", "Runtime.disable", "Log.disable"} {
		if _, err := rawCDP(h, pi.ID, m, ""); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	p.raw.mu.Lock()
	old, resets := p.raw.sess, p.raw.m.Counter("resets")
	p.raw.mu.Unlock()

	// Navigate through the surface; the watcher alone resets the session.
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: pi.ID}, URL: srv.URL + "/two"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the raw session was not detached after the main frame navigated")
	}
	p.raw.mu.Lock()
	if n := p.raw.m.Counter("resets"); n != resets+1 || p.raw.sess != nil || p.raw.m.State() != lifetime.RawDetached {
		t.Errorf("after the navigation: resets %d (was %d), session %v, machine %s; want one reset, no session, detached", n, resets, p.raw.sess, p.raw.m.State())
	}
	p.raw.mu.Unlock()
	// The surface still works (its domains were never the raw session's).
	rd, err := runOp(ctx, h.r, op.ReadText, readIn(pi.ID))
	if err != nil || rd.Text != "page /two" {
		t.Fatalf("read after raw disables = %+v, %v", rd, err)
	}
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: pi.ID}, URL: srv.URL + "/three"}); err != nil {
		t.Fatal(err)
	}
	got := evalRaw(t, h, pi.ID, `fetch("/probe-after").then(() => JSON.stringify({w: innerWidth, planted: window.__planted || null}))`)
	if strings.Contains(got, "555") || strings.Contains(got, "yes") {
		t.Errorf("raw state survived two navigations: %s", got)
	}
	for _, line := range strings.Split(srv.log(), "\n") {
		if (strings.Contains(line, "/three") || strings.Contains(line, "/probe-after")) && strings.Contains(line, "X-Raw-State") {
			t.Errorf("the extra header survived the reset: %s", line)
		}
	}
}

// TestRawCDPDuplicateKeysAreInvalid: params with a key twice, at the top or
// nested, are invalid_argument and nothing is sent (the expression that
// would have set a marker never ran).
func TestRawCDPDuplicateKeysAreInvalid(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	srv := newLoggingServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>dup</title><p>dup</p>`)
	})
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, params := range []string{
		`{"expression":"window.__sent = 1","expression":"window.__sent = 2"}`,
		`{"expression":"window.__sent = 3","returnByValue":true,"returnByValue":false}`,
		`{"expression":"window.__sent = 4","serializationOptions":{"serialization":"json","serialization":"deep"}}`,
		`{"expression":"window.__sent = 5","\u0065xpression":"window.__sent = 6"}`,
	} {
		_, err := rawCDP(h, pi.ID, "Runtime.evaluate", params)
		if !fsm.IsCode(err, fsm.InvalidArgument) {
			t.Errorf("params %s = %v, want %s", params, err, fsm.InvalidArgument)
		}
	}
	if got := evalRaw(t, h, pi.ID, `String(window.__sent)`); !strings.Contains(got, `"undefined"`) {
		t.Errorf("a refused command ran: window.__sent = %s", got)
	}
}

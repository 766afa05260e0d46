package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/extension/install"
	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// bridgeWait bounds each wait on the browser, the worker or the Runner in
// the bridge's end-to-end test: generous for a loaded two-core machine.
const bridgeWait = 45 * time.Second

// sharedIdle is how long the shared tab sits idle before it is driven
// again: past the 30 s after which Chrome stops an extension's service
// worker that holds no native port (CHROMIUM-FACTS.md).
const sharedIdle = 60 * time.Second

// TestExtensionBridgeEndToEnd installs the bridge into a test profile,
// loads the unpacked extension in headless Chromium, shares a fixture tab
// through the popup's action, and drives it through the same surface as
// any page: discover, attach by offer, snapshot, type, click, read; the
// boundaries hold (raw CDP off, origin gate, a denied frame out of reach);
// it stays usable after a minute idle; revoke detaches it and the Runner
// reports it; closing the Runner ends the host and the extension shows
// disconnected.
func TestExtensionBridgeEndToEnd(t *testing.T) {
	tracecheck.Track(t)
	root := t.TempDir()
	state := filepath.Join(root, "state")
	udd := filepath.Join(root, "profile")
	for _, d := range []string{state, udd} {
		if err := platform.EnsurePrivateDir(d); err != nil {
			t.Fatal(err)
		}
	}
	host := chromiumtest.BuildBridgeHost(t, root)
	if _, err := install.Install(install.Options{UserDataDir: udd, HostPath: host, StateDir: state}); err != nil {
		t.Fatal(err)
	}
	logs := &logSink{}
	r, err := New(Options{StateDir: state, Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.Shutdown(ctx)
	}
	t.Cleanup(shutdown)
	if !r.Capabilities()["browser_extension_bridge"] {
		t.Fatal("an installed bridge is not reachable")
	}
	rec, err := rendezvous.ReadRecord(state)
	if err != nil {
		t.Fatal(err)
	}

	// A frame of another host: the allowlist below admits 127.0.0.1 only.
	frameSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>FRAME-SECRET</p><button>Frame button</button>`)
	}))
	t.Cleanup(frameSrv.Close)
	frameURL := strings.Replace(frameSrv.URL, "127.0.0.1", "localhost", 1)
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Checkout</title><h1>Checkout</h1>
<label>Name <input id="name"></label>
<button onclick="document.getElementById('out').textContent = 'paid by ' + document.getElementById('name').value">Pay</button>
<p id="out"></p>
<button onclick="document.getElementById('out').textContent = window.open('/popup', '_blank') ? 'window opened' : 'window blocked'">Open a window</button>
<iframe src="%s/frame"></iframe>`, frameURL)
	}))
	t.Cleanup(pageSrv.Close)

	eb := chromiumtest.StartWithExtension(t, udd, state)
	waitfor.Until(t, bridgeWait, "the popup's state line", func() bool { return eb.Popup("status", 1)["state"] == "not shared" })
	tab, targetID := eb.OpenTab(pageSrv.URL+"/checkout", "Checkout")
	if got := eb.Popup("share", tab); got["ok"] != true || got["state"] != "waiting for attach" {
		t.Fatalf("Share = %v", got)
	}
	if eb.DebuggerAttached(targetID) {
		t.Fatal("sharing attached the debugger before the Runner consumed the offer")
	}

	ctx := context.Background()
	var offer localapi.BridgeOffer
	waitfor.Until(t, bridgeWait, "the offer", func() bool {
		d, err := r.Discover(ctx, struct{}{})
		if err != nil || !d.ExtensionBridge || len(d.Offers) != 1 {
			return false
		}
		offer = d.Offers[0]
		return true
	})
	pageOrigin := pageSrv.URL
	if offer.Origin != pageOrigin || offer.Title != "Checkout" {
		t.Fatalf("offer shows %q %q", offer.Origin, offer.Title)
	}
	if hidden := r.BridgeOffers([]string{"example.test"}, false); len(hidden) != 1 || hidden[0].Origin != "" || hidden[0].Title != "" {
		t.Fatalf("an offer outside the allowlist shows %+v", hidden)
	}
	if _, err := r.AttachOffer(ctx, localapi.AttachOfferRequest{Offer: offer.ID, Allow: []string{"example.test"}}); !fsm.IsCode(err, fsm.OriginDenied) {
		t.Fatalf("attach under an allowlist without the tab's origin: %v", err)
	} else if u, _ := url.Parse(pageOrigin); strings.Contains(err.Error(), u.Host) || strings.Contains(err.Error(), u.Port()) || strings.Contains(err.Error(), "checkout") {
		t.Fatalf("a refused offer names the tab's origin or path to a caller whose allowlist does not cover it: %v", err)
	}
	att, err := r.AttachOffer(ctx, localapi.AttachOfferRequest{Offer: offer.ID, Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatalf("attach --offer: %v", err)
	}
	if _, err := r.AttachOffer(ctx, localapi.AttachOfferRequest{Offer: offer.ID, Allow: []string{"127.0.0.1"}}); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("the same offer attached twice: %v", err)
	}
	if att.Browser.Mode != localapi.ModeAttached || att.Browser.Via != ViaExtension {
		t.Fatalf("attached browser %+v", att.Browser)
	}
	if got := eb.Popup("status", tab)["state"]; got != "attached" {
		t.Fatalf("popup says %v after attach", got)
	}
	if !eb.DebuggerAttached(targetID) {
		t.Fatal("the debugger is not attached to the shared tab")
	}
	pages, err := r.Pages(ctx, localapi.BrowserRequest{Browser: att.Browser.ID})
	if err != nil || len(pages) != 1 || !strings.HasPrefix(pages[0].URL, pageSrv.URL) {
		t.Fatalf("pages = %+v, %v", pages, err)
	}
	page := pages[0].ID

	drive := func(name string) {
		t.Helper()
		snap, err := runOp(ctx, r, op.TakeSnapshot, op.SnapshotIn{OnPage: op.OnPage{Page: page}})
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if !strings.Contains(snap.Text, "Checkout") || !strings.Contains(snap.Text, "Pay") {
			t.Fatalf("snapshot lacks the page: %.400s", snap.Text)
		}
		if strings.Contains(snap.Text, "FRAME-SECRET") || strings.Contains(snap.Text, "Frame button") {
			t.Fatal("the snapshot reached into a frame of a denied origin")
		}
		if _, err := runAct(ctx, r, op.Fill, op.FillIn{OnPage: op.OnPage{Page: page}, Element: op.Element{Target: &localapi.Target{Label: "Name"}}, Text: name}); err != nil {
			t.Fatalf("fill: %v", err)
		}
		if _, err := runAct(ctx, r, op.Click, clickOn(page, localapi.Target{Role: "button", Name: "Pay"})); err != nil {
			t.Fatalf("click: %v", err)
		}
		read, err := runOp(ctx, r, op.ReadText, readIn(page))
		if err != nil || !strings.Contains(read.Text, "paid by "+name) {
			t.Fatalf("read after the click: %q, %v", read.Text, err)
		}
	}
	drive("Ada")

	// The person's tab is never closed through the share, and a window the
	// shared page opens is not shared: it is not listed as a page of the
	// attachment, so nothing can drive it.
	if _, err := r.ClosePage(ctx, localapi.ClosePageRequest{Page: page}); !fsm.IsCode(err, fsm.WrongTargetRefused) {
		t.Fatalf("close_page on the shared tab: %v", err)
	}
	if _, err := runAct(ctx, r, op.Click, clickOn(page, localapi.Target{Role: "button", Name: "Open a window"})); err != nil {
		t.Fatalf("click Open a window: %v", err)
	}
	if read, err := runOp(ctx, r, op.ReadText, readIn(page)); err != nil || !strings.Contains(read.Text, "window opened") {
		t.Fatalf("the shared page did not open its window: %q, %v", read.Text, err)
	}
	onlyShared := func(when string) {
		t.Helper()
		pages, err := r.Pages(ctx, localapi.BrowserRequest{Browser: att.Browser.ID})
		if err != nil || len(pages) != 1 || pages[0].ID != page {
			t.Fatalf("%s: pages = %+v, %v; want only the shared tab", when, pages, err)
		}
	}
	onlyShared("after the shared page opened a window")
	// new_page opens a tab of the share's own, and close_page closes that
	// one: the person's other tabs are never named, opened or closed.
	opened, err := r.Open(ctx, localapi.OpenRequest{Browser: att.Browser.ID, URL: pageSrv.URL + "/opened"})
	if err != nil {
		t.Fatalf("new_page through the share: %v", err)
	}
	if pages, err := r.Pages(ctx, localapi.BrowserRequest{Browser: att.Browser.ID}); err != nil || len(pages) != 2 {
		t.Fatalf("after new_page: pages = %+v, %v", pages, err)
	}
	if cl, err := r.ClosePage(ctx, localapi.ClosePageRequest{Page: opened.ID}); err != nil || !cl.Closed {
		t.Fatalf("close_page of the tab new_page opened: %+v, %v", cl, err)
	}
	onlyShared("after close_page of the opened tab")

	// The boundaries of any attached page hold for the shared tab.
	if _, err := r.CDP(ctx, localapi.CDPRequest{Page: page, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"document.cookie"}`)}); !fsm.IsCode(err, fsm.PolicyDenied) {
		t.Fatalf("raw CDP on the shared tab: %v", err)
	}
	if _, err := runOp(ctx, r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: page}, URL: frameURL + "/"}); !fsm.IsCode(err, fsm.OriginDenied) {
		t.Fatalf("navigating the shared tab off the allowlist: %v", err)
	}

	// A navigation replaces the document, not the share: the tab stays
	// attached, and the old document's refs are fenced by the surface.
	if nav, err := runOp(ctx, r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: page}, URL: pageSrv.URL + "/next"}); err != nil || !strings.HasSuffix(nav.URL, "/next") {
		t.Fatalf("navigating the shared tab within the allowlist: %+v, %v", nav, err)
	}
	if got := eb.Popup("status", tab)["state"]; got != "attached" {
		t.Fatalf("popup says %v after a navigation", got)
	}

	// Idle past the worker's idle stop: the open native port keeps it, and
	// the tab stays usable.
	time.Sleep(sharedIdle)
	drive("Grace")
	onlyShared("a minute after the shared page opened a window")

	// Revoke from the popup: consent ends, the debugger detaches, and the
	// Runner reports the browser lost with the fixed reason.
	if got := eb.Popup("revoke", tab); got["state"] != "not shared" {
		t.Fatalf("Revoke = %v", got)
	}
	var bi localapi.BrowserInfo
	waitfor.Until(t, bridgeWait, "the Runner to report the revoke", func() bool {
		st, _ := r.Status(ctx)
		for _, b := range st.Browsers {
			if b.ID == att.Browser.ID {
				bi = b
			}
		}
		return bi.State == "lost"
	})
	if bi.LostReason != "explicit_revoke" {
		t.Fatalf("lost with %q, want explicit_revoke", bi.LostReason)
	}
	if _, err := runOp(ctx, r, op.TakeSnapshot, op.SnapshotIn{OnPage: op.OnPage{Page: page}}); err == nil {
		t.Fatal("a revoked tab was still driven")
	}
	waitfor.Until(t, bridgeWait, "the debugger to leave the tab", func() bool { return !eb.DebuggerAttached(targetID) })

	// Share again: closing the browser on the Runner's side detaches the
	// debugger and never closes the person's tab.
	if got := eb.Popup("share", tab); got["state"] != "waiting for attach" {
		t.Fatalf("Share after revoke = %v", got)
	}
	var again localapi.BridgeOffer
	waitfor.Until(t, bridgeWait, "the new offer", func() bool {
		d, _ := r.Discover(ctx, struct{}{})
		if len(d.Offers) != 1 || d.Offers[0].ID == offer.ID {
			return false
		}
		again = d.Offers[0]
		return true
	})
	att2, err := r.AttachOffer(ctx, localapi.AttachOfferRequest{Offer: again.ID, Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatalf("attach after a new Share: %v", err)
	}
	cl, err := r.Close(ctx, localapi.BrowserRequest{Browser: att2.Browser.ID})
	if err != nil || cl.Teardown != "detached" {
		t.Fatalf("close = %+v, %v", cl, err)
	}
	waitfor.Until(t, bridgeWait, "the debugger to leave after close", func() bool { return !eb.DebuggerAttached(targetID) })
	if got := eb.Popup("status", tab)["state"]; got != "not shared" {
		t.Fatalf("popup says %v after the Runner closed its browser", got)
	}
	if !eb.TabExists(targetID) {
		t.Fatal("closing the browser closed the person's tab")
	}

	// Closing the Runner ends the native host; the extension says so.
	shutdown()
	waitfor.Until(t, bridgeWait, "the native host to exit", func() bool { return !chromiumtest.ProcessRunning(host) })
	waitfor.Until(t, bridgeWait, "the popup to show disconnected", func() bool { return eb.Popup("status", tab)["state"] == "disconnected" })

	// Nothing secret or locating reached the Runner's log.
	u, _ := url.Parse(pageSrv.URL)
	for _, secret := range []string{rec.Token, strconv.Itoa(rec.Port), pageSrv.URL, u.Host, "Checkout", state} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the Runner's log holds %q", secret)
		}
	}
}

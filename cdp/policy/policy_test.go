package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/findinpage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/fsm"
)

// modes are the (attached, allowEvaluate) combinations.
var modes = []struct {
	name                    string
	attached, allowEvaluate bool
}{
	{"owned", false, false},
	{"owned+evaluate", false, true},
	{"attached", true, false},
	{"attached+evaluate", true, true},
}

// wantRefused asserts Check refuses method with cdp_policy_denied and that
// the detail names the method and contains every fragment.
func wantRefused(t *testing.T, method string, attached, allowEvaluate bool, fragments ...string) {
	t.Helper()
	err := Check(method, attached, allowEvaluate)
	r, ok := fsm.AsRefusal(err)
	if !ok || r.Code != fsm.PolicyDenied {
		t.Errorf("Check(%q, %v, %v) = %v, want a %s refusal", method, attached, allowEvaluate, err, fsm.PolicyDenied)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(r.Detail, f) {
			t.Errorf("Check(%q) detail %q does not contain %q", method, r.Detail, f)
		}
	}
	if r.Next == "" {
		t.Errorf("Check(%q): refusal has no next step", method)
	}
}

func TestEmbeddedTable(t *testing.T) {
	t.Parallel()
	var doc struct {
		ProtocolVersion string            `json:"protocol_version"`
		Domains         []json.RawMessage `json:"domains"`
	}
	if err := json.Unmarshal(domainsJSON, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Domains) != 58 || !strings.Contains(doc.ProtocolVersion, "r1684464") {
		t.Errorf("embedded table: %d domains, version %q; want 58, r1684464", len(doc.Domains), doc.ProtocolVersion)
	}
	if got := len(Domains()); got != 58 {
		t.Errorf("Domains() has %d rules, want 58", got)
	}
	// The embedded copy must equal the design file it was copied from, when
	// the design tree is present (it is in this workspace, not in a module
	// download).
	if design, err := os.ReadFile("/work/shared/design/cdp_domains.json"); err == nil && !bytes.Equal(design, domainsJSON) {
		t.Error("cdp/policy/cdp_domains.json differs from /work/shared/design/cdp_domains.json; copy it again")
	}
}

func TestDomainClasses(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		class   Class
		allowed bool
	}{
		"Runtime":       {ClassPage, true},
		"DOM":           {ClassPageProfile, true},
		"Page":          {ClassPageProfile, true},
		"Network":       {ClassPageProfile, true},
		"Security":      {ClassPageProfile, true},
		"IO":            {ClassMeta, true},
		"Schema":        {ClassMeta, true},
		"Target":        {ClassBrowser, false},
		"Browser":       {ClassBrowser, false},
		"SystemInfo":    {ClassBrowser, false},
		"Storage":       {ClassBrowser, false},
		"Extensions":    {ClassBrowser, false},
		"Tracing":       {ClassBrowser, false},
		"Memory":        {ClassBrowser, false},
		"Cast":          {ClassBrowser, false},
		"PWA":           {ClassBrowser, false},
		"Fetch":         {ClassCrossOrigin, false},
		"IndexedDB":     {ClassCrossOrigin, false},
		"DOMStorage":    {ClassCrossOrigin, false},
		"CacheStorage":  {ClassCrossOrigin, false},
		"FileSystem":    {ClassCrossOrigin, false},
		"ServiceWorker": {ClassCrossOrigin, false},
	}
	rules := Domains()
	if !slices.IsSortedFunc(rules, func(a, b DomainRule) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Domains() is not sorted")
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Reason == "" {
			t.Errorf("domain %s has no reason", r.Name)
		}
		if seen[r.Name] {
			t.Errorf("domain %s listed twice", r.Name)
		}
		seen[r.Name] = true
		if w, ok := want[r.Name]; ok && (r.Class != w.class || r.Allowed != w.allowed) {
			t.Errorf("domain %s = %s allowed=%v, want %s allowed=%v", r.Name, r.Class, r.Allowed, w.class, w.allowed)
		}
		if r.Allowed != (r.Class == ClassPage || r.Class == ClassPageProfile || r.Class == ClassMeta) {
			t.Errorf("domain %s: class %s but allowed=%v", r.Name, r.Class, r.Allowed)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("domain %s missing from Domains()", name)
		}
	}
}

func TestWithheldDomainsAreRefused(t *testing.T) {
	t.Parallel()
	n := 0
	for _, d := range Domains() {
		if d.Allowed {
			continue
		}
		n++
		for _, m := range modes {
			wantRefused(t, d.Name+".enable", m.attached, m.allowEvaluate, d.Name+".enable", "withheld", d.Name+" domain")
		}
	}
	if n < 10 {
		t.Errorf("only %d withheld domains", n)
	}
	// The examples, by command.
	for _, method := range []string{
		"Target.createTarget", "Target.attachToTarget", "Target.getTargets", "Target.setAutoAttach",
		"Browser.close", "Browser.grantPermissions", "Browser.getVersion",
		"Storage.getCookies", "Storage.clearDataForOrigin", "SystemInfo.getInfo",
		"DOMStorage.getDOMStorageItems", "IndexedDB.requestData", "CacheStorage.requestCachedResponse",
		"Fetch.enable", "Fetch.continueRequest", "ServiceWorker.unregister", "Extensions.loadUnpacked",
	} {
		wantRefused(t, method, false, true, method, "withheld")
	}
}

func TestWithheldCommandsAreRefused(t *testing.T) {
	t.Parallel()
	rules := WithheldCommands()
	if !slices.IsSortedFunc(rules, func(a, b CommandRule) int { return strings.Compare(a.Method, b.Method) }) {
		t.Error("WithheldCommands() is not sorted")
	}
	for _, r := range rules {
		if r.Reason == "" {
			t.Errorf("%s has no reason", r.Method)
		}
		for _, m := range modes {
			wantRefused(t, r.Method, m.attached, m.allowEvaluate, r.Method, "withheld", r.Reason)
		}
	}
	// Every command the issue names is withheld, with the verb or boundary
	// that covers it in the reason.
	for method, fragment := range map[string]string{
		"Network.getAllCookies":               "cookie jar",
		"Network.getCookies":                  "cookie jar",
		"Network.setCookie":                   "cookie jar",
		"Network.setCookies":                  "cookie jar",
		"Network.deleteCookies":               "cookie jar",
		"Network.clearBrowserCookies":         "cookie jar",
		"Page.navigate":                       "navigate verb",
		"DOM.setFileInputFiles":               "upload verb",
		"Page.setDownloadBehavior":            "downloads",
		"Browser.setDownloadBehavior":         "downloads",
		"Runtime.addBinding":                  "prompt-injection",
		"Target.exposeDevToolsProtocol":       "CDP to the browser",
		"Network.loadNetworkResource":         "other origins",
		"Network.getResponseBody":             "same-origin policy",
		"Page.navigateToHistoryEntry":         "navigate verb",
		"Security.setIgnoreCertificateErrors": "TLS",
	} {
		wantRefused(t, method, false, true, method, fragment)
	}
}

func TestPageCommandsPass(t *testing.T) {
	t.Parallel()
	for _, method := range []string{
		runtime.CommandEvaluate, dom.CommandGetDocument, page.CommandCaptureScreenshot,
		"Runtime.callFunctionOn", "DOM.querySelector", "Input.dispatchMouseEvent", "Input.insertText",
		"Network.enable", "Network.setExtraHTTPHeaders", "Page.reload", "Page.printToPDF", "Emulation.setDeviceMetricsOverride",
		"Accessibility.getFullAXTree", "CSS.getComputedStyleForNode", "Debugger.enable", "IO.read", "Schema.getDomains",
		"Security.enable", "Log.enable", "Overlay.highlightNode",
	} {
		for _, m := range []struct{ attached, allow bool }{{false, false}, {false, true}, {true, true}} {
			if err := Check(method, m.attached, m.allow); err != nil {
				t.Errorf("Check(%q, attached=%v, allowEvaluate=%v) = %v, want nil", method, m.attached, m.allow, err)
			}
		}
	}
}

func TestAttachedWithoutEvaluate(t *testing.T) {
	t.Parallel()
	for _, method := range []string{runtime.CommandEvaluate, "Runtime.callFunctionOn", dom.CommandGetDocument, page.CommandCaptureScreenshot} {
		wantRefused(t, method, true, false, method, "attached", "evaluate")
		if err := Check(method, true, true); err != nil {
			t.Errorf("Check(%q, attached, allowEvaluate) = %v, want nil", method, err)
		}
	}
	// A withheld command keeps its own reason in every mode.
	wantRefused(t, "Page.navigate", true, false, "navigate verb")

	if err := CheckEvaluate(false, false); err != nil {
		t.Errorf("CheckEvaluate(owned) = %v", err)
	}
	if err := CheckEvaluate(true, true); err != nil {
		t.Errorf("CheckEvaluate(attached, allowed) = %v", err)
	}
	err := CheckEvaluate(true, false)
	if !fsm.IsCode(err, fsm.PolicyDenied) || !strings.Contains(err.Error(), "attached") {
		t.Errorf("CheckEvaluate(attached, not allowed) = %v, want a %s refusal", err, fsm.PolicyDenied)
	}
}

func TestUnknownDomainIsRefused(t *testing.T) {
	t.Parallel()
	// FindInPage is in cdproto v0.159.3 but was not in the reviewed protocol.
	for _, method := range []string{"Foo.bar", findinpage.CommandFindFirst, "WebGPU.enable", "Dom.getDocument"} {
		for _, m := range modes {
			wantRefused(t, method, m.attached, m.allowEvaluate, method, "not on the reviewed list")
		}
	}
}

func TestMalformedMethodsAreRefused(t *testing.T) {
	t.Parallel()
	long := "Runtime." + strings.Repeat("a", 200)
	for _, method := range []string{
		"", ".", "Runtime", "Runtime.", ".evaluate", "runtime.evaluate", "Runtime.Evaluate",
		"Runtime.evaluate ", " Runtime.evaluate", "Runtime..evaluate", "Runtime.evaluate.x",
		"Run time.evaluate", "Runtime.eval\x00", "Runtime.eval\nDOM.getDocument", "Runtime/evaluate",
		"Rüntime.evaluate", "Target.createTarget?x", "1Runtime.evaluate", long,
	} {
		for _, m := range modes {
			wantRefused(t, method, m.attached, m.allowEvaluate, "not a CDP method name")
		}
	}
	err := Check(long, false, false)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("refusal for a long name is %d bytes, want it bounded", len(err.Error()))
	}
	if err := Check("Runtime.eval\nx", false, false); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal echoes a raw newline: %q", err)
	}
}

// TestEveryFlaggedCommandIsReviewed checks that each command
// cdp_domains.json flags inside an allowed domain is either withheld or
// reviewed and allowed, never both and never neither.
func TestEveryFlaggedCommandIsReviewed(t *testing.T) {
	t.Parallel()
	var doc struct {
		Domains []struct {
			Domain    string `json:"domain"`
			Sensitive []struct {
				Command string `json:"command"`
			} `json:"sensitive_commands"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(domainsJSON, &doc); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, d := range Domains() {
		allowed[d.Name] = d.Allowed
	}
	flagged := map[string]bool{}
	for _, d := range doc.Domains {
		for _, c := range d.Sensitive {
			flagged[c.Command] = true
			if !allowed[d.Domain] {
				continue
			}
			_, w := withheld[c.Command]
			_, r := reviewed[c.Command]
			if w == r {
				t.Errorf("%s: withheld=%v reviewed=%v; want exactly one", c.Command, w, r)
			}
		}
	}
	// Rules outside the JSON's flagged list must name commands cdproto
	// knows, or ones Chrome still serves though the protocol dropped them.
	known := map[string]bool{
		network.CommandDeleteDeviceBoundSession: true,
		network.CommandSearchInResponseBody:     true,
		network.CommandStreamResourceContent:    true,
		page.CommandSearchInResource:            true,
		page.CommandStartScreenRecording:        true,
		// Deprecated request interception, still served by Chromium.
		"Network.setRequestInterception":                  true,
		"Network.continueInterceptedRequest":              true,
		"Network.getResponseBodyForInterception":          true,
		"Network.takeResponseBodyForInterceptionAsStream": true,
	}
	for _, rules := range [][]CommandRule{WithheldCommands(), ReviewedCommands()} {
		for _, r := range rules {
			domain, _, _ := strings.Cut(r.Method, ".")
			if _, ok := allowed[domain]; !ok {
				t.Errorf("%s: domain %s is not in the reviewed list", r.Method, domain)
			}
			if !flagged[r.Method] && !known[r.Method] {
				t.Errorf("%s is neither flagged in cdp_domains.json nor a known cdproto command (typo?)", r.Method)
			}
			if !methodPattern.MatchString(r.Method) {
				t.Errorf("%s is not a well-formed method name", r.Method)
			}
		}
	}
	for _, r := range ReviewedCommands() {
		if err := Check(r.Method, false, false); err != nil {
			t.Errorf("reviewed-allowed %s is refused for an owned browser: %v", r.Method, err)
		}
	}
}

package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

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

var tiers = []Tier{OpenWeb, Allowlisted}

// wantRefused asserts Check refuses method with cdp_policy_denied and that
// the detail names the method and contains every fragment.
func wantRefused(t *testing.T, method string, tier Tier, attached, allowEvaluate bool, fragments ...string) {
	t.Helper()
	err := Check(method, tier, attached, allowEvaluate)
	r, ok := fsm.AsRefusal(err)
	if !ok || r.Code != fsm.PolicyDenied {
		t.Errorf("Check(%q, %s, %v, %v) = %v, want a %s refusal", method, tier, attached, allowEvaluate, err, fsm.PolicyDenied)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(r.Detail, f) {
			t.Errorf("Check(%q, %s) detail %q does not contain %q", method, tier, r.Detail, f)
		}
	}
	if r.Next == "" {
		t.Errorf("Check(%q): refusal has no next step", method)
	}
}

// TestEveryCdprotoCommandIsInTheTableOrRefused walks every command the
// cdproto module knows: each is either in the table (and passes at the tiers
// it is allowed at, and is refused at the others) or refused at every tier
// and in every mode.
func TestEveryCdprotoCommandIsInTheTableOrRefused(t *testing.T) {
	t.Parallel()
	proto := cdprotoCommands(t)
	inTable, refused, allowlisted := 0, 0, 0
	for method := range proto {
		c, ok := commands[method]
		if !ok {
			refused++
			for _, tier := range tiers {
				for _, m := range modes {
					wantRefused(t, method, tier, m.attached, m.allowEvaluate, method)
				}
			}
			continue
		}
		inTable++
		if err := Check(method, OpenWeb, false, false); err != nil {
			t.Errorf("%s is in the table but refused on the open web: %v", method, err)
		}
		if c.Allowlisted != nil {
			allowlisted++
			for _, m := range modes {
				err := Check(method, Allowlisted, m.attached, m.allowEvaluate)
				if want := m.attached && !m.allowEvaluate; fsm.IsCode(err, fsm.PolicyDenied) != want {
					t.Errorf("Check(%s, allowlist, %s) = %v, refused want %v", method, m.name, err, want)
				}
			}
		} else {
			wantRefused(t, method, Allowlisted, false, true, method, "while an allowlist is in force", c.Withheld)
		}
	}
	if inTable != len(commands) {
		t.Errorf("the table has %d commands, %d of them known to cdproto", len(commands), inTable)
	}
	t.Logf("cdproto knows %d commands: %d in the table (%d under an allowlist), %d refused", len(proto), inTable, allowlisted, refused)
}

// TestTableNamesOnlyWhatCdprotoKnows: every method and parameter of the
// table is one cdproto generates (no typo passes as a rule), and a
// parameter that may only be false is a boolean.
func TestTableNamesOnlyWhatCdprotoKnows(t *testing.T) {
	t.Parallel()
	proto := cdprotoCommands(t)
	for _, c := range Commands() {
		pc, ok := proto[c.Method]
		if !ok {
			t.Errorf("%s is in the table but cdproto does not know it", c.Method)
			continue
		}
		forms := []*Form{&c.Open}
		if c.Allowlisted != nil {
			forms = append(forms, c.Allowlisted)
		}
		for _, f := range forms {
			if f.Reason == "" {
				t.Errorf("%s has no reason", c.Method)
			}
			for _, p := range f.Params {
				typ, ok := pc.params[p.Name]
				if !ok {
					t.Errorf("%s: cdproto knows no parameter %q", c.Method, p.Name)
				}
				if p.OnlyFalse && typ != "*bool" && typ != "bool" {
					t.Errorf("%s: %s may only be false but is a %s", c.Method, p.Name, typ)
				}
			}
		}
		if c.Allowlisted == nil && c.Withheld == "" {
			t.Errorf("%s: withheld under an allowlist without a reason", c.Method)
		}
		if _, ok := withheld[c.Method]; ok {
			t.Errorf("%s is both in the table and refused by name", c.Method)
		}
	}
	if !slices.IsSortedFunc(Commands(), func(a, b Command) int { return strings.Compare(a.Method, b.Method) }) {
		t.Error("Commands() is not sorted")
	}
}

// TestNoCommandReachesAnotherWorld: no entry, at any tier, takes a
// parameter that names an execution context or a frame, or lets a piercing
// walk or the command-line API through; editing commands (a paste reads
// the system clipboard) are not passed with key events.
func TestNoCommandReachesAnotherWorld(t *testing.T) {
	t.Parallel()
	never := map[string]bool{"contextId": true, "uniqueContextId": true, "executionContextId": true, "frameId": true, "executionContextName": true, "uniqueIds": true, "grantUniveralAccess": true, "worldName": true, "commands": true}
	onlyFalse := map[string]bool{"pierce": true, "includeCommandLineAPI": true}
	for _, c := range Commands() {
		for _, p := range c.Open.Params {
			if never[p.Name] {
				t.Errorf("%s takes %s", c.Method, p.Name)
			}
			if onlyFalse[p.Name] && !p.OnlyFalse {
				t.Errorf("%s takes %s as true", c.Method, p.Name)
			}
		}
	}
}

// idParam matches the parameters that carry an id the inspector hands out
// (nodes, objects, scripts, style sheets, searches, requests, streams, …).
var idParam = regexp.MustCompile(`(?i)(nodeid|nodeids|objectid|contextid|frameid|searchid|scriptid|stylesheetid|requestid|handle|snapshotid|layerid|animationid|animations|breakpointid|callframeid|streamid|stacktraceid|identifier|id)$`)

// TestAllowlistTierTakesNoIDs: under an allowlist no command takes an id
// the inspector hands out, and every class the issue names is withheld.
func TestAllowlistTierTakesNoIDs(t *testing.T) {
	t.Parallel()
	proto := cdprotoCommands(t)
	for _, c := range Commands() {
		if c.Allowlisted == nil {
			continue
		}
		for _, p := range c.Allowlisted.Params {
			if idParam.MatchString(p.Name) {
				t.Errorf("under an allowlist %s takes the id parameter %s", c.Method, p.Name)
			}
			if p.Name == "userGesture" || p.Name == "generatePreview" || p.Name == "serializationOptions" || p.Name == "scriptToEvaluateOnLoad" {
				if !p.OnlyFalse {
					t.Errorf("under an allowlist %s takes %s", c.Method, p.Name)
				}
			}
		}
	}
	// Whole domains that an allowlist withholds: ids, input, serialization,
	// emulation state, the heap, the debugger.
	for method := range proto {
		domain, _, _ := strings.Cut(method, ".")
		switch domain {
		case "DOM", "DOMSnapshot", "DOMDebugger", "CSS", "Accessibility", "Input", "Emulation", "HeapProfiler", "Debugger", "Overlay", "Animation", "LayerTree", "DeviceOrientation", "Network", "IO", "WebAuthn":
			wantRefused(t, method, Allowlisted, false, true, method)
		}
	}
	for _, method := range []string{
		"Page.addScriptToEvaluateOnNewDocument", "Page.addScriptToEvaluateOnLoad", "Page.captureSnapshot", "Page.printToPDF",
		"Page.getNavigationHistory", "Page.captureScreenshot", "Page.handleJavaScriptDialog", "Page.close", "Page.bringToFront",
		"Network.setExtraHTTPHeaders", "Network.setCacheDisabled", "Network.setBlockedURLs", "Network.setBypassServiceWorker",
		"Emulation.setUserAgentOverride", "Emulation.setDeviceMetricsOverride", "Runtime.queryObjects", "Runtime.getProperties",
		"Runtime.callFunctionOn", "Runtime.releaseObject", "Runtime.awaitPromise", "Runtime.addBinding", "Runtime.runScript",
		"Runtime.compileScript", "Runtime.getHeapUsage", "Debugger.enable", "Debugger.setBreakpointByUrl", "Debugger.setBreakpoint",
		"Debugger.setScriptSource", "Debugger.evaluateOnCallFrame", "HeapProfiler.takeHeapSnapshot", "DOM.getDocument", "DOM.resolveNode",
		"DOMSnapshot.captureSnapshot", "Input.dispatchKeyEvent", "Input.dispatchMouseEvent", "Input.insertText",
	} {
		wantRefused(t, method, Allowlisted, false, true, method)
	}
	// The commands that stay, with the values that make them safe.
	for _, c := range []struct {
		method, params string
		ok             bool
	}{
		{"Runtime.evaluate", `{"expression":"1","returnByValue":true,"awaitPromise":true}`, true},
		{"Runtime.evaluate", `{"expression":"1","userGesture":false,"includeCommandLineAPI":false}`, true},
		{"Runtime.evaluate", `{"expression":"1","userGesture":true}`, false},
		{"Runtime.evaluate", `{"expression":"1","generatePreview":true}`, false},
		{"Runtime.evaluate", `{"expression":"1","returnByValue":false}`, false},
		{"Runtime.evaluate", `{"expression":"1","returnByValue":"true"}`, false},
		{"Runtime.evaluate", `{"expression":"1","serializationOptions":{"serialization":"deep"}}`, false},
		{"Runtime.evaluate", `{"expression":"1","contextId":1}`, false},
		{"Runtime.evaluate", `{"expression":"1","uniqueContextId":"x"}`, false},
		{"Page.reload", `{"ignoreCache":true}`, true},
		{"Page.reload", `{"scriptToEvaluateOnLoad":"x"}`, false},
		{"Page.stopLoading", `{}`, true},
		{"Page.getLayoutMetrics", ``, true},
		{"Runtime.releaseObjectGroup", `{"objectGroup":"g"}`, true},
	} {
		if err := Check(c.method, Allowlisted, false, false); err != nil {
			t.Errorf("Check(%s, allowlist) = %v", c.method, err)
			continue
		}
		err := CheckParams(c.method, Allowlisted, []byte(c.params))
		if c.ok != (err == nil) || (!c.ok && !fsm.IsCode(err, fsm.PolicyDenied)) {
			t.Errorf("CheckParams(%s, allowlist, %s) = %v, ok want %v", c.method, c.params, err, c.ok)
		}
	}
}

// TestRawEvaluateByValueUnderAnAllowlist: under an allowlist a
// Runtime.evaluate without returnByValue is sent with it true (and one with
// it false never passes CheckParams); the answer keeps no object id or
// preview, and a thrown object is its description. The open web is left as
// it is. (The same through real Chromium: the runner's
// TestRawEvaluateUnderAnAllowlistIsByValueOnly.)
func TestRawEvaluateByValueUnderAnAllowlist(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `null`, `{"expression":"window"}`, `{"expression":"window","awaitPromise":true}`} {
		out := WithForced("Runtime.evaluate", Allowlisted, []byte(in))
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil || m["returnByValue"] != true {
			t.Errorf("WithForced(%s) = %s: returnByValue is not true", in, out)
		}
		if in != "" && in != "null" && m["expression"] != "window" {
			t.Errorf("WithForced(%s) = %s: lost the expression", in, out)
		}
		if got := WithForced("Runtime.evaluate", OpenWeb, []byte(in)); string(got) != in {
			t.Errorf("WithForced(open web, %s) = %s", in, got)
		}
	}
	if got := WithForced("Page.reload", Allowlisted, []byte(`{}`)); string(got) != `{}` {
		t.Errorf("WithForced(Page.reload) = %s", got)
	}
	handles := `{"result":{"type":"object","className":"Window","description":"Window","objectId":"1.2.3","preview":{"properties":[{"name":"secret"}]},"customPreview":{},"deepSerializedValue":{}},` +
		`"exceptionDetails":{"exceptionId":1,"text":"Uncaught","exception":{"type":"object","subtype":"error","className":"Error","description":"Error: boom\n    at <anonymous>:1:7","objectId":"4.5.6","preview":{"properties":[]}}}}`
	out, err := ScrubResult("Runtime.evaluate", Allowlisted, []byte(handles))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"objectId", "preview", "customPreview", "deepSerializedValue", "1.2.3", "4.5.6", "secret"} {
		if strings.Contains(string(out), leak) {
			t.Errorf("the scrubbed answer holds %q: %s", leak, out)
		}
	}
	var got struct {
		Result           map[string]any `json:"result"`
		ExceptionDetails struct {
			Text      string         `json:"text"`
			Exception map[string]any `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Result["className"] != "Window" || got.ExceptionDetails.Text != "Uncaught" {
		t.Errorf("the scrub dropped what is by value: %s", out)
	}
	if e := got.ExceptionDetails.Exception; e["type"] != "string" || !strings.HasPrefix(e["value"].(string), "Error: boom") || len(e) != 2 {
		t.Errorf("the thrown object is not its description: %v", e)
	}
	// A thrown primitive stays as it was thrown.
	out, _ = ScrubResult("Runtime.evaluate", Allowlisted, []byte(`{"result":{"type":"number","value":1},"exceptionDetails":{"exception":{"type":"number","value":7,"description":"7"}}}`))
	if !strings.Contains(string(out), `"value":7`) || !strings.Contains(string(out), `"type":"number"`) {
		t.Errorf("a thrown number became %s", out)
	}
	if _, err := ScrubResult("Runtime.evaluate", Allowlisted, []byte(`[1]`)); err == nil {
		t.Error("an answer that is not an object was not refused")
	}
	if out, _ := ScrubResult("Runtime.evaluate", OpenWeb, []byte(handles)); string(out) != handles {
		t.Error("the open web's answer was changed")
	}
}

// TestCheckParams: unknown parameters and dangerous values are refused at
// the tier that withholds them, and never echoed.
func TestCheckParams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, params string
		tier           Tier
		want           fsm.Code // "" = passes
	}{
		{"Runtime.evaluate", `{"expression":"1"}`, OpenWeb, ""},
		{"Runtime.evaluate", ``, OpenWeb, ""},
		{"Runtime.evaluate", `null`, OpenWeb, ""},
		{"Runtime.evaluate", ` {"expression":"1"} `, OpenWeb, ""},
		{"Runtime.evaluate", `{"expression":"1","contextId":7}`, OpenWeb, fsm.PolicyDenied},
		{"Runtime.evaluate", `{"expression":"1","uniqueContextId":"x"}`, OpenWeb, fsm.PolicyDenied},
		{"Runtime.evaluate", `{"expression":"1","includeCommandLineAPI":true}`, OpenWeb, fsm.PolicyDenied},
		{"Runtime.evaluate", `{"expression":"1","includeCommandLineAPI":"true"}`, OpenWeb, fsm.PolicyDenied},
		{"Runtime.evaluate", `{"expression":"1","includeCommandLineAPI":false}`, OpenWeb, ""},
		{"Runtime.evaluate", `{"expression":"1","userGesture":true,"generatePreview":true}`, OpenWeb, ""},
		{"Runtime.evaluate", `{"expression":"1","somethingNew":1}`, OpenWeb, fsm.PolicyDenied},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"f","executionContextId":3}`, OpenWeb, fsm.PolicyDenied},
		{"DOM.getDocument", `{"depth":-1}`, OpenWeb, ""},
		{"DOM.getDocument", `{"depth":-1,"pierce":true}`, OpenWeb, fsm.PolicyDenied},
		{"DOM.getDocument", `{"pierce":false}`, OpenWeb, ""},
		{"DOM.describeNode", `{"nodeId":1,"pierce":true}`, OpenWeb, fsm.PolicyDenied},
		{"DOM.resolveNode", `{"nodeId":1,"executionContextId":2}`, OpenWeb, fsm.PolicyDenied},
		{"Accessibility.getFullAXTree", `{"frameId":"F"}`, OpenWeb, fsm.PolicyDenied},
		{"Input.dispatchKeyEvent", `{"type":"keyDown","commands":["paste"]}`, OpenWeb, fsm.PolicyDenied},
		{"Input.dispatchKeyEvent", `{"type":"keyDown","key":"a"}`, OpenWeb, ""},
		{"Page.reload", `{"scriptToEvaluateOnLoad":"x"}`, OpenWeb, ""},
		{"Page.addScriptToEvaluateOnNewDocument", `{"source":"x","worldName":"w"}`, OpenWeb, fsm.PolicyDenied},
		{"Page.addScriptToEvaluateOnNewDocument", `{"source":"x"}`, Allowlisted, fsm.PolicyDenied},
		{"Page.captureScreenshot", `{}`, OpenWeb, ""},
		{"Page.captureScreenshot", `{}`, Allowlisted, fsm.PolicyDenied},
		{"Page.navigate", `{"url":"x"}`, OpenWeb, fsm.PolicyDenied},
		// Not an object, or not JSON: invalid before any policy question.
		{"Runtime.evaluate", `[1]`, OpenWeb, fsm.InvalidArgument},
		{"Runtime.evaluate", `"x"`, OpenWeb, fsm.InvalidArgument},
		{"Runtime.evaluate", `{"expression":}`, OpenWeb, fsm.InvalidArgument},
		{"Runtime.evaluate", `{"expression":"1"} {}`, OpenWeb, fsm.InvalidArgument},
	}
	for _, c := range cases {
		err := CheckParams(c.method, c.tier, []byte(c.params))
		if c.want == "" && err != nil || c.want != "" && !fsm.IsCode(err, c.want) {
			t.Errorf("CheckParams(%s, %s, %s) = %v, want %q", c.method, c.tier, c.params, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), `"x"`) {
			t.Errorf("CheckParams(%s, %s) echoes a value: %v", c.method, c.params, err)
		}
	}
}

// TestDuplicateKeysAreInvalid: a key twice in any object of the params, at
// any depth and however it is escaped, is invalid_argument, before the
// method or tier is looked at.
func TestDuplicateKeysAreInvalid(t *testing.T) {
	t.Parallel()
	dup := []string{
		`{"expression":"1","expression":"2"}`,
		`{"expression":"1","returnByValue":true,"returnByValue":false}`,
		`{"expression":"1","\u0065xpression":"2"}`,
		`{"serializationOptions":{"serialization":"json","serialization":"deep"},"expression":"1"}`,
		`{"expression":"1","arguments":[{"value":1},{"value":2,"value":3}]}`,
		`{"a":{"b":{"c":[[{"d":1,"d":1}]]}}}`,
	}
	for _, p := range dup {
		for _, tier := range tiers {
			err := CheckParams("Runtime.evaluate", tier, []byte(p))
			if !fsm.IsCode(err, fsm.InvalidArgument) || !strings.Contains(err.Error(), "twice") {
				t.Errorf("CheckParams(%s, %s) = %v, want invalid_argument for a duplicate key", p, tier, err)
			}
		}
	}
	for _, p := range []string{
		`{"expression":"1","arguments":[{"value":1},{"value":2}]}`,
		`{"expression":"{\"a\":1,\"a\":2}"}`,
		`{"expression":"1","serializationOptions":{"serialization":"json"},"objectGroup":"serialization"}`,
		`{"expression":"1","returnByValue":true}`,
		`{"expression":"1","arguments":[],"objectGroup":"arguments"}`,
	} {
		if key, dup := duplicateKey([]byte(p)); dup {
			t.Errorf("duplicateKey(%s) = %q, want none", p, key)
		}
	}
}

func TestAttachedWithoutEvaluate(t *testing.T) {
	t.Parallel()
	for _, tier := range tiers {
		wantRefused(t, "Runtime.evaluate", tier, true, false, "attached", "evaluate")
		if err := Check("Runtime.evaluate", tier, true, true); err != nil {
			t.Errorf("Check(Runtime.evaluate, %s, attached, allowEvaluate) = %v", tier, err)
		}
	}
	// A command refused by name keeps its own reason in every mode.
	wantRefused(t, "Page.navigate", Allowlisted, true, false, "navigate verb")

	if err := CheckEvaluate(false, false); err != nil {
		t.Errorf("CheckEvaluate(owned) = %v", err)
	}
	if err := CheckEvaluate(true, true); err != nil {
		t.Errorf("CheckEvaluate(attached, allowed) = %v", err)
	}
	if err := CheckEvaluate(true, false); !fsm.IsCode(err, fsm.PolicyDenied) {
		t.Errorf("CheckEvaluate(attached, not allowed) = %v, want a %s refusal", err, fsm.PolicyDenied)
	}
}

// TestRefusedByName: every command refused by name is refused, with its
// reason, at every tier; among them the deprecated ones Chrome 156 still
// serves though cdproto dropped them.
func TestRefusedByName(t *testing.T) {
	t.Parallel()
	for _, r := range WithheldCommands() {
		if r.Reason == "" {
			t.Errorf("%s has no reason", r.Method)
		}
		for _, tier := range tiers {
			for _, m := range modes {
				wantRefused(t, r.Method, tier, m.attached, m.allowEvaluate, r.Method, r.Reason)
			}
		}
	}
	// Served by Chromium 156, unknown to cdproto v0.159.3.
	for _, method := range []string{
		"Page.addScriptToEvaluateOnLoad", "Page.removeScriptToEvaluateOnLoad", "Network.getAllCookies", "Debugger.setScriptSource",
		"Page.setDownloadBehavior", "Page.deleteCookie", "Page.setDeviceMetricsOverride", "Page.setGeolocationOverride",
		"Network.setUserAgentOverride", "Network.emulateNetworkConditions", "DOM.getFlattenedDocument", "DOMSnapshot.getSnapshot",
		"IO.resolveBlob", "Schema.getDomains", "Target.sendMessageToTarget", "Security.setOverrideCertificateErrors",
		"Console.enable", "Storage.getStorageKeyForFrame", "Browser.grantPermissions", "Emulation.setNavigatorOverrides",
	} {
		for _, tier := range tiers {
			wantRefused(t, method, tier, false, true, method)
		}
	}
}

func TestWithheldDomainsAreRefused(t *testing.T) {
	t.Parallel()
	n := 0
	for _, d := range Domains() {
		if d.Reason == "" {
			t.Errorf("domain %s has no reason", d.Name)
		}
		if d.Allowed {
			continue
		}
		n++
		for _, tier := range tiers {
			wantRefused(t, d.Name+".enable", tier, false, true, d.Name+".enable", d.Reason)
		}
	}
	if n < 16 {
		t.Errorf("only %d domains are refused whole", n)
	}
	for _, method := range []string{
		"Target.createTarget", "Target.attachToTarget", "Target.getTargets", "Target.setAutoAttach",
		"Browser.close", "Browser.grantPermissions", "Browser.getVersion",
		"Storage.getCookies", "Storage.clearDataForOrigin", "SystemInfo.getInfo",
		"DOMStorage.getDOMStorageItems", "IndexedDB.requestData", "CacheStorage.requestCachedResponse",
		"Fetch.enable", "Fetch.continueRequest", "ServiceWorker.unregister", "Extensions.loadUnpacked",
		"FindInPage.findFirst", "Foo.bar", "WebGPU.enable",
	} {
		wantRefused(t, method, OpenWeb, false, true, method)
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
			wantRefused(t, method, OpenWeb, m.attached, m.allowEvaluate, "not a CDP method name")
		}
	}
	err := Check(long, OpenWeb, false, false)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("refusal for a long name is %d bytes, want it bounded", len(err.Error()))
	}
	if err := Check("Runtime.eval\nx", OpenWeb, false, false); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal echoes a raw newline: %q", err)
	}
}

func TestEmbeddedDomains(t *testing.T) {
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
	for _, d := range Domains() {
		if d.Allowed && (d.Class == ClassBrowser || d.Class == ClassCrossOrigin) {
			t.Errorf("domain %s is %s but has allowed commands", d.Name, d.Class)
		}
	}
}

// Package policy decides which Chrome DevTools Protocol commands an agent may
// send raw to a page: the CDP domain policy.
//
// Page-scoped domains act as the document and are bounded by the browser's
// own same-origin policy, so they pass. Browser-global domains (Target,
// Browser, Storage, SystemInfo, …) act as the browser and are withheld, as
// are domains parameterised by another origin (IndexedDB, DOMStorage, …). The
// list is an allowlist: a domain that is not on the reviewed list (one Chrome
// adds later, say) is refused until someone classifies it. Inside page
// domains a fixed set of commands is withheld because each steps around a
// boundary that has its own gated verb (navigate, upload) or reaches beyond
// the page (the cookie jar, response bodies of other origins, local files,
// TLS errors, a page-to-agent channel).
//
// Raw page CDP and evaluate are open for an owned browser and off for an
// attached one unless the owner turns evaluate on for that attachment.
//
// The domain list comes from cdp_domains.json, embedded from
// /work/shared/design/cdp_domains.json (devtools-protocol r1684464, 58 domains
// classified by scope; see SECURITY-REFERENCE.md, section A4). The package
// holds only data and pure functions and is safe for concurrent use.
package policy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// domainsJSON is a verbatim copy of /work/shared/design/cdp_domains.json
// (the webcodex security reference's classification of every CDP domain of
// devtools-protocol r1684464). Update both together.
//
//go:embed cdp_domains.json
var domainsJSON []byte

// Class is a domain's policy class.
type Class string

// The classes. Page, PageProfile and Meta domains pass (minus withheld
// commands); CrossOrigin and Browser domains are withheld.
const (
	ClassPage        Class = "page"         // acts as or on the attached document
	ClassPageProfile Class = "page+profile" // page domain with commands that reach profile-wide state, other origins or local files
	ClassMeta        Class = "meta"         // protocol plumbing: schema, stream handles
	ClassCrossOrigin Class = "cross-origin" // parameterised by origin or storage key: other origins' data
	ClassBrowser     Class = "browser"      // browser-wide: other tabs, the profile, extensions, the OS
)

// DomainRule is the policy for one CDP domain.
type DomainRule struct {
	Name    string `json:"name"`
	Class   Class  `json:"class"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
}

// CommandRule is the policy for one command inside a domain: withheld (by
// [WithheldCommands]) or reviewed and allowed (by [ReviewedCommands]).
type CommandRule struct {
	Method string `json:"method"`
	Reason string `json:"reason"`
}

// classReasons is the reason a domain of each class gets unless overridden.
var classReasons = map[Class]string{
	ClassPage:        "acts as the document, bounded by the browser's same-origin policy",
	ClassPageProfile: "acts as the document; its commands that reach profile-wide state, other origins or local files are withheld one by one",
	ClassMeta:        "protocol plumbing: the schema and stream handles this session created",
	ClassCrossOrigin: "parameterised by origin or storage key, so it reads or writes other origins' data; the page's own storage is reachable through evaluate",
	ClassBrowser:     "acts as the browser: other tabs, the profile, extensions, the OS or the browser process",
}

// domainOverrides reclassifies domains whose JSON scope is "page+profile" but
// whose every useful command reaches beyond the page.
var domainOverrides = map[string]DomainRule{
	"Storage": {Class: ClassBrowser, Reason: "profile-wide storage: every site's cookies, and clearing or measuring the data of any origin; the page's own storage is reachable through evaluate"},
	"Fetch":   {Class: ClassCrossOrigin, Reason: "request interception rewrites a request's URL unseen by the page (continueRequest url) and reads any response body, so the page could read other origins with the user's credentials"},
}

// Reasons shared by groups of withheld commands.
const (
	reasonCookies   = "the cookie jar: cookies of every site in the profile, not just the page's origin; no verb exposes cookies"
	reasonNavigate  = "navigation goes through the navigate verb, where the origin gate judges the destination"
	reasonDownload  = "chooses where downloads are written on disk; downloads are not a verb"
	reasonUpload    = "hands local files to the page; uploads go through the upload verb (owner-named directory)"
	reasonBodies    = "returns bodies of every response the page loaded, including cross-origin no-cors responses the same-origin policy hides from the page; read same-origin data through evaluate"
	reasonIntercept = "request interception rewrites a request's URL unseen by the page and reads any response body (as the Fetch domain does)"
	reasonTLS       = "TLS authenticates the origin the gate judges; ignoring certificate errors lets a network attacker be that origin"
)

// withheld lists the commands withheld inside allowed domains, plus the two
// the issue names inside withheld domains (kept here so they stay withheld if
// their domain is ever reclassified).
var withheld = map[string]string{
	"Network.getAllCookies":            reasonCookies,
	"Network.getCookies":               reasonCookies,
	"Network.setCookie":                reasonCookies,
	"Network.setCookies":               reasonCookies,
	"Network.deleteCookies":            reasonCookies,
	"Network.clearBrowserCookies":      reasonCookies,
	"Network.deleteDeviceBoundSession": "device-bound sessions of any site are profile state, like the cookie jar",
	"Network.clearBrowserCache":        "clears the cache of the whole profile, not the page's",
	"Network.loadNetworkResource":      "fetches any URL with the profile's credentials: reads other origins past the same-origin policy and the origin gate",

	"Network.getResponseBody":                         reasonBodies,
	"Network.searchInResponseBody":                    reasonBodies,
	"Network.streamResourceContent":                   reasonBodies,
	"Page.getResourceContent":                         reasonBodies,
	"Page.searchInResource":                           reasonBodies,
	"Network.setRequestInterception":                  reasonIntercept,
	"Network.continueInterceptedRequest":              reasonIntercept,
	"Network.getResponseBodyForInterception":          reasonIntercept,
	"Network.takeResponseBodyForInterceptionAsStream": reasonIntercept,

	"Page.navigate":                         reasonNavigate,
	"Page.navigateToHistoryEntry":           reasonNavigate + "; history can hold any origin the tab visited",
	"FedCm.openUrl":                         "opens a tab on a URL the origin gate has not judged",
	"Page.addScriptToEvaluateOnNewDocument": "keeps running in later documents of any origin, after the tab leaves the authorized one; evaluate is judged on the live URL each time",
	"Page.createIsolatedWorld":              "grantUniveralAccess lifts the same-origin policy for that world, and the policy does not inspect parameters",
	"Page.startScreenRecording":             "can record the whole browser window (other tabs and the address bar), beyond the page; use a screenshot",

	"Page.setDownloadBehavior":    reasonDownload,
	"Browser.setDownloadBehavior": reasonDownload,

	"DOM.setFileInputFiles":   reasonUpload,
	"Input.dispatchDragEvent": reasonUpload + " (its data.files drops local files; the policy does not inspect parameters)",
	"DOM.getFileInfo":         "returns local file-system paths",

	"Runtime.addBinding":            "installs a window function that sends page content straight to the agent, a prompt-injection channel; results come back through evaluate",
	"Target.exposeDevToolsProtocol": "gives page script a binding that speaks CDP to the browser, past everything this policy withholds",

	"Security.setIgnoreCertificateErrors":   reasonTLS,
	"Security.setOverrideCertificateErrors": reasonTLS,
	"Security.handleCertificateError":       reasonTLS,
}

// Reasons for reviewed commands that stay allowed.
const (
	reasonEval   = "script as the page; the evaluate switch governs it (off for an attached browser unless the owner turns it on)"
	reasonPage   = "acts on this page only, as its own script or the user could"
	reasonInput  = "input as the user at the keyboard and mouse, which click and type already are"
	reasonRender = "renders this page (what a screenshot shows)"
)

// reviewed lists the commands cdp_domains.json flags inside allowed domains
// that were reviewed and stay allowed, with why. Every flagged command of an
// allowed domain is either here or withheld (a test enforces it).
var reviewed = map[string]string{
	"Runtime.evaluate":              reasonEval,
	"Runtime.callFunctionOn":        reasonEval,
	"Runtime.compileScript":         reasonEval,
	"Runtime.runScript":             reasonEval,
	"Debugger.evaluateOnCallFrame":  reasonEval,
	"Runtime.queryObjects":          "enumerates the page's own heap objects, " + reasonPage,
	"Runtime.getProperties":         "reads the page's own objects, " + reasonPage,
	"Debugger.setReturnValue":       "changes the page's own program results, " + reasonPage,
	"Debugger.setBreakpointByUrl":   "breakpoints in scripts this page runs",
	"Debugger.getScriptSource":      "source of scripts this page runs",
	"HeapProfiler.takeHeapSnapshot": "the heap of this page's renderer; site isolation keeps other sites' documents in other processes",

	"Autofill.trigger":                            "fills a form in this page with data the caller supplies",
	"DOM.setOuterHTML":                            "rewrites this page's document, " + reasonPage,
	"DOMSnapshot.captureSnapshot":                 "this page's DOM and form values, which its script can read too",
	"DeviceAccess.selectPrompt":                   "answers this page's device prompt as the user would",
	"DigitalCredentials.setVirtualWalletBehavior": "a virtual wallet for this page",
	"Emulation.setUserAgentOverride":              "how this page sees its environment",
	"Emulation.setGeolocationOverride":            "how this page sees its environment",
	"Emulation.setAutomationOverride":             "how this page sees its environment",
	"Emulation.setScriptExecutionDisabled":        "how this page runs",
	"FedCm.selectAccount":                         "answers this page's FedCM dialog as the user would",
	"FedCm.clickDialogButton":                     "answers this page's FedCM dialog as the user would",
	"Input.dispatchKeyEvent":                      reasonInput,
	"Input.dispatchMouseEvent":                    reasonInput,
	"Input.insertText":                            reasonInput,
	"IO.read":                                     "reads a stream this session created",
	"IO.resolveBlob":                              "reads a blob of this page",
	"SmartCardEmulation.enable":                   "an emulated smart-card reader for this page",
	"WebAuthn.addVirtualAuthenticator":            "a virtual authenticator for this page",
	"WebAuthn.getCredentials":                     "credentials of a virtual authenticator the caller added",
	"WebAuthn.addCredential":                      "adds a credential to a virtual authenticator",
	"WebMCP.invokeTool":                           "calls a tool this page declares, as its own script could",

	"Network.replayXHR":              "repeats this page's own request",
	"Network.setExtraHTTPHeaders":    "headers on this page's requests",
	"Network.setBypassServiceWorker": "how this page's requests are served",

	"Page.reload":                        "reloads the URL the gate already judged",
	"Page.captureScreenshot":             reasonRender,
	"Page.captureSnapshot":               reasonRender,
	"Page.printToPDF":                    reasonRender,
	"Page.setInterceptFileChooserDialog": "only reports the file chooser; handing it files needs DOM.setFileInputFiles, which is withheld",
	"Page.handleJavaScriptDialog":        "answers this page's dialog as the user would",
	"Page.setBypassCSP":                  "disables this page's own CSP; script already runs through evaluate",
	"Page.close":                         "closes this tab, as the user can",
	"Page.crash":                         "crashes this tab's renderer",
}

// table is the parsed policy, built once from the embedded JSON.
var table = mustLoad(domainsJSON)

type policyTable struct {
	domains map[string]DomainRule
}

func mustLoad(b []byte) policyTable {
	var doc struct {
		Domains []struct {
			Domain string `json:"domain"`
			Scope  string `json:"scope"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(fmt.Sprintf("policy: embedded cdp_domains.json: %v", err))
	}
	t := policyTable{domains: map[string]DomainRule{}}
	for _, d := range doc.Domains {
		class := Class(d.Scope)
		reason, ok := classReasons[class]
		if !ok || d.Domain == "" {
			panic(fmt.Sprintf("policy: embedded cdp_domains.json: domain %q has unknown scope %q", d.Domain, d.Scope))
		}
		r := DomainRule{Name: d.Domain, Class: class, Reason: reason}
		if o, ok := domainOverrides[d.Domain]; ok {
			r.Class, r.Reason = o.Class, o.Reason
		}
		r.Allowed = r.Class == ClassPage || r.Class == ClassPageProfile || r.Class == ClassMeta
		t.domains[d.Domain] = r
	}
	return t
}

// methodPattern is the shape of a CDP method name: Domain.command.
var methodPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$`)

// maxMethodLen bounds method names; the longest real one is under 60 bytes.
const maxMethodLen = 100

// Check returns nil if method may be sent raw to a page, and otherwise a
// *fsm.Refusal with code fsm.PolicyDenied naming the method and the reason.
// attached says the browser is the owner's own; allowEvaluate says the owner
// turned evaluate (and raw page CDP) on for this attachment. Withheld domains
// and commands stay refused whatever the mode.
func Check(method string, attached bool, allowEvaluate bool) error {
	if len(method) > maxMethodLen || !methodPattern.MatchString(method) {
		return fsm.Refusef(fsm.PolicyDenied, "%s is not a CDP method name (want Domain.command)", quoteShort(method))
	}
	domain, _, _ := strings.Cut(method, ".")
	if reason, ok := withheld[method]; ok {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld: %s", method, reason)
	}
	d, ok := table.domains[domain]
	if !ok {
		return fsm.Refusef(fsm.PolicyDenied, "%s is refused: the %s domain is not on the reviewed list", method, domain)
	}
	if !d.Allowed {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld with the %s domain: %s", method, domain, d.Reason)
	}
	if attached && !allowEvaluate {
		return fsm.Refusef(fsm.PolicyDenied, "%s is refused: raw CDP is off for an attached browser unless the owner turns on evaluate for this attachment", method)
	}
	return nil
}

// CheckEvaluate returns nil if evaluate may run: always for an owned browser,
// and for an attached one only when the owner turned it on. Otherwise it
// returns a *fsm.Refusal with code fsm.PolicyDenied.
func CheckEvaluate(attached, allowEvaluate bool) error {
	if attached && !allowEvaluate {
		return fsm.Refuse(fsm.PolicyDenied, "evaluate is off for an attached browser unless the owner turns it on for this attachment")
	}
	return nil
}

// Domains returns every reviewed domain's rule, sorted by name.
func Domains() []DomainRule {
	out := make([]DomainRule, 0, len(table.domains))
	for _, d := range table.domains {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DomainRule) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// WithheldCommands returns the commands withheld by name, sorted by method.
// Commands of withheld domains are refused by their domain rule and are not
// listed, except Browser.setDownloadBehavior and Target.exposeDevToolsProtocol.
func WithheldCommands() []CommandRule { return sortedRules(withheld) }

// ReviewedCommands returns the commands cdp_domains.json flags inside allowed
// domains that were reviewed and stay allowed, with why, sorted by method.
func ReviewedCommands() []CommandRule { return sortedRules(reviewed) }

func sortedRules(m map[string]string) []CommandRule {
	out := make([]CommandRule, 0, len(m))
	for method, reason := range m {
		out = append(out, CommandRule{Method: method, Reason: reason})
	}
	slices.SortFunc(out, func(a, b CommandRule) int { return strings.Compare(a.Method, b.Method) })
	return out
}

// quoteShort quotes an untrusted method name for a refusal, truncated so a
// caller cannot make the detail arbitrarily long.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// Package policy decides which Chrome DevTools Protocol commands an agent may
// send raw to a page: a closed table of allowed commands, each with the
// parameters it may take.
//
// A command is allowed only if it is in the table (table.go); everything
// else is refused with fsm.PolicyDenied, including deprecated commands Chrome
// still serves and anything a later Chrome or cdproto adds. Each entry names
// the exact parameters the command may take: any other parameter is refused,
// and where a value is the danger (includeCommandLineAPI, pierce, …) only
// the safe value passes.
//
// The table has two tiers. On the open web (an owned browser with no
// allowlist) it is the whole table. Under an allowlist (a non-empty --allow,
// and every attached browser) only a small subset passes: nothing that takes
// or returns a DOM node, object, script or execution-context id (same-site
// frames of denied origins share the page's renderer, so such ids reach
// them), nothing that plants code for later documents, serializes the whole
// page, reveals history, sets state that outlives the origin, enumerates the
// heap, debugs, captures the screen or sends raw input. The frame-aware verbs
// are the way in there.
//
// Raw page CDP is off for an attached browser unless the owner turns evaluate
// on for that attachment. The package holds only data and pure functions and
// is safe for concurrent use.
//
// cdp_domains.json (embedded; devtools-protocol r1684464, 58 domains
// classified by scope, rendered in spec/cdp-policy.md) gives the reason a
// whole domain is refused.
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

// Tier is the strictness the table applies at.
type Tier string

const (
	// OpenWeb is an owned browser with no allowlist: every web origin is
	// allowed, so the whole table applies.
	OpenWeb Tier = "open_web"
	// Allowlisted is any allowlist: a non-empty --allow, and every attached
	// browser. Only the commands with an [Allowlisted] form pass.
	Allowlisted Tier = "allowlist"
)

// TierFor returns the tier of a browser whose origin gate is the open web
// (openWeb) or an allowlist.
func TierFor(openWeb bool) Tier {
	if openWeb {
		return OpenWeb
	}
	return Allowlisted
}

// Param is one parameter a command may take.
type Param struct {
	Name string `json:"name"`
	// OnlyFalse says the parameter may be sent only as false (or left out):
	// its true is the danger.
	OnlyFalse bool `json:"onlyFalse,omitempty"`
	// OnlyTrue says the parameter may be sent only as true, and is sent as
	// true when left out ([WithForced]): its false is the danger.
	OnlyTrue bool `json:"onlyTrue,omitempty"`
}

// Form is a command as one tier allows it.
type Form struct {
	Reason string  `json:"reason"`
	Params []Param `json:"params"`
}

// Command is one allowed command of the table.
type Command struct {
	Method string `json:"method"`
	// Open is the command on the open web.
	Open Form `json:"open"`
	// Allowlisted is the command under an allowlist; nil when an allowlist
	// withholds it, for Withheld's reason.
	Allowlisted *Form  `json:"allowlisted,omitempty"`
	Withheld    string `json:"withheld,omitempty"`
}

// Form returns the command as tier allows it, or nil and why it is withheld.
func (c *Command) Form(tier Tier) (*Form, string) {
	if tier == OpenWeb {
		return &c.Open, ""
	}
	return c.Allowlisted, c.Withheld
}

// commands is the parsed table by method, built once.
var commands = mustParseTable(table)

func mustParseTable(entries []entry) map[string]*Command {
	out := make(map[string]*Command, len(entries))
	for _, e := range entries {
		method, rest, _ := strings.Cut(e.spec, " ")
		if !methodPattern.MatchString(method) {
			panic(fmt.Sprintf("policy: table: %q is not a method name", method))
		}
		if _, dup := out[method]; dup {
			panic(fmt.Sprintf("policy: table: %s listed twice", method))
		}
		c := &Command{Method: method, Open: Form{Reason: e.why, Params: mustParseParams(method, rest)}, Withheld: e.withheld}
		if e.narrowed != "" {
			if e.withheld != "" {
				panic(fmt.Sprintf("policy: table: %s is both narrowed and withheld", method))
			}
			spec := e.narrowed
			if spec == "-" {
				spec = ""
			}
			c.Allowlisted = &Form{Reason: e.nwhy, Params: mustParseParams(method, spec)}
			for _, p := range c.Allowlisted.Params {
				if !slices.ContainsFunc(c.Open.Params, func(o Param) bool { return o.Name == p.Name }) {
					panic(fmt.Sprintf("policy: table: %s: allowlisted parameter %s is not allowed on the open web", method, p.Name))
				}
			}
		} else if e.withheld == "" {
			panic(fmt.Sprintf("policy: table: %s: no reason for withholding it under an allowlist", method))
		}
		if e.why == "" {
			panic(fmt.Sprintf("policy: table: %s has no reason", method))
		}
		out[method] = c
	}
	return out
}

func mustParseParams(method, spec string) []Param {
	var out []Param
	for _, f := range strings.Fields(spec) {
		name, only, _ := strings.Cut(f, "=")
		if only != "" && only != "false" && only != "true" {
			panic(fmt.Sprintf("policy: table: %s: parameter %q", method, f))
		}
		if slices.ContainsFunc(out, func(p Param) bool { return p.Name == name }) {
			panic(fmt.Sprintf("policy: table: %s: parameter %s listed twice", method, name))
		}
		out = append(out, Param{Name: name, OnlyFalse: only == "false", OnlyTrue: only == "true"})
	}
	return out
}

// Commands returns the whole table, sorted by method.
func Commands() []Command {
	out := make([]Command, 0, len(commands))
	for _, c := range commands {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Method, b.Method) })
	return out
}

// Class is a domain's class in cdp_domains.json.
type Class string

// The classes.
const (
	ClassPage        Class = "page"         // acts as or on the attached document
	ClassPageProfile Class = "page+profile" // page domain with commands that reach profile-wide state, other origins or local files
	ClassMeta        Class = "meta"         // protocol plumbing: schema, stream handles
	ClassCrossOrigin Class = "cross-origin" // parameterised by origin or storage key: other origins' data
	ClassBrowser     Class = "browser"      // browser-wide: other tabs, the profile, extensions, the OS
)

// DomainRule is one CDP domain: its class and whether any of its commands is
// in the table (Allowed). A domain with none is refused whole, for Reason.
type DomainRule struct {
	Name    string `json:"name"`
	Class   Class  `json:"class"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
}

// CommandRule is a command refused by name, with why.
type CommandRule struct {
	Method string `json:"method"`
	Reason string `json:"reason"`
}

// classReasons is the reason a domain of each class gets unless overridden.
var classReasons = map[Class]string{
	ClassPage:        "acts as the document; only the commands in the table pass",
	ClassPageProfile: "acts as the document, and some of its commands reach profile-wide state, other origins or local files; only the commands in the table pass",
	ClassMeta:        "protocol plumbing; only the commands in the table pass",
	ClassCrossOrigin: "parameterised by origin or storage key, so it reads or writes other origins' data; the page's own storage is reachable through evaluate",
	ClassBrowser:     "acts as the browser: other tabs, the profile, extensions, the OS or the browser process",
}

// domainOverrides reclassifies domains whose JSON scope is "page+profile" but
// whose every useful command reaches beyond the page.
var domainOverrides = map[string]DomainRule{
	"Storage": {Class: ClassBrowser, Reason: "profile-wide storage: every site's cookies, and clearing or measuring the data of any origin; the page's own storage is reachable through evaluate"},
	"Fetch":   {Class: ClassCrossOrigin, Reason: "request interception rewrites a request's URL unseen by the page (continueRequest url) and reads any response body, so the page could read other origins with the user's credentials"},
}

// Reasons shared by groups of commands refused by name.
const (
	reasonCookies   = "the cookie jar: cookies of every site in the profile, not just the page's origin; no verb exposes cookies"
	reasonNavigate  = "navigation goes through the navigate verb, where the origin gate judges the destination"
	reasonDownload  = "chooses where downloads are written on disk; downloads are not a verb"
	reasonUpload    = "hands local files to the page; uploads go through the upload verb (owner-named directory)"
	reasonBodies    = "returns bodies of responses the page loaded, including cross-origin no-cors responses the same-origin policy hides from the page; read same-origin data through evaluate"
	reasonIntercept = "request interception rewrites a request's URL unseen by the page and reads any response body (as the Fetch domain does)"
	reasonTLS       = "TLS authenticates the origin the gate judges; ignoring certificate errors lets a network attacker be that origin"
	reasonFrames    = "lists or addresses the page's frames, including frames the origin gate hides; the snapshot verb shows the allowed ones"
	reasonPlant     = "plants code that outlives the document (a script for later loads, compiled code for a URL)"
)

// withheld lists commands refused by name, with why: the ones a reviewer
// would reach for first. Every other command outside the table is refused
// too, by its domain's reason or as unreviewed. Some of these Chrome still
// serves though cdproto dropped them (deprecated).
var withheld = map[string]string{
	"Network.getAllCookies":            reasonCookies,
	"Network.getCookies":               reasonCookies,
	"Network.setCookie":                reasonCookies,
	"Network.setCookies":               reasonCookies,
	"Network.deleteCookies":            reasonCookies,
	"Network.clearBrowserCookies":      reasonCookies,
	"Network.setCookieControls":        "third-party cookie controls are profile state",
	"Network.deleteDeviceBoundSession": "device-bound sessions of any site are profile state, like the cookie jar",
	"Network.clearBrowserCache":        "clears the cache of the whole profile, not the page's",
	"Network.loadNetworkResource":      "fetches any URL with the profile's credentials: reads other origins past the same-origin policy and the origin gate",
	"Network.getCertificate":           "fetches the certificate of any origin, which the gate has not judged",

	"Network.getResponseBody":                         reasonBodies,
	"Network.searchInResponseBody":                    reasonBodies,
	"Network.streamResourceContent":                   reasonBodies,
	"Audits.getEncodedResponse":                       reasonBodies,
	"Page.getResourceContent":                         reasonBodies,
	"Page.searchInResource":                           reasonBodies,
	"Network.setRequestInterception":                  reasonIntercept,
	"Network.continueInterceptedRequest":              reasonIntercept,
	"Network.getResponseBodyForInterception":          reasonIntercept,
	"Network.takeResponseBodyForInterceptionAsStream": reasonIntercept,

	"Page.navigate":                      reasonNavigate,
	"Page.navigateToHistoryEntry":        reasonNavigate + "; history can hold any origin the tab visited",
	"FedCm.openUrl":                      "opens a tab on a URL the origin gate has not judged",
	"Page.addScriptToEvaluateOnLoad":     reasonPlant + " (deprecated, still served)",
	"Page.addCompilationCache":           reasonPlant,
	"Page.produceCompilationCache":       reasonPlant,
	"Page.createIsolatedWorld":           "creates a world in any frame, and grantUniveralAccess lifts the same-origin policy for it",
	"Page.setDocumentContent":            "replaces the document of any frame, by frame id",
	"Page.getFrameTree":                  reasonFrames,
	"Page.getResourceTree":               reasonFrames,
	"DOM.getFrameOwner":                  reasonFrames,
	"Page.startScreenRecording":          "can record the whole browser window (other tabs and the address bar), beyond the page; use a screenshot",
	"Page.waitForDebugger":               "stalls the tab until a debugger resumes it",
	"Page.getSpellCheckCustomDictionary": "the profile's own custom dictionary, the person's words",

	"Page.setDownloadBehavior":    reasonDownload,
	"Browser.setDownloadBehavior": reasonDownload,

	"DOM.setFileInputFiles":   reasonUpload,
	"Input.dispatchDragEvent": reasonUpload + " (its data.files drops local files)",
	"DOM.getFileInfo":         "returns local file-system paths",

	"Runtime.addBinding":            "installs a window function that sends page content straight to the agent, a prompt-injection channel; results come back through evaluate",
	"Target.exposeDevToolsProtocol": "gives page script a binding that speaks CDP to the browser, past everything this policy withholds",
	"Debugger.setScriptSource":      "rewrites a running script of any frame in the renderer (deprecated, still served)",
	"HeapProfiler.takeHeapSnapshot": "the whole heap of the renderer, including same-site frames of other origins",

	"Security.setIgnoreCertificateErrors":   reasonTLS,
	"Security.setOverrideCertificateErrors": reasonTLS,
	"Security.handleCertificateError":       reasonTLS,
}

// domains is the parsed domain classification, built once from the
// embedded JSON.
var domains = mustLoadDomains(domainsJSON)

func mustLoadDomains(b []byte) map[string]DomainRule {
	var doc struct {
		Domains []struct {
			Domain string `json:"domain"`
			Scope  string `json:"scope"`
		} `json:"domains"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(fmt.Sprintf("policy: embedded cdp_domains.json: %v", err))
	}
	withAllowed := map[string]bool{}
	for m := range commands {
		d, _, _ := strings.Cut(m, ".")
		withAllowed[d] = true
	}
	out := map[string]DomainRule{}
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
		r.Allowed = withAllowed[d.Domain]
		if r.Allowed && (r.Class == ClassBrowser || r.Class == ClassCrossOrigin) {
			panic(fmt.Sprintf("policy: table: the %s domain is %s, yet the table allows its commands", d.Domain, r.Class))
		}
		if !r.Allowed && (r.Class != ClassBrowser && r.Class != ClassCrossOrigin) {
			r.Reason = "no command of it was reviewed for raw CDP"
		}
		out[d.Domain] = r
	}
	for d := range withAllowed {
		if _, ok := out[d]; !ok {
			panic(fmt.Sprintf("policy: table: the %s domain is not classified in cdp_domains.json", d))
		}
	}
	return out
}

// methodPattern is the shape of a CDP method name: Domain.command.
var methodPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$`)

// maxMethodLen bounds method names; the longest real one is under 60 bytes.
const maxMethodLen = 100

// Check returns nil if method may be sent raw to a page at tier, and
// otherwise a *fsm.Refusal with code fsm.PolicyDenied naming the method and
// why. attached says the browser is the owner's own; allowEvaluate says the
// owner turned evaluate (and raw page CDP) on for this attachment. The
// parameters are judged by [CheckParams].
func Check(method string, tier Tier, attached, allowEvaluate bool) error {
	if len(method) > maxMethodLen || !methodPattern.MatchString(method) {
		return fsm.Refusef(fsm.PolicyDenied, "%s is not a CDP method name (want Domain.command)", quoteShort(method))
	}
	c, ok := commands[method]
	if !ok {
		return refuseUnlisted(method)
	}
	if _, why := c.Form(tier); why != "" {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld while an allowlist is in force: it %s", method, why)
	}
	if attached && !allowEvaluate {
		return fsm.Refusef(fsm.PolicyDenied, "%s is refused: raw CDP is off for an attached browser unless the owner turns on evaluate for this attachment", method)
	}
	return nil
}

// refuseUnlisted is the refusal of a well-formed method outside the table.
func refuseUnlisted(method string) error {
	if reason, ok := withheld[method]; ok {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld: %s", method, reason)
	}
	domain, _, _ := strings.Cut(method, ".")
	if d, ok := domains[domain]; ok && !d.Allowed {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld with the %s domain: %s", method, domain, d.Reason)
	}
	return fsm.Refusef(fsm.PolicyDenied, "%s is refused: it is not in the table of reviewed raw CDP commands (spec/cdp-policy.md)", method)
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

// Domains returns every classified domain's rule, sorted by name.
func Domains() []DomainRule {
	out := make([]DomainRule, 0, len(domains))
	for _, d := range domains {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DomainRule) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// WithheldCommands returns the commands refused by name, with why, sorted
// by method.
func WithheldCommands() []CommandRule {
	out := make([]CommandRule, 0, len(withheld))
	for method, reason := range withheld {
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

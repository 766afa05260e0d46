// Package origin decides whether a URL's origin is authorized for a browser:
// the origin gate.
//
// A [Gate] is built from the owner's allowlist with [New] and judges URLs
// with [Gate.Check]. URLs and entries are parsed with the WHATWG URL standard
// (github.com/nlnwa/whatwg-url, no base URL), so the gate sees the host the
// browser will use: backslashes, tabs and newlines, percent-encoding, IDNA,
// uppercase and the numeric IPv4 forms are all canonicalized before anything
// is compared, and comparison is on the parsed host, never on a string prefix.
//
// The rules, exactly:
//
//   - An entry is [scheme://]host[:port]. Without a scheme it authorizes http
//     and https; with one, only that scheme. ws and wss are authorized only by
//     an entry naming that exact scheme. Without a port it authorizes every
//     port; with one, only that effective port (80 or 443 when a URL elides
//     it). Entries go through the same host parser as URLs.
//   - An entry covers its host and its subdomains at a dot boundary.
//     "github.com." (trailing dot) is a different host from "github.com".
//   - An IP entry (IPv4, or bracketed IPv6) matches the parsed host exactly,
//     never by suffix and never a name. An IPv4-mapped IPv6 address is a
//     different host from the IPv4 address.
//   - Single-label entries are dropped and reported, except "localhost",
//     which covers localhost and *.localhost (and never an IP address).
//     Wildcards and entries with a path, query, fragment or user info are
//     dropped too: an entry already covers its subdomains.
//   - An empty list authorizes nothing for an attached browser and the open
//     web (http and https) for an owned one. A list whose entries were all
//     dropped authorizes nothing.
//   - Other schemes are never authorized (file, chrome, devtools, javascript,
//     data, view-source, filesystem, about other than about:blank, …). A blob:
//     URL is judged by its inner origin (http or https only). about:blank is
//     allowed unless the gate authorizes nothing.
//   - A URL that does not parse is denied.
//   - Hosts with an empty label other than a trailing one (".github.com",
//     "a..github.com") are denied: no real site has one and resolvers treat
//     them inconsistently.
//
// Refusals are *fsm.Refusal with code fsm.OriginDenied. Their detail names the
// requested origin (scheme://host[:port], never a path, query or user info)
// and the owner's remedy, and never what the allowlist contains: the message
// for an unlisted origin is the same whatever the list holds, so it is not an
// enumeration oracle.
package origin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nlnwa/whatwg-url/url"

	"github.com/webcodex/webcodex/fsm"
)

// Mode says whose browser the gate guards.
type Mode string

const (
	// Owned is a browser webcodex launched with a fresh profile.
	Owned Mode = "owned"
	// Attached is the owner's own browser. Any value other than Owned is
	// treated as Attached, the stricter mode.
	Attached Mode = "attached"
)

// Dropped reports an allowlist entry that authorizes nothing, and why.
// It is meant for the owner who wrote the entry.
type Dropped struct {
	Entry  string
	Reason string
}

// Gate judges URLs against an allowlist. It is immutable after [New] and safe
// for concurrent use.
type Gate struct {
	openWeb bool    // owned browser, empty list: every http/https URL
	nothing bool    // attached with an empty list, or every entry dropped
	entries []entry // kept entries
}

// entry is one parsed allowlist entry.
type entry struct {
	scheme string // "" means http and https
	host   string // canonical host as the WHATWG parser serializes it
	ip     bool   // IPv4 or [IPv6]: exact match only
	port   int    // -1 means every port
}

// New builds a gate for mode from the owner's entries. It returns the entries
// it dropped, with a reason each; dropped entries authorize nothing.
func New(mode Mode, entries []string) (*Gate, []Dropped) {
	g := &Gate{}
	var dropped []Dropped
	for _, raw := range entries {
		e, reason := parseEntry(raw)
		if reason != "" {
			dropped = append(dropped, Dropped{Entry: raw, Reason: reason})
			continue
		}
		g.entries = append(g.entries, e)
	}
	switch {
	case len(entries) == 0 && mode == Owned:
		g.openWeb = true
	case len(g.entries) == 0:
		g.nothing = true
	}
	return g, dropped
}

// parseEntry parses one allowlist entry. A non-empty reason means dropped.
func parseEntry(raw string) (entry, string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return entry{}, "empty entry"
	}
	e := entry{port: -1}
	rest := s
	if i := strings.Index(s, "://"); i >= 0 {
		e.scheme = strings.ToLower(s[:i])
		rest = s[i+len("://"):]
		switch e.scheme {
		case "http", "https", "ws", "wss":
		default:
			return entry{}, fmt.Sprintf("scheme %q is never authorized; entries name http, https, ws or wss origins", e.scheme)
		}
	}
	if strings.ContainsAny(rest, "@?#") {
		return entry{}, "an entry is [scheme://]host[:port]: no user info, query or fragment"
	}
	// WHATWG drops a port equal to the scheme's default, so parse the
	// authority under two schemes with different defaults to learn whether a
	// port was written: ":80" survives under https, ":443" under http.
	a, errA := parse("http://" + rest)
	b, errB := parse("https://" + rest)
	if errA != nil || errB != nil {
		return entry{}, "does not parse as [scheme://]host[:port] (bracket IPv6 addresses: [::1])"
	}
	if a.Href(false) != "http://"+a.Host()+"/" || b.Href(false) != "https://"+b.Host()+"/" {
		return entry{}, "an entry is [scheme://]host[:port]: no path, user info, query or fragment"
	}
	e.host = a.Hostname()
	e.ip = a.IsIPv4() || a.IsIPv6()
	if p := a.Port(); p != "" {
		e.port, _ = strconv.Atoi(p)
	} else if p := b.Port(); p != "" {
		e.port, _ = strconv.Atoi(p)
	}
	if e.ip {
		return e, ""
	}
	switch {
	case strings.Contains(e.host, "*"):
		return entry{}, "wildcards are not supported: an entry already covers its subdomains"
	case hasInnerEmptyLabel(e.host):
		return entry{}, "the host has an empty label"
	case !strings.Contains(strings.TrimSuffix(e.host, "."), ".") && e.host != "localhost":
		return entry{}, "single-label hosts are not allowed (it would cover a whole top-level domain); localhost is the one exception"
	}
	return e, ""
}

// hasInnerEmptyLabel reports whether a domain has an empty label other than a
// trailing one.
func hasInnerEmptyLabel(host string) bool {
	return host == "" || strings.HasPrefix(host, ".") || strings.Contains(host, "..")
}

// covers reports whether e authorizes the parsed (scheme, host, port).
func (e entry) covers(scheme, host string, ip bool, port int) bool {
	if e.scheme == "" {
		if scheme != "http" && scheme != "https" {
			return false
		}
	} else if scheme != e.scheme {
		return false
	}
	if e.port >= 0 && e.port != port {
		return false
	}
	if e.ip || ip {
		return e.ip && ip && host == e.host
	}
	return host == e.host || strings.HasSuffix(host, "."+e.host)
}

// Check returns nil if rawURL's origin is authorized, and otherwise a
// *fsm.Refusal with code fsm.OriginDenied.
func (g *Gate) Check(rawURL string) error {
	u, err := parse(rawURL)
	if err != nil {
		return neverAllowed("the URL does not parse as a URL", "check the URL: only http and https URLs can be opened").WithCause(err) // err never quotes the URL
	}
	switch scheme := u.Scheme(); scheme {
	case "http", "https", "ws", "wss":
		return g.checkWeb(u)
	case "blob":
		inner, ok := blobInner(u)
		if !ok {
			return neverAllowed("a blob: URL without an http or https origin is never authorized", schemeNext)
		}
		return g.checkWeb(inner)
	case "about":
		if !isAboutBlank(u) {
			return neverAllowed("about: URLs other than about:blank are never authorized", schemeNext)
		}
		if g.nothing {
			return fsm.Refuse(fsm.OriginDenied, "about:blank is not authorized for this browser; the owner can authorize origins with --allow ORIGIN")
		}
		return nil
	default:
		return neverAllowed(scheme+": URLs are never authorized (only http and https, and ws or wss when an entry names them)", schemeNext)
	}
}

// schemeNext is the next step after a URL no allowlist entry can admit: the
// code's own ("the owner can add the origin") does not fit it.
const schemeNext = "use an http or https URL (a local file: serve its directory on 127.0.0.1 and open that); no allowlist entry admits this scheme"

// neverAllowed is an origin_denied refusal that no --allow entry lifts,
// with the next step that fits it.
func neverAllowed(detail, next string) *fsm.Refusal {
	r := fsm.Refuse(fsm.OriginDenied, detail)
	r.Next = next
	return r
}

// OpenWeb reports whether the gate authorizes the whole open web (an owned
// browser without an allowlist): nothing is denied that http(s) can reach.
func (g *Gate) OpenWeb() bool { return g.openWeb }

// Allowed reports whether rawURL's origin is authorized.
func (g *Gate) Allowed(rawURL string) bool { return g.Check(rawURL) == nil }

// checkWeb judges a parsed http, https, ws or wss URL.
func (g *Gate) checkWeb(u *url.Url) error {
	scheme, host := u.Scheme(), u.Hostname()
	ip := u.IsIPv4() || u.IsIPv6()
	port := effectivePort(u)
	ok := false
	switch {
	case !ip && hasInnerEmptyLabel(host):
	case g.openWeb:
		ok = scheme == "http" || scheme == "https"
	default:
		for _, e := range g.entries {
			if e.covers(scheme, host, ip, port) {
				ok = true
				break
			}
		}
	}
	if ok {
		return nil
	}
	o := webOrigin(u)
	return fsm.Refusef(fsm.OriginDenied, "%s is not authorized for this browser; the owner can allow it with --allow %s", o, o)
}

// Origin returns rawURL's origin for display: scheme://host[:port] (the port
// only when it is not the scheme's default) for http, https, ws and wss; the
// inner origin for blob: (or "null" when it is opaque); "about:blank"; and for
// any other scheme "scheme://host" or "scheme:". It never includes a path,
// query, fragment or user info. The error for an unparsable URL does not
// repeat the URL.
func (g *Gate) Origin(rawURL string) (string, error) {
	u, err := parse(rawURL)
	if err != nil {
		return "", errUnparsable
	}
	switch scheme := u.Scheme(); scheme {
	case "http", "https", "ws", "wss":
		return webOrigin(u), nil
	case "blob":
		if inner, ok := blobInner(u); ok {
			return webOrigin(inner), nil
		}
		return "null", nil
	case "about":
		if isAboutBlank(u) {
			return "about:blank", nil
		}
		return "about:", nil
	default:
		if h := u.Host(); h != "" {
			return scheme + "://" + h, nil
		}
		return scheme + ":", nil
	}
}

// webOrigin serializes a special URL's origin as the URL standard does; the
// host getter already omits a default port.
func webOrigin(u *url.Url) string { return u.Scheme() + "://" + u.Host() }

// effectivePort is the URL's port, or the scheme's default when elided.
// url.DecodedPort is not used because it reports the default for ":0".
func effectivePort(u *url.Url) int {
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err == nil {
			return n
		}
		return -2 // unreachable for a parsed URL; matches no entry
	}
	switch u.Scheme() {
	case "https", "wss":
		return 443
	default:
		return 80
	}
}

// blobInner returns the URL a blob: URL's origin comes from, per the URL
// standard's origin algorithm: the parsed path, when its scheme is http or
// https. (file, the standard's third case, is never authorized.)
func blobInner(u *url.Url) (*url.Url, bool) {
	inner, err := parse(u.Pathname())
	if err != nil {
		return nil, false
	}
	if s := inner.Scheme(); s != "http" && s != "https" {
		return nil, false
	}
	return inner, true
}

// isAboutBlank reports whether u matches about:blank as the HTML standard
// defines it: scheme about, path exactly "blank", no host. A query or
// fragment does not change the document.
func isAboutBlank(u *url.Url) bool {
	return u.Scheme() == "about" && u.OpaquePath() && u.Pathname() == "blank" && u.Host() == ""
}

package origin

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nlnwa/whatwg-url/url"

	"github.com/webcodex/webcodex/fsm"
)

// refAllows is an independent model of the gate, written differently on
// purpose: it works from the library's parsed components with plain string
// operations, reads an entry's port by looking at the text after the last
// colon, and tells IP hosts from names by their shape. Where it cannot tell,
// it allows, so the property "the gate never allows what the reference
// denies" has no false alarms; it is deliberately not stricter than the gate
// anywhere (it knows nothing of the xn-- workaround, wildcards, empty labels
// or the all-dropped rule).
func refAllows(attached bool, entries []string, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme() {
	case "about":
		return u.Pathname() == "blank" && !(attached && len(entries) == 0)
	case "blob":
		inner, err := url.Parse(u.Pathname())
		if err != nil || (inner.Scheme() != "http" && inner.Scheme() != "https") {
			return false
		}
		return refWeb(attached, entries, inner)
	case "http", "https", "ws", "wss":
		return refWeb(attached, entries, u)
	}
	return false
}

func refWeb(attached bool, entries []string, u *url.Url) bool {
	scheme, host := u.Scheme(), u.Hostname()
	web := scheme == "http" || scheme == "https"
	if len(entries) == 0 {
		return !attached && web
	}
	port := 80
	if scheme == "https" || scheme == "wss" {
		port = 443
	}
	if u.Port() != "" {
		port, _ = strconv.Atoi(u.Port())
	}
	hostIsIP := looksLikeIP(host)
	for _, e := range entries {
		e = strings.TrimSpace(e)
		eScheme := ""
		if before, after, ok := strings.Cut(e, "://"); ok {
			eScheme, e = strings.ToLower(before), after
		}
		eu, err := url.Parse("http://" + e)
		if err != nil {
			continue
		}
		eHost := eu.Hostname()
		if eScheme == "" && !web || eScheme != "" && eScheme != scheme {
			continue
		}
		if p := refEntryPort(e); p >= 0 && p != port {
			continue
		}
		entryIsIP := looksLikeIP(eHost)
		if !entryIsIP && !strings.Contains(strings.Trim(eHost, "."), ".") && eHost != "localhost" {
			continue // single label
		}
		if host == eHost && hostIsIP == entryIsIP {
			return true
		}
		if !hostIsIP && !entryIsIP && strings.HasSuffix(host, "."+eHost) {
			return true
		}
	}
	return false
}

// looksLikeIP reports whether a canonical host is a bracketed IPv6 address
// or a dotted quad of decimal numbers.
func looksLikeIP(h string) bool {
	if strings.HasPrefix(h, "[") {
		return true
	}
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// refEntryPort reads the digits after an entry's last colon (outside
// brackets); -1 means "every port", including whenever it is unsure.
func refEntryPort(e string) int {
	i := strings.LastIndexByte(e, ':')
	if i < 0 || strings.Contains(e[i:], "]") {
		return -1
	}
	digits := e[i+1:]
	if digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 9 {
		return -1
	}
	n, _ := strconv.Atoi(digits)
	return n
}

// fuzzSeeds are (comma-separated entries, URL, attached) triples.
var fuzzSeeds = []struct {
	entries, url string
	attached     bool
}{
	{"github.com", "https://github.com/", true},
	{"github.com", "https://www.github.com/x", true},
	{"github.com", "https://evilgithub.com/", true},
	{"github.com", "https://github.com.evil.com/", true},
	{"github.com", "http://github.com@evil.com/", true},
	{"github.com", `http://evil.com\@github.com`, true},
	{"github.com", "https://github.com./", true},
	{"github.com", "https://%67ithub.com/", true},
	{"github.com", "https://git\thub.com/", true},
	{"github.com", "http://xn--github-.com/", true},
	{"github.com", "http://xn--.github.com/", true},
	{"bücher.de", "https://xn--bcher-kva.de/", true},
	{"xn--bcher-kva.de", "https://bücher.de/", false},
	{"127.0.0.1", "http://0x7f.1/", true},
	{"127.0.0.1", "http://2130706433/", true},
	{"127.0.0.1", "http://0177.0.0.1/", true},
	{"127.0.0.1", "http://[::ffff:127.0.0.1]/", true},
	{"[::1]", "http://[0:0::1]/", true},
	{"168.1.5", "http://192.168.1.5/", true},
	{"localhost", "http://app.localhost:3000/", true},
	{"localhost", "http://127.0.0.1/", true},
	{"github.com:443", "https://github.com/", true},
	{"github.com:443", "http://github.com/", true},
	{"https://github.com:8443", "https://github.com:8443/", true},
	{"wss://socket.example.org", "wss://socket.example.org/", true},
	{"github.com", "ws://github.com/", true},
	{"github.com", "blob:https://github.com/uuid", true},
	{"github.com", "blob:https://evil.com/uuid", true},
	{"github.com", "data:text/html,x", true},
	{"github.com", "javascript:alert(1)", true},
	{"github.com", "file:///etc/passwd", true},
	{"github.com", "about:blank", true},
	{"", "about:blank", true},
	{"", "https://evil.com/", false},
	{"", "ws://evil.com/", false},
	{"com", "https://evil.com/", false},
	{"com,github", "https://github.com/", true},
	{"*.github.com", "https://a.github.com/", true},
	{"github.com/path", "https://github.com/", true},
	{" github.com ", "https://github.com/", true},
	{"github.com\x01", "https://github.com/", true},
	{"github.com:", "https://github.com:1/", true},
	{"github.com:0", "http://github.com:0/", true},
	{"github.com.", "https://www.github.com./", true},
	{"a.b", "https://a..a.b/", false},
}

// FuzzGateNeverAllowsWhatReferenceDenies checks, for arbitrary entries and
// URLs, that the gate never allows a URL the independent reference denies,
// that every denial is an origin_denied refusal, and that a refusal never
// names a kept entry's host unless that host is part of the requested origin.
// The seeds run on every plain `go test`.
func FuzzGateNeverAllowsWhatReferenceDenies(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.entries, s.url, s.attached)
	}
	f.Fuzz(func(t *testing.T, list, raw string, attached bool) {
		var entries []string
		if list != "" {
			entries = strings.Split(list, ",")
		}
		mode := Owned
		if attached {
			mode = Attached
		}
		g, _ := New(mode, entries)
		err := g.Check(raw)
		if err == nil {
			if !refAllows(attached, entries, raw) {
				t.Fatalf("gate(%s, %q) allows %q; the reference denies it", mode, entries, raw)
			}
			return
		}
		r, ok := fsm.AsRefusal(err)
		if !ok || r.Code != fsm.OriginDenied {
			t.Fatalf("Check(%q) = %v, want an origin_denied refusal", raw, err)
		}
		if g.Allowed(raw) {
			t.Fatalf("Allowed(%q) = true after Check refused", raw)
		}
		origin, _ := g.Origin(raw)
		for _, e := range g.entries {
			if e.host == "" || origin != "" && strings.Contains(origin, e.host) {
				continue
			}
			if strings.Contains(r.Detail, e.host) || strings.Contains(r.Next, e.host) {
				t.Fatalf("refusal for %q names entry host %q: %s", raw, e.host, err)
			}
		}
	})
}

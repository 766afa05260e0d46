package origin

import (
	"errors"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

type gateCase struct {
	url   string
	allow bool
}

// runGate checks every case against one gate and fails with the rule's name.
func runGate(t *testing.T, name string, mode Mode, entries []string, cases []gateCase) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		g, _ := New(mode, entries)
		for _, c := range cases {
			err := g.Check(c.url)
			if got := err == nil; got != c.allow {
				t.Errorf("%s %q: Check(%q) allowed=%v, want %v (err %v)", mode, entries, c.url, got, c.allow, err)
			}
			if err != nil && !fsm.IsCode(err, fsm.OriginDenied) {
				t.Errorf("Check(%q) = %v, want code %s", c.url, err, fsm.OriginDenied)
			}
			if g.Allowed(c.url) != c.allow {
				t.Errorf("Allowed(%q) disagrees with Check", c.url)
			}
		}
	})
}

func TestGateRules(t *testing.T) {
	t.Parallel()
	gh := []string{"github.com"}

	runGate(t, "host and subdomains at a dot boundary", Attached, gh, []gateCase{
		{"https://github.com/", true},
		{"http://github.com/x?y#z", true},
		{"https://www.github.com/", true},
		{"https://a.b.github.com:8443/", true},
		{"https://evilgithub.com/", false},
		{"https://github.com.evil.com/", false},
		{"https://github.co/", false},
		{"https://com/", false},
		{"https://hub.com/", false},
	})
	runGate(t, "userinfo and backslash tricks", Attached, gh, []gateCase{
		{"http://github.com@evil.com/", false},
		{"http://github.com:443@evil.com/", false},
		{"http://evil.com@github.com/", true}, // the host really is github.com
		{`http://evil.com\@github.com`, false},
		{`http://evil.com\github.com`, false},
		{`https:\\github.com\path`, true},
		{`https:/\github.com`, true},
		{"https://github.com%2F@evil.com/", false},
		{"https://github.com%40evil.com/", false},
		{"https://github.com#@evil.com/", true},
		{"https://evil.com#@github.com/", false},
		{"https://evil.com?@github.com/", false},
	})
	runGate(t, "trailing dots are distinct hosts", Attached, gh, []gateCase{
		{"https://github.com./", false},
		{"https://www.github.com./", false},
		{"https://github.com../", false},
		{"https://.github.com/", false},
		{"https://a..github.com/", false},
	})
	runGate(t, "trailing-dot entry", Attached, []string{"github.com."}, []gateCase{
		{"https://github.com./", true},
		{"https://www.github.com./", true},
		{"https://github.com/", false},
	})
	runGate(t, "case, percent-encoding, tabs and newlines", Attached, gh, []gateCase{
		{"HTTPS://GITHUB.COM/", true},
		{"https://GitHub.Com/", true},
		{"https://%67ithub.com/", true},
		{"https://github%2Ecom/", true},
		{"https://%65vilgithub.com/", false},
		{"https://git\thub.com/", true},
		{"https://git\nhub.com/", true},
		{"https://github.com\t.evil.com/", false},
		{"https://github.co\nm.evil.com/", false},
		{"https://evil\t.com/", false},
		{"\n https://github.com/ \t", true},
		{"https://github。com/", true},
		{"https://ｇｉｔｈｕｂ.com/", true},
	})
	runGate(t, "IDN entry in Unicode form", Attached, []string{"bücher.de"}, []gateCase{
		{"https://bücher.de/", true},
		{"https://xn--bcher-kva.de/", true},
		{"https://XN--BCHER-KVA.DE/", true},
		{"https://b%C3%BCcher.de/", true},
		{"https://shop.bücher.de/", true},
		{"https://bucher.de/", false},
		{"https://xn--bcher-kva.de.evil.com/", false},
	})
	runGate(t, "IDN entry in punycode form", Attached, []string{"xn--bcher-kva.de"}, []gateCase{
		{"https://bücher.de/", true},
		{"https://BÜCHER.DE/", true},
		{"https://bucher.de/", false},
	})
	runGate(t, "IPv4 entry matches every numeric form exactly", Attached, []string{"127.0.0.1"}, []gateCase{
		{"http://127.0.0.1/", true},
		{"http://127.0.0.1:9222/", true},
		{"http://2130706433/", true},
		{"http://0x7f.1/", true},
		{"http://0x7f000001/", true},
		{"http://0177.0.0.1/", true},
		{"http://0177.0.0.01/", true},
		{"http://127.1/", true},
		{"http://127.0.1/", true},
		{"http://127.0.0.1./", true},
		{"http://%31%32%37.0.0.1/", true},
		{"http://127.0.0.2/", false},
		{"http://1.127.0.0.1/", false}, // five parts: does not parse
		{"http://x.127.0.0.1/", false},
		{"http://localhost/", false},
		{"http://[::1]/", false},
		{"http://[::ffff:127.0.0.1]/", false},
		{"http://[::ffff:7f00:1]/", false},
		{"http://[::127.0.0.1]/", false},
	})
	runGate(t, "IPv4 entry never matches by suffix", Attached, []string{"168.1.5"}, []gateCase{
		{"http://168.1.0.5/", true}, // 168.1.5 is the IPv4 address 168.1.0.5
		{"http://192.168.1.5/", false},
		{"http://10.168.1.5/", false},
	})
	runGate(t, "IPv6 entry", Attached, []string{"[::1]"}, []gateCase{
		{"http://[::1]/", true},
		{"http://[0:0::1]/", true},
		{"http://[0000:0000:0000:0000:0000:0000:0000:0001]:3000/", true},
		{"http://[::2]/", false},
		{"http://127.0.0.1/", false},
		{"http://localhost/", false},
	})
	runGate(t, "IPv4-mapped IPv6 entry is its own host", Attached, []string{"[::ffff:127.0.0.1]"}, []gateCase{
		{"http://[::ffff:7f00:1]/", true},
		{"http://127.0.0.1/", false},
	})
	runGate(t, "localhost covers localhost and *.localhost, never an IP", Attached, []string{"localhost"}, []gateCase{
		{"http://localhost/", true},
		{"http://LOCALHOST:3000/", true},
		{"https://app.localhost/", true},
		{"http://a.b.localhost:8080/", true},
		{"http://localhost./", false},
		{"http://127.0.0.1/", false},
		{"http://[::1]/", false},
		{"http://evillocalhost/", false},
		{"http://localhost.evil.com/", false},
	})
	runGate(t, "ports: explicit default equals elided", Attached, []string{"github.com:443"}, []gateCase{
		{"https://github.com/", true},
		{"https://github.com:443/", true},
		{"https://www.github.com:0443/", true},
		{"http://github.com:443/", true},
		{"http://github.com/", false},
		{"http://github.com:80/", false},
		{"https://github.com:8443/", false},
	})
	runGate(t, "port 80 entry", Attached, []string{"github.com:80"}, []gateCase{
		{"http://github.com/", true},
		{"http://github.com:80/", true},
		{"https://github.com/", false},
		{"https://github.com:80/", true},
		{"http://github.com:0/", false},
	})
	runGate(t, "no port means every port", Attached, gh, []gateCase{
		{"http://github.com:1/", true},
		{"https://github.com:65535/", true},
		{"http://github.com:0/", true},
	})
	runGate(t, "scheme entry authorizes only that scheme", Attached, []string{"https://github.com"}, []gateCase{
		{"https://github.com/", true},
		{"https://api.github.com/", true},
		{"http://github.com/", false},
		{"wss://github.com/", false},
	})
	runGate(t, "scheme and port entry", Attached, []string{"HTTP://GitHub.com:8080/"}, []gateCase{
		{"http://github.com:8080/", true},
		{"http://github.com/", false},
		{"https://github.com:8080/", false},
	})
	runGate(t, "ws and wss only when named", Attached, []string{"github.com", "wss://socket.example.org"}, []gateCase{
		{"ws://github.com/", false},
		{"wss://github.com/", false},
		{"wss://socket.example.org/", true},
		{"wss://a.socket.example.org:443/", true},
		{"ws://socket.example.org/", false},
		{"https://socket.example.org/", false},
	})
	runGate(t, "ws entry", Attached, []string{"ws://localhost:9000"}, []gateCase{
		{"ws://localhost:9000/x", true},
		{"ws://localhost/", false},
		{"http://localhost:9000/", false},
	})
	runGate(t, "non-web schemes are never authorized", Attached, gh, []gateCase{
		{"file:///etc/passwd", false},
		{"file://github.com/etc/passwd", false},
		{"chrome://settings", false},
		{"chrome-extension://abcdefghijklmnopabcdefghijklmnop/x.html", false},
		{"chrome-untrusted://terminal/", false},
		{"devtools://devtools/bundled/inspector.html", false},
		{"javascript:alert(1)", false},
		{"JavaScript:fetch('https://github.com/')", false},
		{"data:text/html,<script>alert(1)</script>", false},
		{"view-source:https://github.com/", false},
		{"filesystem:https://github.com/temporary/x", false},
		{"ftp://github.com/", false},
		{"about:srcdoc", false},
		{"about:settings", false},
		{"about:BLANK", false},
		{"mailto:a@github.com", false},
		{"github://github.com/", false},
	})
	runGate(t, "blob is judged by its inner origin", Attached, gh, []gateCase{
		{"blob:https://github.com/0f1e-uuid", true},
		{"blob:https://www.github.com:443/0f1e", true},
		{"blob:https://evil.com/0f1e", false},
		{"blob:http://github.com@evil.com/x", false},
		{"blob:null/0f1e", false},
		{"blob:0f1e-uuid", false},
		{"blob:", false},
		{"blob:blob:https://github.com/x", false},
		{"blob:file:///etc/passwd", false},
		{"blob:data:text/html,x", false},
		{"blob:ws://github.com/", false},
		{"blob:http%3a//github.com/", false},
	})
	runGate(t, "about:blank with a list", Attached, gh, []gateCase{
		{"about:blank", true},
		{"about:blank#frag", true},
		{"about:blank?q", true},
		{"ABOUT:blank", true},
	})
	runGate(t, "attached with an empty list authorizes nothing", Attached, nil, []gateCase{
		{"https://github.com/", false},
		{"http://localhost/", false},
		{"about:blank", false},
		{"blob:https://github.com/x", false},
	})
	runGate(t, "unknown mode is attached", Mode("launched?"), nil, []gateCase{
		{"https://github.com/", false},
		{"about:blank", false},
	})
	runGate(t, "owned with an empty list is the open web", Owned, []string{}, []gateCase{
		{"https://github.com/", true},
		{"http://evil.com:8080/x", true},
		{"http://127.0.0.1:9222/", true},
		{"http://[::1]/", true},
		{"http://localhost/", true},
		{"http://intranet/", true},
		{"about:blank", true},
		{"blob:https://evil.com/x", true},
		{"ws://evil.com/", false},
		{"wss://evil.com/", false},
		{"file:///etc/passwd", false},
		{"chrome://settings", false},
		{"javascript:alert(1)", false},
		{"data:text/html,x", false},
		{"http://", false},
		{"http://a..b/", false},
	})
	runGate(t, "owned with a list is that list", Owned, gh, []gateCase{
		{"https://github.com/", true},
		{"https://evil.com/", false},
		{"about:blank", true},
	})
	allDropped := []string{"com", "github", "*.github.com", "", "file:///etc", "github.com/path", "user@github.com", "localhost."}
	runGate(t, "owned with every entry dropped authorizes nothing", Owned, allDropped, []gateCase{
		{"https://github.com/", false},
		{"https://com/", false},
		{"https://evil.com/", false},
		{"about:blank", false},
	})
	runGate(t, "attached with every entry dropped authorizes nothing", Attached, allDropped, []gateCase{
		{"https://github.com/", false},
		{"about:blank", false},
	})
	runGate(t, "dropped entries do not disable kept ones", Attached, []string{"com", "github.com"}, []gateCase{
		{"https://github.com/", true},
		{"https://evil.com/", false},
	})
	runGate(t, "unparsable URLs are denied", Owned, nil, []gateCase{
		{"", false},
		{"github.com", false},
		{"//github.com/", false},
		{"http://[::1/", false},
		{"http://git hub.com/", false},
		{"http://github.com:99999/", false},
	})
}

func TestNewDropped(t *testing.T) {
	t.Parallel()
	entries := []string{
		"github.com", "  example.org  ", "localhost", "127.0.0.1", "[::1]", "https://a.b", "wss://c.d:8443", "github.com.",
		"com", "com.", "intranet", "localhost.", "*.github.com", "", "   ", "file:///etc", "chrome://settings", "ftp://x.y",
		"github.com/path", "github.com?x", "github.com#x", "user@github.com", "[::1", "::1", "github.com:99999", "xn--github-.com",
	}
	g, dropped := New(Attached, entries)
	if len(g.entries) != 8 {
		t.Errorf("kept %d entries, want 8: %+v", len(g.entries), g.entries)
	}
	got := map[string]string{}
	for _, d := range dropped {
		if d.Reason == "" {
			t.Errorf("dropped %q without a reason", d.Entry)
		}
		got[d.Entry] = d.Reason
	}
	for _, e := range entries[8:] {
		if _, ok := got[e]; !ok {
			t.Errorf("entry %q was not dropped", e)
		}
	}
	if len(dropped) != len(entries)-8 {
		t.Errorf("dropped %d, want %d: %+v", len(dropped), len(entries)-8, dropped)
	}
	if !strings.Contains(got["com"], "single-label") || !strings.Contains(got["*.github.com"], "wildcard") {
		t.Errorf("reasons do not explain: %q, %q", got["com"], got["*.github.com"])
	}
}

// TestRefusalNeverNamesEntries checks that a denial names the requested
// origin and the remedy and nothing from the allowlist. The entries are
// chosen so none of their hosts is a substring of the requested URLs.
func TestRefusalNeverNamesEntries(t *testing.T) {
	t.Parallel()
	entries := []string{"internal.corp.example", "10.20.30.40", "[fd00::7]", "https://payroll.acme.test:8443", "wss://feed.acme.test", "localhost", "intranet"}
	secrets := []string{"internal.corp.example", "corp.example", "10.20.30.40", "fd00::7", "payroll", "acme.test", "8443", "feed", "localhost", "intranet"}
	denied := []string{
		"https://evil.com/secret/path?token=abc#frag",
		"http://user:pw@other.org:8080/x",
		"ws://socket.other.org/",
		"blob:https://evil.com/uuid",
		"file:///home/user/.ssh/id_rsa",
		"javascript:alert(1)",
		"about:srcdoc",
		"http://[::2]/",
		"http://10.20.30.41/",
		"not a url",
	}
	for _, mode := range []Mode{Owned, Attached} {
		for _, list := range [][]string{entries, nil, {"com", "x"}} {
			g, _ := New(mode, list)
			for _, u := range denied {
				err := g.Check(u)
				if err == nil {
					if mode == Owned && list == nil {
						continue // the open web
					}
					t.Errorf("%s %v: %q allowed", mode, list, u)
					continue
				}
				r, ok := fsm.AsRefusal(err)
				if !ok || r.Code != fsm.OriginDenied {
					t.Fatalf("Check(%q) = %v, want an origin_denied refusal", u, err)
				}
				for _, s := range secrets {
					if strings.Contains(err.Error(), s) || strings.Contains(r.Next, s) {
						t.Errorf("%s %v: refusal for %q names allowlist content %q: %s", mode, list, u, s, err)
					}
				}
				for _, leak := range []string{"secret", "token", "abc", "frag", "user", "pw", "/x", "uuid", "id_rsa", "alert"} {
					if strings.Contains(r.Detail, leak) {
						t.Errorf("refusal for %q leaks %q from the URL: %s", u, leak, r.Detail)
					}
				}
			}
		}
	}
}

// TestRefusalIsUniform checks the message for an unlisted origin does not
// depend on what the list holds: same text for an attached browser with no
// list, a list of other hosts, and a list whose entries were all dropped.
func TestRefusalIsUniform(t *testing.T) {
	t.Parallel()
	want := ""
	for _, list := range [][]string{nil, {"github.com"}, {"com"}, {"10.0.0.1", "a.b", "wss://c.d"}} {
		g, _ := New(Attached, list)
		err := g.Check("https://evil.com/x")
		if err == nil {
			t.Fatalf("%v allowed evil.com", list)
		}
		if want == "" {
			want = err.Error()
		}
		if err.Error() != want {
			t.Errorf("refusal differs with list %v: %q vs %q", list, err.Error(), want)
		}
	}
	if !strings.Contains(want, "https://evil.com") || !strings.Contains(want, "--allow https://evil.com") {
		t.Errorf("refusal %q does not name the origin and the remedy", want)
	}
}

func TestRefusalDetails(t *testing.T) {
	t.Parallel()
	g, _ := New(Attached, []string{"github.com"})
	for u, want := range map[string]string{
		"https://user:pw@evil.com:8443/p?q#f": "https://evil.com:8443 is not authorized for this browser; the owner can allow it with --allow https://evil.com:8443",
		"http://evil.com:80/":                 "http://evil.com is not authorized",
		"ws://github.com/":                    "--allow ws://github.com",
		"blob:https://evil.com/x":             "https://evil.com is not authorized",
		"file:///etc/passwd":                  "file: URLs are never authorized",
		"about:srcdoc":                        "about: URLs other than about:blank are never authorized",
		"blob:null/x":                         "blob: URL without an http or https origin",
		"http://[":                            "does not parse",
	} {
		err := g.Check(u)
		r, ok := fsm.AsRefusal(err)
		if !ok || !strings.Contains(r.Detail, want) {
			t.Errorf("Check(%q) = %v, want detail containing %q", u, err, want)
		}
		if ok && r.Next == "" {
			t.Errorf("Check(%q): refusal has no next step", u)
		}
	}
	// A next step fits its cause: an origin the owner can allow says so; a
	// URL no entry admits (file:, about:, an opaque blob:, one that does not
	// parse) says what works instead, never "add the origin".
	for u, allowable := range map[string]bool{"https://evil.com/": true, "file:///etc/passwd": false, "about:srcdoc": false, "blob:null/x": false, "http://[": false, "chrome://settings": false} {
		r, _ := fsm.AsRefusal(g.Check(u))
		if r == nil {
			t.Errorf("Check(%q) admitted it", u)
			continue
		}
		if says := strings.Contains(r.Next, "--allow") || strings.Contains(r.Next, "add the origin"); says != allowable {
			t.Errorf("Check(%q): next %q; want one that says the owner can allow it: %v", u, r.Next, allowable)
		}
	}
	g0, _ := New(Attached, nil)
	if err := g0.Check("about:blank"); err == nil || !strings.Contains(err.Error(), "--allow ORIGIN") {
		t.Errorf("about:blank refusal = %v", err)
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	g, _ := New(Attached, nil)
	for in, want := range map[string]string{
		"https://user:pw@GitHub.com:443/p?q#f": "https://github.com",
		"http://github.com:8080/x":             "http://github.com:8080",
		"http://0x7f.1/":                       "http://127.0.0.1",
		"http://[0:0::1]:80/":                  "http://[::1]",
		"wss://x.y:443/":                       "wss://x.y",
		"blob:https://github.com:443/uuid":     "https://github.com",
		"blob:null/uuid":                       "null",
		"about:blank#x":                        "about:blank",
		"about:srcdoc":                         "about:",
		"file:///etc/passwd":                   "file:",
		"chrome://settings/passwords":          "chrome://settings",
		"javascript:alert(document.cookie)":    "javascript:",
		"data:text/html,secret":                "data:",
	} {
		got, err := g.Origin(in)
		if err != nil || got != want {
			t.Errorf("Origin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if o, err := g.Origin("http://[token-in-host"); err == nil || strings.Contains(err.Error(), "token") {
		t.Errorf("Origin of unparsable = %q, %v", o, err)
	}
}

// TestErrorsNeverQuoteTheURL checks that neither the refusal nor its internal
// cause repeats an unparsable URL, which may carry a token.
func TestErrorsNeverQuoteTheURL(t *testing.T) {
	t.Parallel()
	g, _ := New(Owned, nil)
	for _, raw := range []string{"http://[secret-token", "https://host:99999/?token=secret", "http://ex%00secret.com/"} {
		err := g.Check(raw)
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), "secret") {
				t.Errorf("error chain for an unparsable URL quotes it: %q", e.Error())
			}
		}
		if err == nil {
			t.Errorf("Check(%q) = nil", raw)
		}
	}
}

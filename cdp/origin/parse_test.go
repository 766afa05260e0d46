package origin

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nlnwa/whatwg-url/url"
)

// wptCase is one object of WPT's urltestdata.json, restricted to the fields
// the gate relies on.
type wptCase struct {
	Input    string  `json:"input"`
	Failure  bool    `json:"failure"`
	Protocol string  `json:"protocol"`
	Host     string  `json:"host"`
	Hostname string  `json:"hostname"`
	Port     string  `json:"port"`
	Origin   *string `json:"origin"`
}

// TestWPTSubset runs the gate's parser over the web-platform-tests cases it
// relies on (testdata/wpt_urltestdata_subset.json, copied verbatim from WPT)
// and checks scheme, host, port, failure and, where WPT states one, the
// origin the gate displays.
func TestWPTSubset(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/wpt_urltestdata_subset.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	g, _ := New(Owned, nil)
	n := 0
	for _, r := range raw {
		var c wptCase
		if json.Unmarshal(r, &c) != nil {
			continue // a comment string
		}
		n++
		u, err := parse(c.Input)
		if c.Failure {
			if err == nil {
				t.Errorf("parse(%q) = host %q, want failure", c.Input, u.Host())
			}
			if g.Allowed(c.Input) {
				t.Errorf("open-web gate allowed unparsable %q", c.Input)
			}
			continue
		}
		if err != nil {
			t.Errorf("parse(%q) failed: %v", c.Input, err)
			continue
		}
		if u.Protocol() != c.Protocol || u.Host() != c.Host || u.Hostname() != c.Hostname || u.Port() != c.Port {
			t.Errorf("parse(%q) = %q %q %q %q, want %q %q %q %q", c.Input,
				u.Protocol(), u.Host(), u.Hostname(), u.Port(), c.Protocol, c.Host, c.Hostname, c.Port)
		}
		if c.Origin != nil && *c.Origin != "null" {
			if o, err := g.Origin(c.Input); err != nil || o != *c.Origin {
				t.Errorf("Origin(%q) = %q, %v; want %q", c.Input, o, err, *c.Origin)
			}
		}
	}
	if n < 90 {
		t.Fatalf("only %d WPT cases loaded", n)
	}
}

// TestWPTStyle covers the canonicalizations the gate relies on, in WPT form:
// input, then the scheme, host and effective port the URL standard gives.
func TestWPTStyle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, scheme, host string
		port             int // effective
	}{
		{"http://0x7f.1/", "http", "127.0.0.1", 80},
		{"http://2130706433/", "http", "127.0.0.1", 80},
		{"http://0177.0.0.1/", "http", "127.0.0.1", 80},
		{"http://127.1/", "http", "127.0.0.1", 80},
		{"http://0x7f000001/", "http", "127.0.0.1", 80},
		{"http://0x7F.0.0.1./", "http", "127.0.0.1", 80},
		{"http://127.0.0.1:80/", "http", "127.0.0.1", 80},
		{`http://evil.com\@github.com`, "http", "evil.com", 80},
		{`http:\\github.com\x`, "http", "github.com", 80},
		{"http://github.com@evil.com/", "http", "evil.com", 80},
		{"http://git\thub.com/", "http", "github.com", 80},
		{"http://git\nhub.com/", "http", "github.com", 80},
		{"http://git\rhub.com/", "http", "github.com", 80},
		{" \thttp://github.com/ \n", "http", "github.com", 80},
		{"HTTPS://GitHub.COM:443/", "https", "github.com", 443},
		{"https://github.com:0443/", "https", "github.com", 443},
		{"https://github.com:8443/", "https", "github.com", 8443},
		{"http://%67ithub.com/", "http", "github.com", 80},
		{"http://github%2ecom/", "http", "github.com", 80},
		{"http://github。com/", "http", "github.com", 80},
		{"http://ｇｉｔｈｕｂ.com/", "http", "github.com", 80},
		{"http://bücher.de/", "http", "xn--bcher-kva.de", 80},
		{"http://BÜCHER.de/", "http", "xn--bcher-kva.de", 80},
		{"http://b%C3%BCcher.de/", "http", "xn--bcher-kva.de", 80},
		{"http://XN--BCHER-KVA.de/", "http", "xn--bcher-kva.de", 80},
		{"http://github.com./", "http", "github.com.", 80},
		{"http://[::1]/", "http", "[::1]", 80},
		{"http://[0:0::1]/", "http", "[::1]", 80},
		{"http://[0:0:0:0:0:0:0:1]:8080/", "http", "[::1]", 8080},
		{"http://[::ffff:127.0.0.1]/", "http", "[::ffff:7f00:1]", 80},
		{"ws://github.com/", "ws", "github.com", 80},
		{"wss://github.com:443/", "wss", "github.com", 443},
		{"ws:github.com", "ws", "github.com", 80},
	}
	for _, c := range cases {
		u, err := parse(c.in)
		if err != nil {
			t.Errorf("parse(%q): %v", c.in, err)
			continue
		}
		if u.Scheme() != c.scheme || u.Hostname() != c.host || effectivePort(u) != c.port {
			t.Errorf("parse(%q) = %s %s %d, want %s %s %d", c.in, u.Scheme(), u.Hostname(), effectivePort(u), c.scheme, c.host, c.port)
		}
	}
	for _, in := range []string{
		"http://", "http://[", "http://[::1", "http:// github.com/", "http://git hub.com/",
		"http://github.com:65536/", "http://github.com:-1/", "http://1.2.3.4.5/", "http://256.0.0.1/",
		"http://999999999999/", "http://foo.0x/", "http://ex%00ample.com/", "http://a%2Fb.com/",
		"http://xn--a.com/", "https://xn--/", "not a url", "", "//github.com/", "/relative",
	} {
		if u, err := parse(in); err == nil {
			t.Errorf("parse(%q) = %q, want failure", in, u.Href(false))
		}
	}
}

// TestACELabelDivergence pins the whatwg-url divergence that checkACELabels
// works around: the library decodes an xn-- label with ASCII-only or empty
// Punycode to that ASCII, which UTS #46 (Unicode 15.1+) and so the URL
// standard make a failure. If the library is fixed, the first assertion
// starts failing and the workaround can be reviewed.
func TestACELabelDivergence(t *testing.T) {
	t.Parallel()
	if u, err := url.Parse("http://xn--github-.com/"); err != nil || u.Hostname() != "github.com" {
		t.Errorf("whatwg-url no longer diverges (got %v, %v): review checkACELabels", u, err)
	}
	g, _ := New(Attached, []string{"github.com", "com.", "github"})
	for _, in := range []string{
		"http://xn--github-.com/",
		"http://www.xn--github-.com/",
		"http://XN--GITHUB-.COM/",
		"http://xn--.github.com/",
		"http://a.xn--.github.com/",
		"http://github.com.xn--/",
		"http://xn--github-.xn--com-/",
		"http://%78n--github-.com/",
		"http://xn%2D-github-.com/",
		"http://ｘｎ--github-.com/",
		"http://x\u00ADn--github-.com/", // soft hyphen is ignored by UTS #46 mapping
		"http://1.2.3.xn--4-/",
		"http://xn--xn--bcher-kva-.com/",
		"blob:http://xn--github-.com/x",
	} {
		if _, err := parse(in); err == nil && !strings.HasPrefix(in, "blob:") {
			t.Errorf("parse(%q) succeeded, want failure", in)
		}
		if g.Allowed(in) {
			t.Errorf("gate allowed %q", in)
		}
	}
	// Valid ACE labels still parse and match.
	g2, _ := New(Attached, []string{"xn--bcher-kva.de"})
	for _, in := range []string{"http://xn--bcher-kva.de/", "http://bücher.de/", "https://www.xn--bcher-kva.de/"} {
		if !g2.Allowed(in) {
			t.Errorf("gate denied valid IDN %q", in)
		}
	}
}

func TestPercentDecode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":          "",
		"abc":       "abc",
		"%41":       "A",
		"%4":        "%4",
		"%":         "%",
		"%zz%41":    "%zzA",
		"a%2eb%2E":  "a.b.",
		"%e2%98%83": "\u2603",
	} {
		if got := percentDecode(in); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

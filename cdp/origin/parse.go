package origin

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/idna"
)

// errUnparsable is the internal cause of every parse refusal. It never names
// the input, which may carry tokens in its query.
var errUnparsable = errors.New("origin: not a valid WHATWG URL")

// errACELabel marks the whatwg-url divergence handled by checkACELabels.
var errACELabel = errors.New("origin: host has an xn-- label that does not decode to a non-ASCII label")

// parse parses raw with the WHATWG URL parser (no base URL) and then applies
// the documented workaround for the one divergence we found in the hosts we
// rely on (see checkACELabels). Its errors never include the input: the
// library's error text quotes the URL, which may carry tokens.
//
// A parser is built per call because the pre-host hook records into a local
// slice; construction only copies an options struct.
func parse(raw string) (*url.Url, error) {
	var hosts []string
	p := url.NewParser(url.WithPreParseHostFunc(func(_ *url.Url, host string) string {
		hosts = append(hosts, host)
		return host
	}))
	u, err := p.Parse(raw)
	if err != nil {
		return nil, errUnparsable
	}
	if u.IsSpecialScheme() {
		for _, h := range hosts {
			if err := checkACELabels(h); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

// aceMapper applies the UTS #46 mapping table, the same x/net/idna table the
// parser uses, one code point at a time.
var aceMapper = idna.New(idna.MapForLookup(), idna.Transitional(false))

// checkACELabels works around a divergence between whatwg-url v0.6.2 (through
// golang.org/x/net/idna) and the WHATWG URL standard.
//
// UTS #46 since Unicode 15.1 (section 4, step 4 "Convert/Validate", and
// validity criterion 4) makes it an error when an "xn--" label's Punycode is
// empty or decodes to ASCII only, or decodes to a label that itself starts
// with "xn--"; the URL standard's domain-to-ASCII therefore fails. x/net/idna
// instead replaces the label with the decoded ASCII, so the library parses
// "http://xn--github-.com/" as host "github.com" and "http://xn--.github.com/"
// as ".github.com". A browser does not go to github.com for that URL, so an
// allowlist entry for github.com must not admit it.
//
// raw is the host string before the host parser runs. It is percent-decoded
// and mapped exactly as UTS #46 maps it (per code point; NFC cannot create or
// remove the ASCII "xn--" prefix, so it is not needed to find the labels),
// split into labels on ".", and every label starting with "xn--" must decode
// to a non-empty label that contains a non-ASCII code point and does not
// itself start with "xn--". Anything else is a parse failure, which the gate
// turns into a denial.
func checkACELabels(raw string) error {
	if strings.HasPrefix(raw, "[") {
		return nil // IPv6 literal: no labels
	}
	decoded := percentDecode(raw)
	if !utf8.ValidString(decoded) {
		return nil // the host parser fails on this itself
	}
	var mapped strings.Builder
	for _, r := range decoded {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			mapped.WriteRune(r)
			continue
		}
		m, _ := aceMapper.ToUnicode(string(r)) // a single code point cannot form "xn--", so nothing is decoded here
		mapped.WriteString(m)
	}
	for label := range strings.SplitSeq(mapped.String(), ".") {
		if !strings.HasPrefix(label, "xn--") {
			continue
		}
		for i := 0; i < len(label); i++ {
			if label[i] >= utf8.RuneSelf {
				return errACELabel
			}
		}
		u, err := idna.Punycode.ToUnicode(label)
		if err != nil || u == "" || strings.HasPrefix(u, "xn--") || isASCII(u) {
			return errACELabel
		}
	}
	return nil
}

// percentDecode is the URL standard's percent-decode: "%" followed by two hex
// digits becomes that byte, anything else is kept as is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

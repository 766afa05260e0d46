package netguard

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
)

// TestSafeFileName: a site's suggested name becomes one plain file name.
func TestSafeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.txt":                  "report.txt",
		"../../etc/passwd":            "passwd",
		`..\\boot.ini`:                "boot.ini",
		".bashrc":                     "bashrc",
		"":                            "download",
		"..":                          "download",
		"a\x00b\nc.txt":               "abc.txt",
		strings.Repeat("é", 150):      strings.Repeat("é", 100),
		"a\u2215b\uff0fc\u2044d.txt":  "a_b_c_d.txt",
		"..\uff0f..\uff0fetc":         "_.._etc",
		"\uff3cx\u2216y":              "_x_y",
		"invoice\u202egnp.exe":        "invoicegnp.exe",
		"a\u2066b\u2069\u200bc\ufeff": "abc",
		"tab\there\u00a0x":            "tabhere x",
		"\u202e.bashrc":               "bashrc",
	} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListUpcomingID: an id the jail has not issued is upcoming (a caller
// may wait for the download its click started); an issued, malformed or
// padded one is not.
func TestListUpcomingID(t *testing.T) {
	dl := &Jail{cap: 1 << 20, byGUID: map[string]*download{}, changed: make(chan struct{})}
	if _, reason := dl.begin(browser.EventDownloadWillBegin{GUID: "g1", SuggestedFilename: "a.txt"}); reason != "" {
		t.Fatalf("begin refused: %s", reason)
	}
	for id, want := range map[string]struct{ found, upcoming bool }{
		"d1":  {found: true},
		"g1":  {found: true},
		"d2":  {upcoming: true},
		"d9":  {upcoming: true},
		"d0":  {},
		"d02": {},
		"d-1": {},
		"x":   {},
		"d2x": {},
	} {
		_, _, found, upcoming, _ := dl.List(id)
		if found != want.found || upcoming != want.upcoming {
			t.Errorf("List(%q): found %v upcoming %v, want %+v", id, found, upcoming, want)
		}
	}
}

package netguard

import (
	"strings"
	"testing"
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

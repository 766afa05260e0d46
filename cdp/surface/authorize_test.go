package surface

import "testing"

// TestDocURL: the URL a frame tree reports for a document is judged as the
// document itself reads it, so a verb and an identity read never judge one
// document differently.
func TestDocURL(t *testing.T) {
	for _, c := range []struct {
		name, url, origin, want string
	}{
		{"a web document is its URL", "http://a.test/p?q", "http://a.test", "http://a.test/p?q"},
		{"a tab's initial empty document is about:blank", "", "://", "about:blank"},
		{"an initial empty document without an origin is about:blank", "", "", "about:blank"},
		{"an initial empty document runs as its creator's origin", "", "http://evil.test", "http://evil.test"},
		{"an opaque initial empty document is about:blank", "", "null", "about:blank"},
		{"about:blank runs as its creator's origin", "about:blank", "http://evil.test", "http://evil.test"},
		{"about:srcdoc runs as its creator's origin", "about:srcdoc", "http://a.test", "http://a.test"},
		{"an opaque about:blank stays about:blank", "about:blank", "null", "about:blank"},
		{"a new tab's about:blank", "about:blank", "://", "about:blank"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := docURL(c.url, c.origin); got != c.want {
				t.Errorf("docURL(%q, %q) = %q, want %q", c.url, c.origin, got, c.want)
			}
		})
	}
}

package origin

import (
	"slices"
	"testing"
)

func TestCanonicalIsWhatTheGateReads(t *testing.T) {
	got := Canonical([]string{"HTTPS://Example.COM:443", "example.com", "https://example.com", "*.evil.com", "com", " example.com "})
	if want := []string{"example.com", "https://example.com", "https://example.com:443"}; !slices.Equal(got, want) {
		t.Fatalf("Canonical = %q, want %q", got, want)
	}
	if got := Canonical(nil); got == nil || len(got) != 0 {
		t.Fatalf("Canonical(nil) = %#v, want an empty list", got)
	}
	if got := Canonical([]string{"0x7f.1"}); !slices.Equal(got, []string{"127.0.0.1"}) {
		t.Fatalf("numeric IPv4 = %q", got)
	}
}

func TestCoversIsNarrowerOrEqual(t *testing.T) {
	cases := []struct {
		granted, asked []string
		want           bool
	}{
		{[]string{"example.com"}, []string{"example.com"}, true},
		{[]string{"example.com"}, []string{"a.example.com"}, true},
		{[]string{"example.com"}, []string{"https://example.com:8443"}, true},
		{[]string{"example.com"}, nil, true},
		{nil, nil, true},
		{[]string{"example.com", "b.org"}, []string{"b.org"}, true},
		{[]string{"a.example.com"}, []string{"example.com"}, false},
		{[]string{"example.com"}, []string{"notexample.com"}, false},
		{[]string{"example.com"}, []string{"wss://example.com"}, false},
		{[]string{"https://example.com"}, []string{"example.com"}, false},
		{[]string{"example.com:443"}, []string{"example.com"}, false},
		{[]string{"127.0.0.1"}, []string{"127.0.0.2"}, false},
		{[]string{"127.0.0.1:8080"}, []string{"127.0.0.1"}, false},
		{nil, []string{"example.com"}, false},
		{[]string{"example.com"}, []string{"example.com", "other.org"}, false},
	}
	for _, c := range cases {
		if got := Covers(c.granted, c.asked); got != c.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", c.granted, c.asked, got, c.want)
		}
	}
}

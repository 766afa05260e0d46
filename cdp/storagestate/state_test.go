package storagestate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
)

func gate(t *testing.T, entries ...string) *origin.Gate {
	t.Helper()
	g, _ := origin.New(origin.Owned, entries)
	return g
}

// TestFilterKeepsOnlyAllowed: a cookie crosses only when its host is
// allowed (every subdomain a Domain cookie reaches included; http too when
// it is not Secure); local storage only for an exact allowed origin.
func TestFilterKeepsOnlyAllowed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		entries []string
		c       Cookie
		want    bool
	}{
		{[]string{"127.0.0.1"}, Cookie{Domain: "127.0.0.1"}, true},
		{[]string{"127.0.0.1"}, Cookie{Domain: "localhost"}, false},
		{[]string{"a.example.com"}, Cookie{Domain: ".example.com", Secure: true}, false},
		{[]string{"a.example.com"}, Cookie{Domain: "a.example.com", Secure: true}, true},
		{[]string{"example.com"}, Cookie{Domain: ".example.com"}, true},
		{[]string{"https://example.com"}, Cookie{Domain: "example.com"}, false},
		{[]string{"https://example.com"}, Cookie{Domain: "example.com", Secure: true}, true},
		{[]string{"127.0.0.1:8080"}, Cookie{Domain: "127.0.0.1"}, false},
		{[]string{"example.com"}, Cookie{Domain: "evil.com/x.example.com"}, false},
		{[]string{"example.com"}, Cookie{Domain: ""}, false},
		{nil, Cookie{Domain: "anything.test"}, true}, // an owned browser on the open web
	}
	for _, c := range cases {
		if got := CookieAllowed(c.c, gate(t, c.entries...)); got != c.want {
			t.Errorf("CookieAllowed(%+v) under %v = %v, want %v", c.c, c.entries, got, c.want)
		}
	}
	g := gate(t, "127.0.0.1")
	for o, want := range map[string]bool{
		"http://127.0.0.1:8080": true, "http://localhost:8080": false, "http://127.0.0.1:8080/path": false,
		"file:///etc": false, "http://u@127.0.0.1": false, "javascript:1": false, "": false,
	} {
		if got := OriginAllowed(o, g); got != want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", o, got, want)
		}
	}
	in := State{
		Cookies: []Cookie{{Name: "sid", Domain: "127.0.0.1"}, {Name: "x", Domain: "localhost"}, {Name: "y", Domain: ".localhost"}},
		Origins: []OriginStorage{{Origin: "http://127.0.0.1:1"}, {Origin: "http://localhost:1"}},
	}
	out, d := Filter(in, g)
	if len(out.Cookies) != 1 || out.Cookies[0].Name != "sid" || len(out.Origins) != 1 || d != (Dropped{Cookies: 2, Origins: 1}) {
		t.Fatalf("Filter = %+v, dropped %+v", out, d)
	}
}

// TestFileIsTheUsers: written 0600, never over an existing file or link;
// read back only from a private regular file, no link, strictly, within
// its bounds.
func TestFileIsTheUsers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	s := State{Cookies: []Cookie{{Name: "sid", Value: "v", Domain: "127.0.0.1", Path: "/", Expires: -1, HTTPOnly: true}},
		Origins: []OriginStorage{{Origin: "http://127.0.0.1:1", LocalStorage: []Item{{Name: "k", Value: "v"}}}}}
	if err := WriteFile(p, s); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	got, err := ReadFile(p)
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("ReadFile = %+v, %v", got, err)
	}
	refused := func(what string, err error, code fsm.Code) {
		t.Helper()
		if r, ok := fsm.AsRefusal(err); !ok || r.Code != code {
			t.Errorf("%s: %v, want %s", what, err, code)
		}
	}
	refused("overwrite", WriteFile(p, s), fsm.InvalidArgument)
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "nowhere"), link)
	refused("write through a dangling link", WriteFile(link, s), fsm.InvalidArgument)
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the write followed the link")
	}
	os.Remove(link)
	os.Symlink(p, link)
	_, err = ReadFile(link)
	refused("read through a link", err, fsm.InvalidArgument)
	open := filepath.Join(dir, "open.json")
	os.WriteFile(open, []byte(`{"cookies":[],"origins":[]}`), 0o644)
	os.Chmod(open, 0o644)
	_, err = ReadFile(open)
	refused("read of a file others can read", err, fsm.InvalidArgument)
	odd := filepath.Join(dir, "odd.json")
	os.WriteFile(odd, []byte(`{"cookies":[],"origins":[],"extra":1}`), 0o600)
	_, err = ReadFile(odd)
	refused("an unknown field", err, fsm.InvalidArgument)
	refused("too many cookies", WriteFile(filepath.Join(dir, "c.json"), State{Cookies: make([]Cookie, MaxCookies+1)}), fsm.LimitExceeded)
	refused("too many origins", WriteFile(filepath.Join(dir, "o.json"), State{Origins: make([]OriginStorage, MaxOrigins+1)}), fsm.LimitExceeded)
	refused("too many items", WriteFile(filepath.Join(dir, "i.json"), State{Origins: []OriginStorage{{LocalStorage: make([]Item, MaxItems+1)}}}), fsm.LimitExceeded)
	huge := State{Origins: []OriginStorage{{Origin: "http://127.0.0.1", LocalStorage: []Item{{Name: "k", Value: strings.Repeat("a", MaxFileBytes)}}}}}
	refused("a state over the file bound", WriteFile(filepath.Join(dir, "h.json"), huge), fsm.LimitExceeded)
	hugeFile := filepath.Join(dir, "huge.json")
	os.WriteFile(hugeFile, make([]byte, MaxFileBytes+1), 0o600)
	_, err = ReadFile(hugeFile)
	refused("a file over its bound", err, fsm.LimitExceeded)
}

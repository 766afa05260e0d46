package secret

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

const value = `s3cr3t "pw" <&> é/x?y=z`

func env(k string) string {
	if k == "PW" {
		return value
	}
	return ""
}

func TestParseRefusesWithOneLineNamingNoValue(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte(value+"\n"), 0o644)
	os.Chmod(open, 0o644)
	for _, spec := range []string{
		"PW=env:PW",                     // no origin
		"PW=env:NOPE@https://a.example", // empty variable
		"PW=plain@https://a.example",    // no source
		"P-W=env:PW@https://a.example",  // bad name
		"PW=env:PW@ex ample",            // not an origin
		"PW=file:" + open + "@https://a.example",
		"PW=file:" + filepath.Join(dir, "missing") + "@https://a.example",
	} {
		_, err := Parse([]string{spec}, env)
		if err == nil {
			t.Errorf("Parse(%q) accepted it", spec)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) = %q: one line, no value", spec, msg)
		}
	}
	if _, err := Parse([]string{"PW=file:" + open + "@https://a.example"}, env); err == nil || !strings.Contains(err.Error(), "readable or writable by others") {
		t.Errorf("a group-readable file: %v", err)
	}
	if _, err := Parse([]string{"PW=env:PW@https://a.example", "PW=env:PW@https://b.example"}, env); err == nil {
		t.Error("a name given twice was accepted")
	}
	short := func(string) string { return "abc" }
	if _, err := Parse([]string{"PW=env:X@https://a.example"}, short); err == nil {
		t.Error("a 3-character value was accepted")
	}
}

func TestFileOnlyTheUserReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Parse([]string{"PW=file:" + path + "@https://a.example"}, env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Expand("{{secret.PW}}", "https://a.example/login")
	if err != nil || got != value {
		t.Fatalf("Expand = %q, %v; want the file's line", got, err)
	}
}

func TestExpandOnlyOnBoundOrigins(t *testing.T) {
	s, err := Parse([]string{"PW=env:PW@https://a.example,http://127.0.0.1:8080"}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		code fsm.Code
	}{
		{"https://a.example/x", ""},
		{"https://login.a.example/x", ""},
		{"http://127.0.0.1:8080/", ""},
		{"http://127.0.0.1:8081/", fsm.OriginDenied},
		{"https://evil.example/", fsm.OriginDenied},
		{"http://a.example/", fsm.OriginDenied},
		{"about:blank", fsm.OriginDenied},
		{"data:text/html,x", fsm.OriginDenied},
	} {
		got, err := s.Expand("u {{secret.PW}}", tc.url)
		switch {
		case tc.code == "" && (err != nil || got != "u "+value):
			t.Errorf("%s: %q, %v", tc.url, got, err)
		case tc.code != "" && !fsm.IsCode(err, tc.code):
			t.Errorf("%s: %v, want %s", tc.url, err, tc.code)
		case tc.code != "" && (strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "{{secret.PW}}") || strings.Contains(err.Error(), "a.example")):
			t.Errorf("%s: %q names the value or the bound origins, or not the placeholder", tc.url, err)
		}
	}
	if _, err := s.Expand("{{secret.OTHER}}", "https://a.example/"); !fsm.IsCode(err, fsm.InvalidArgument) || !strings.Contains(err.Error(), "{{secret.OTHER}}") {
		t.Errorf("an unknown name: %v", err)
	}
	var none *Set
	if _, err := none.Expand("{{secret.PW}}", "https://a.example/"); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Errorf("no secrets: %v", err)
	}
	if got, err := none.Expand("plain", "https://a.example/"); err != nil || got != "plain" {
		t.Errorf("no placeholder: %q, %v", got, err)
	}
}

// TestRedactEveryForm: the value as a page echoes it — as it is, in a URL,
// HTML-escaped, inside JSON — comes back as the placeholder.
func TestRedactEveryForm(t *testing.T) {
	s, err := Parse([]string{"PW=env:PW@https://a.example"}, env)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forms(value) {
		in := "before " + f + " after"
		got := s.Redact(in)
		if got != "before {{secret.PW}} after" {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	if got := s.Redact("nothing here"); got != "nothing here" {
		t.Errorf("Redact changed %q", got)
	}
	var none *Set
	if none.Redact(value) != value || none.Len() != 0 {
		t.Error("a nil Set changed text")
	}
	if !Has("x {{secret.PW}}") || Has("{{secret.}}") || Has("{{ secret.PW }}") {
		t.Error("Has")
	}
}

// TestValueIsARedactedCopy: strings anywhere in a result (structs,
// pointers, slices, maps, interfaces, JSON text) come back redacted in a
// copy; the original and byte slices are untouched.
func TestValueIsARedactedCopy(t *testing.T) {
	s, err := Parse([]string{"PW=env:PW@https://a.example"}, env)
	if err != nil {
		t.Fatal(err)
	}
	type inner struct{ Msg string }
	type result struct {
		Title string
		Inner *inner
		List  []string
		Map   map[string]any
		Raw   json.RawMessage
		Image []byte
		n     int
	}
	raw, _ := json.Marshal(map[string]string{"v": value})
	orig := result{Title: "t " + value, Inner: &inner{Msg: value}, List: []string{"a", value}, Map: map[string]any{"k": value}, Raw: raw, Image: []byte(value), n: 7}
	got := s.Value(orig).(result)
	want := "{{secret.PW}}"
	if got.Title != "t "+want || got.Inner.Msg != want || got.List[1] != want || got.Map["k"] != want || string(got.Raw) != `{"v":"`+want+`"}` {
		t.Errorf("Value = %+v", got)
	}
	if string(got.Image) != value || got.n != 7 {
		t.Error("bytes or unexported fields changed")
	}
	if orig.Inner.Msg != value || orig.List[1] != value || orig.Map["k"] != value {
		t.Error("the original changed")
	}
	ref := fsm.Refusef(fsm.ElementNotFound, "no %s here", value)
	ref.Next = "type " + value
	rerr := s.Err(ref)
	if r, ok := fsm.AsRefusal(rerr); !ok || r.Code != fsm.ElementNotFound || strings.Contains(rerr.Error()+r.Next, "s3cr3t") {
		t.Errorf("Err(refusal) = %v", rerr)
	}
	base := errors.New("boom")
	ferr := s.Err(fmt.Errorf("read %s: %w", value, base))
	if strings.Contains(ferr.Error(), "s3cr3t") || !errors.Is(ferr, base) {
		t.Errorf("Err(failure) = %v", ferr)
	}
	if s.Err(base) != base {
		t.Error("an error without a secret was replaced")
	}
}

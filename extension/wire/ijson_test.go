package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestValidateRefusesWhatEncodingJSONAccepts lists each I-JSON violation
// Go's encoding/json lets through (shown by decoding it first), and checks
// Validate refuses it.
func TestValidateRefusesWhatEncodingJSONAccepts(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"byte order mark":          "\xEF\xBB\xBF{\"a\":1}",
		"invalid UTF-8":            "{\"a\":\"\xff\"}",
		"duplicate member":         `{"id":1,"id":2}`,
		"case-duplicate member":    `{"id":1,"ID":2}`,
		"Kelvin-sign duplicate":    `{"k":1,"\u212a":2}`,
		"lone high surrogate":      `{"a":"\ud800"}`,
		"lone low surrogate":       `{"a":"\udc00x"}`,
		"high without a low":       `{"a":"\ud800\u0041"}`,
		"number beyond a double":   `{"a":1e400}`,
		"negative beyond a double": `{"a":-1e400}`,
		"nested duplicate":         `{"a":{"b":1,"b":2}}`,
	}
	for name, in := range cases {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil && name != "number beyond a double" && name != "negative beyond a double" && name != "byte order mark" {
			t.Errorf("%s: encoding/json refuses it too (%v): the case shows nothing", name, err)
		}
		if err := Validate([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Validate = %v, want malformed", name, err)
		}
	}
}

func TestValidateSyntax(t *testing.T) {
	t.Parallel()
	good := []string{
		`{}`, ` {"a":[1,-2.5e3,0,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]} `,
		`{"a":{"b":{"c":[]}}}`, `{"a":4.9e-324}`, `{"a":"é"}`,
	}
	for _, in := range good {
		if err := Validate([]byte(in)); err != nil {
			t.Errorf("Validate(%s) = %v", in, err)
		}
	}
	bad := []string{
		``, `[]`, `"x"`, `1`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`,
		`{"a":+1}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":[1,]}`, `{} {}`, `{"a":"unterminated}`,
		`{a:1}`, `{"a":NaN}`, `{"a":Infinity}`,
	}
	for _, in := range bad {
		if err := Validate([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Validate(%q) = %v, want malformed", in, err)
		}
	}
}

func TestValidateDepthAtAndOverBound(t *testing.T) {
	t.Parallel()
	nest := func(depth int) string {
		// The outer object is level 1; each array adds one.
		return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	if err := Validate([]byte(nest(MaxDepth))); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	if err := Validate([]byte(nest(MaxDepth + 1))); !errors.Is(err, ErrMalformed) {
		t.Fatalf("depth %d: %v, want malformed", MaxDepth+1, err)
	}
}

func TestSyntaxErrorHoldsNoContent(t *testing.T) {
	t.Parallel()
	err := Validate([]byte(`{"token":"secret-value","token":"secret-value"}`))
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("error %v must not quote the body", err)
	}
}

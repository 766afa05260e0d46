package wire

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of objects and arrays in a frame body. CDP
// results the page surface asks for nest far less (a frame tree per
// level of iframe, a returned value a few levels); the bound keeps a
// hostile body from costing a deep recursion.
const MaxDepth = 64

// ErrMalformed is wrapped by every error for a body that is not strict
// I-JSON or not a message of this protocol.
var ErrMalformed = errors.New("wire: malformed frame body")

// SyntaxError reports why a body is not strict I-JSON, and where. It never
// holds the body's content. It wraps [ErrMalformed].
type SyntaxError struct {
	Offset int
	Reason string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("wire: malformed frame body at byte %d: %s", e.Offset, e.Reason)
}

// Unwrap returns ErrMalformed.
func (e *SyntaxError) Unwrap() error { return ErrMalformed }

// Validate reports whether body is one strict I-JSON object (RFC 7493):
// UTF-8 without a byte order mark; no duplicate member names in an object,
// nor names equal under case folding (Go's encoding/json matches names
// case-insensitively, so {"id":1,"ID":2} would be read ambiguously); no
// lone surrogate escapes; every number finite as a double; nesting at most
// [MaxDepth]; nothing after the object but white space. encoding/json
// accepts each of those violations, so each is checked here explicitly.
func Validate(body []byte) error {
	if len(body) >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
		return &SyntaxError{0, "a byte order mark"}
	}
	if !utf8.Valid(body) {
		return &SyntaxError{firstInvalidUTF8(body), "not UTF-8"}
	}
	v := validator{b: body}
	v.space()
	if v.i >= len(v.b) || v.b[v.i] != '{' {
		return v.fail("the body is not a JSON object")
	}
	if err := v.value(); err != nil {
		return err
	}
	v.space()
	if v.i != len(v.b) {
		return v.fail("data after the object")
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

type validator struct {
	b     []byte
	i     int
	depth int
}

func (v *validator) fail(reason string) error { return &SyntaxError{v.i, reason} }

func (v *validator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) value() error {
	if v.i >= len(v.b) {
		return v.fail("unexpected end")
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return v.object()
	case c == '[':
		return v.array()
	case c == '"':
		_, err := v.str(false)
		return err
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	}
	return v.fail("unexpected character")
}

func (v *validator) literal(word string) error {
	if len(v.b)-v.i < len(word) || string(v.b[v.i:v.i+len(word)]) != word {
		return v.fail("invalid literal")
	}
	v.i += len(word)
	return nil
}

func (v *validator) enter() error {
	v.depth++
	if v.depth > MaxDepth {
		return v.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	return nil
}

func (v *validator) object() error {
	if err := v.enter(); err != nil {
		return err
	}
	v.i++ // {
	v.space()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		v.depth--
		return nil
	}
	names := map[string]bool{} // folded member names
	for {
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != '"' {
			return v.fail("expected a member name")
		}
		at := v.i
		name, err := v.str(true)
		if err != nil {
			return err
		}
		key := fold(name)
		if names[key] {
			return &SyntaxError{at, "duplicate member name (or one equal under case folding)"}
		}
		names[key] = true
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return v.fail("expected ':'")
		}
		v.i++
		v.space()
		if err := v.value(); err != nil {
			return err
		}
		v.space()
		if v.i >= len(v.b) {
			return v.fail("unexpected end in an object")
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case '}':
			v.i++
			v.depth--
			return nil
		default:
			return v.fail("expected ',' or '}'")
		}
	}
}

func (v *validator) array() error {
	if err := v.enter(); err != nil {
		return err
	}
	v.i++ // [
	v.space()
	if v.i < len(v.b) && v.b[v.i] == ']' {
		v.i++
		v.depth--
		return nil
	}
	for {
		v.space()
		if err := v.value(); err != nil {
			return err
		}
		v.space()
		if v.i >= len(v.b) {
			return v.fail("unexpected end in an array")
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case ']':
			v.i++
			v.depth--
			return nil
		default:
			return v.fail("expected ',' or ']'")
		}
	}
}

// str reads a string, checking its escapes; when decode is set it returns
// the decoded text (member names only: values are checked, not kept).
func (v *validator) str(decode bool) (string, error) {
	v.i++ // "
	var out []byte
	start := v.i
	for v.i < len(v.b) {
		c := v.b[v.i]
		switch {
		case c == '"':
			if decode && out == nil {
				out = v.b[start:v.i]
			}
			v.i++
			return string(out), nil
		case c < 0x20:
			return "", v.fail("a control character in a string")
		case c != '\\':
			if decode {
				out = append(out, c)
			}
			v.i++
			continue
		}
		// An escape.
		if v.i+1 >= len(v.b) {
			return "", v.fail("unexpected end in an escape")
		}
		e := v.b[v.i+1]
		switch e {
		case '"', '\\', '/':
			out = appendIf(decode, out, e)
		case 'b':
			out = appendIf(decode, out, '\b')
		case 'f':
			out = appendIf(decode, out, '\f')
		case 'n':
			out = appendIf(decode, out, '\n')
		case 'r':
			out = appendIf(decode, out, '\r')
		case 't':
			out = appendIf(decode, out, '\t')
		case 'u':
			r, ok := hex4(v.b[v.i+2:])
			if !ok {
				return "", v.fail("an invalid \\u escape")
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // high: a low must follow
				rest := v.b[v.i+6:]
				lo, ok := rune(0), len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u'
				if ok {
					lo, ok = hex4(rest[2:])
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return "", v.fail("a lone surrogate escape")
				}
				if decode {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, lo))
				}
				v.i += 6
			case utf16.IsSurrogate(r):
				return "", v.fail("a lone surrogate escape")
			case decode:
				out = utf8.AppendRune(out, r)
			}
			v.i += 6
			continue
		default:
			return "", v.fail("an invalid escape")
		}
		v.i += 2
	}
	return "", v.fail("unterminated string")
}

func appendIf(decode bool, out []byte, c byte) []byte {
	if decode {
		return append(out, c)
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a JSON number and checks that it is finite as a double
// (I-JSON: numbers beyond IEEE 754 binary64 do not interoperate).
func (v *validator) number() error {
	start := v.i
	if v.b[v.i] == '-' {
		v.i++
	}
	switch {
	case v.i < len(v.b) && v.b[v.i] == '0':
		v.i++
	case v.i < len(v.b) && v.b[v.i] >= '1' && v.b[v.i] <= '9':
		v.digits()
	default:
		return v.fail("an invalid number")
	}
	if v.i < len(v.b) && v.b[v.i] == '.' {
		v.i++
		if v.digits() == 0 {
			return v.fail("an invalid number")
		}
	}
	if v.i < len(v.b) && (v.b[v.i] == 'e' || v.b[v.i] == 'E') {
		v.i++
		if v.i < len(v.b) && (v.b[v.i] == '+' || v.b[v.i] == '-') {
			v.i++
		}
		if v.digits() == 0 {
			return v.fail("an invalid number")
		}
	}
	if _, err := strconv.ParseFloat(string(v.b[start:v.i]), 64); err != nil {
		return &SyntaxError{start, "a number that does not fit a double"}
	}
	return nil
}

func (v *validator) digits() int {
	n := 0
	for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
		v.i++
		n++
	}
	return n
}

// fold maps a member name to one spelling per class of names that
// encoding/json would match to each other (bytes.EqualFold: runes in the
// same simple case-folding orbit).
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := []byte(s)
		for i, c := range b {
			if c >= 'a' && c <= 'z' {
				b[i] = c - ('a' - 'A') // the least rune of its orbit, as below
			}
		}
		return string(b)
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		out = append(out, m)
	}
	return string(out)
}

// Package secret holds the values a person names for an agent to type
// without reading them: each is bound to the origins it may be typed into,
// the agent writes its placeholder ({{secret.NAME}}), the Runner types the
// value in its place only into a document of a bound origin, and every
// output passes [Set.Redact], which writes the placeholder back where the
// value (or its URL, HTML or JSON encoding) appears.
//
// A Set is immutable after [Parse] and safe for concurrent use. The zero
// and nil Set hold no secrets: Redact returns its input.
package secret

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// MinValueLen is the shortest value a secret may have: a shorter one would
// be redacted out of ordinary text.
const MinValueLen = 4

// MaxSecrets bounds how many secrets one Runner holds.
const MaxSecrets = 32

// placeholder is the form an agent writes; a name is 1..32 of [A-Za-z0-9_].
var placeholder = regexp.MustCompile(`\{\{secret\.([A-Za-z0-9_]{1,32})\}\}`)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// Placeholder is the placeholder of the secret named name.
func Placeholder(name string) string { return "{{secret." + name + "}}" }

type secret struct {
	name  string
	value string
	gate  *origin.Gate
}

// Set is the secrets of one Runner.
type Set struct {
	byName map[string]*secret
	names  []string
	redact *strings.Replacer
}

// Parse reads the owner's --secret flags: NAME=env:VAR@ORIGIN[,ORIGIN…]
// (the value of an environment variable) or NAME=file:PATH@ORIGIN[,…] (the
// contents of a file only its owner may read, a final newline dropped).
// Origins are written as --allow writes them and cover subdomains the same
// way. Errors are one line naming the flag's NAME, never a value.
func Parse(specs []string, getenv func(string) string) (*Set, error) {
	s := &Set{byName: map[string]*secret{}}
	if len(specs) > MaxSecrets {
		return nil, fmt.Errorf("at most %d secrets", MaxSecrets)
	}
	for _, spec := range specs {
		sec, err := parseOne(spec, getenv)
		if err != nil {
			return nil, err
		}
		if s.byName[sec.name] != nil {
			return nil, fmt.Errorf("--secret %s is given twice", sec.name)
		}
		s.byName[sec.name] = sec
		s.names = append(s.names, sec.name)
	}
	s.redact = newRedactor(s.byName)
	return s, nil
}

func parseOne(spec string, getenv func(string) string) (*secret, error) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || !nameRE.MatchString(name) {
		return nil, errors.New("--secret takes NAME=env:VAR@ORIGIN or NAME=file:PATH@ORIGIN (NAME: letters, digits, _)")
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 || strings.TrimSpace(rest[at+1:]) == "" {
		return nil, fmt.Errorf("--secret %s names no origin: bind it with @ORIGIN (e.g. %s=env:VAR@https://shop.example)", name, name)
	}
	source, origins := rest[:at], strings.Split(rest[at+1:], ",")
	gate, dropped := origin.New(origin.Attached, origins)
	if len(dropped) > 0 {
		return nil, fmt.Errorf("--secret %s: origin %q: %s", name, dropped[0].Entry, dropped[0].Reason)
	}
	var value string
	switch {
	case strings.HasPrefix(source, "env:"):
		value = getenv(strings.TrimPrefix(source, "env:"))
		if value == "" {
			return nil, fmt.Errorf("--secret %s: the environment variable %s is empty or unset", name, strings.TrimPrefix(source, "env:"))
		}
	case strings.HasPrefix(source, "file:"):
		v, err := readPrivate(strings.TrimPrefix(source, "file:"))
		if err != nil {
			return nil, fmt.Errorf("--secret %s: %w", name, err)
		}
		value = v
	default:
		return nil, fmt.Errorf("--secret %s: the value comes from env:VAR or file:PATH", name)
	}
	switch {
	case utf8.RuneCountInString(value) < MinValueLen:
		return nil, fmt.Errorf("--secret %s: the value is shorter than %d characters, too short to redact", name, MinValueLen)
	case strings.ContainsAny(value, "\r\n\x00") || !utf8.ValidString(value):
		return nil, fmt.Errorf("--secret %s: the value is not one line of text", name)
	}
	return &secret{name: name, value: value, gate: gate}, nil
}

// maxFileBytes bounds a secret file.
const maxFileBytes = 4096

// readPrivate reads a secret file: a regular file (not a link) owned by
// this user that neither its group nor others may read.
func readPrivate(path string) (string, error) {
	f, err := platform.OpenNoFollow(path)
	if err != nil {
		return "", errors.New("the file cannot be opened (a missing file or a link)")
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil || !st.Mode().IsRegular():
		return "", errors.New("the file is not a regular file")
	case st.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("the file is readable or writable by others (mode %04o): chmod 600 it", st.Mode().Perm())
	}
	if !platform.OwnedByMe(f) {
		return "", errors.New("the file belongs to another user")
	}
	b := make([]byte, maxFileBytes+1)
	n, _ := f.Read(b)
	if n > maxFileBytes {
		return "", fmt.Errorf("the file is larger than %d bytes", maxFileBytes)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b[:n]), "\n"), "\r"), nil
}

// Len is how many secrets s holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.names)
}

// Names are the secrets' names, in flag order (never their values).
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Has reports whether text holds a placeholder.
func Has(text string) bool { return placeholder.MatchString(text) }

// Check refuses text when a placeholder in it names no secret, or one not
// bound to the origin of docURL: the refusal names the placeholder, never
// the value nor the origins it is bound to.
func (s *Set) Check(text, docURL string) error {
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		var sec *secret
		if s != nil {
			sec = s.byName[m[1]]
		}
		if sec == nil {
			return fsm.Refusef(fsm.InvalidArgument, "%s names no secret of this server", m[0])
		}
		if !strings.HasPrefix(docURL, "http://") && !strings.HasPrefix(docURL, "https://") || sec.gate.Check(docURL) != nil {
			return fsm.Refusef(fsm.OriginDenied, "%s is not typed into this page's origin: the owner bound it to other origins", m[0])
		}
	}
	return nil
}

// Expand is text with each placeholder replaced by its value, when every
// one is bound to the origin of docURL (else Check's refusal).
func (s *Set) Expand(text, docURL string) (string, error) {
	if err := s.Check(text, docURL); err != nil {
		return "", err
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		return s.byName[placeholder.FindStringSubmatch(m)[1]].value
	}), nil
}

// Redact is text with every secret's value, and its URL, HTML and JSON
// encodings, replaced by its placeholder. It is the one redaction every
// output passes.
func (s *Set) Redact(text string) string {
	if s == nil || s.redact == nil {
		return text
	}
	return s.redact.Replace(text)
}

// newRedactor replaces every form of every value, the longest first so
// that a value inside another secret's value does not split it.
func newRedactor(byName map[string]*secret) *strings.Replacer {
	type pair struct{ from, to string }
	var pairs []pair
	seen := map[string]bool{}
	for _, sec := range byName {
		for _, f := range forms(sec.value) {
			if !seen[f] {
				seen[f] = true
				pairs = append(pairs, pair{f, Placeholder(sec.name)})
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	slices.SortFunc(pairs, func(a, b pair) int { return len(b.from) - len(a.from) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.from, p.to)
	}
	return strings.NewReplacer(args...)
}

// forms are the ways a value reaches an output: as it is, as a page's
// encodeURIComponent or a URL's query or path writes it, HTML-escaped, and
// each of those as a JSON string writes it.
func forms(v string) []string {
	base := []string{v, encodeURIComponent(v), url.QueryEscape(v), url.PathEscape(v), html.EscapeString(v)}
	out := slices.Clone(base)
	for _, b := range base {
		out = append(out, jsonInner(b, true), jsonInner(b, false))
	}
	return out
}

// jsonInner is v as a JSON string writes it, without its quotes.
func jsonInner(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// encodeURIComponent is JavaScript's: every byte but A-Z a-z 0-9 - _ . ! ~
// * ' ( ) percent-encoded, in upper-case hex.
func encodeURIComponent(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

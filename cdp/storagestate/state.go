// Package storagestate reads and writes a browser's storage state — its
// cookies and the local storage of its origins, in Playwright's
// storageState shape — and keeps out of it every entry the origin gate
// denies: nothing of a denied origin crosses into a file, or from a file
// into a browser.
//
// A cookie ignores ports and, with a Domain attribute, reaches every
// subdomain; it crosses only when the gate allows its host (which then
// covers the subdomains too) for https, and for http as well when it is
// not Secure — on the scheme's default port, so an allowlist entry that
// names another port admits no cookie. Local storage belongs to one exact
// origin, which must be allowed.
//
// A file is the user's alone: written 0600 and never over an existing
// file or through a link in its last element; read only from a regular
// file of the user's that nobody else can read, at most MaxFileBytes.
package storagestate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// Bounds of a storage state.
const (
	MaxFileBytes = 8 << 20 // one file
	MaxCookies   = 4096    // cookies in one file
	MaxOrigins   = 256     // origins with local storage in one file
	MaxItems     = 4096    // local storage items of one origin
)

// State is a browser's storage state.
type State struct {
	Cookies []Cookie        `json:"cookies"`
	Origins []OriginStorage `json:"origins"`
}

// Cookie is one cookie, as Playwright writes it (Expires: seconds since
// the epoch, -1 for a session cookie).
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite,omitempty"` // Strict, Lax or None
}

// OriginStorage is the local storage of one origin (scheme://host[:port]).
type OriginStorage struct {
	Origin       string `json:"origin"`
	LocalStorage []Item `json:"localStorage"`
}

// Item is one local storage entry.
type Item struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Dropped counts the entries a filter kept out.
type Dropped struct {
	Cookies int `json:"cookies"`
	Origins int `json:"origins"`
}

// Filter returns the entries of s the gate allows, and counts the others.
func Filter(s State, g *origin.Gate) (State, Dropped) {
	out := State{Cookies: []Cookie{}, Origins: []OriginStorage{}}
	var d Dropped
	for _, c := range s.Cookies {
		if CookieAllowed(c, g) {
			out.Cookies = append(out.Cookies, c)
		} else {
			d.Cookies++
		}
	}
	for _, o := range s.Origins {
		if OriginAllowed(o.Origin, g) {
			out.Origins = append(out.Origins, o)
		} else {
			d.Origins++
		}
	}
	return out, d
}

// CookieAllowed reports whether c may cross under g: see the package doc.
func CookieAllowed(c Cookie, g *origin.Gate) bool {
	host := strings.TrimPrefix(c.Domain, ".")
	if host == "" || strings.ContainsAny(host, "/\\@?# ") {
		return false
	}
	if !g.Allowed("https://" + host + "/") {
		return false
	}
	return c.Secure || g.Allowed("http://"+host+"/")
}

// OriginAllowed reports whether o is an http(s) origin, exactly
// scheme://host[:port], that g allows.
func OriginAllowed(o string, g *origin.Gate) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	return g.Allowed(o)
}

// check refuses a state over its bounds.
func (s State) check() error {
	if len(s.Cookies) > MaxCookies {
		return fsm.Refusef(fsm.LimitExceeded, "the storage state holds %d cookies; at most %d", len(s.Cookies), MaxCookies)
	}
	if len(s.Origins) > MaxOrigins {
		return fsm.Refusef(fsm.LimitExceeded, "the storage state holds %d origins; at most %d", len(s.Origins), MaxOrigins)
	}
	for _, o := range s.Origins {
		if len(o.LocalStorage) > MaxItems {
			return fsm.Refusef(fsm.LimitExceeded, "an origin of the storage state holds %d items; at most %d", len(o.LocalStorage), MaxItems)
		}
	}
	return nil
}

// WriteFile writes s to a new file at path, mode 0600: an existing file
// (a link included) is refused, never overwritten.
func WriteFile(path string, s State) error {
	if err := s.check(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("storagestate: encode: %w", err)
	}
	if len(b) > MaxFileBytes {
		return fsm.Refusef(fsm.LimitExceeded, "the storage state is %d bytes; at most %d", len(b), MaxFileBytes)
	}
	// O_EXCL with O_CREATE fails on any existing name, a link included
	// (POSIX; Windows alike), so no link is ever followed.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fsm.Refuse(fsm.InvalidArgument, "the storage state file exists already: name a new file (it is never overwritten)")
	}
	if err != nil {
		return fmt.Errorf("storagestate: create: %w", err)
	}
	if err := f.Chmod(0o600); err != nil { // whatever the umask did
		f.Close()
		return fmt.Errorf("storagestate: chmod: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("storagestate: write: %w", err)
	}
	return f.Close()
}

// ReadFile reads a storage state from the user's own regular file that
// nobody else can read (no link in its last element), strictly: an
// unknown field is refused.
func ReadFile(path string) (State, error) {
	f, err := platform.OpenNoFollow(path)
	if errors.Is(err, platform.ErrLink) {
		return State{}, fsm.Refuse(fsm.InvalidArgument, "the storage state file is a link: name the file itself")
	}
	if err != nil {
		return State{}, fmt.Errorf("storagestate: open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return State{}, fmt.Errorf("storagestate: stat: %w", err)
	}
	if !fi.Mode().IsRegular() || !platform.OwnedByMe(f) || fi.Mode().Perm()&0o077 != 0 {
		return State{}, fsm.Refuse(fsm.InvalidArgument, "the storage state file must be a regular file of yours that nobody else can read (chmod 600)")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return State{}, fmt.Errorf("storagestate: read: %w", err)
	}
	if len(b) > MaxFileBytes {
		return State{}, fsm.Refusef(fsm.LimitExceeded, "the storage state file is over %d bytes", MaxFileBytes)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || dec.More() {
		return State{}, fsm.Refuse(fsm.InvalidArgument, "the storage state file is not a storage state ({\"cookies\":[…],\"origins\":[…]})")
	}
	return s, s.check()
}

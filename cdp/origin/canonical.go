package origin

import (
	"slices"
	"strconv"
	"strings"
)

// Canonical returns the entries a gate built from entries would keep, each
// written as the gate reads it ([scheme://]host[:port], host as the WHATWG
// parser serializes it), sorted and without duplicates. Two allowlists that
// authorize the same entries have the same canonical form, so a person
// approving one approves exactly what the gate enforces. Dropped entries
// authorize nothing and are left out; an empty result authorizes nothing for
// an attached browser.
func Canonical(entries []string) []string {
	out := []string{}
	for _, raw := range entries {
		e, reason := parseEntry(raw)
		if reason != "" {
			continue
		}
		out = append(out, e.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String writes e in canonical form.
func (e entry) String() string {
	var b strings.Builder
	if e.scheme != "" {
		b.WriteString(e.scheme + "://")
	}
	b.WriteString(e.host)
	if e.port >= 0 {
		b.WriteString(":" + strconv.Itoa(e.port))
	}
	return b.String()
}

// Covers reports whether the allowlist granted authorizes everything asked
// authorizes, entry by entry: every entry of asked is covered by one entry of
// granted (same or narrower scheme, same or one port, same host or a
// subdomain at a dot boundary; IP entries only by the same IP). Both are
// read as an attached browser's list: an empty list authorizes nothing, so
// it is covered by every list. An entry that does not parse in asked is
// dropped by the gate too and asks for nothing.
func Covers(granted, asked []string) bool {
	var have []entry
	for _, raw := range granted {
		if e, reason := parseEntry(raw); reason == "" {
			have = append(have, e)
		}
	}
	for _, raw := range asked {
		a, reason := parseEntry(raw)
		if reason != "" {
			continue
		}
		if !slices.ContainsFunc(have, func(g entry) bool { return g.coversEntry(a) }) {
			return false
		}
	}
	return true
}

// coversEntry reports whether every URL a authorizes, g authorizes too.
func (g entry) coversEntry(a entry) bool {
	switch {
	case g.scheme == "" && a.scheme != "" && a.scheme != "http" && a.scheme != "https":
		return false // "" is http and https only; ws and wss need their own entry
	case g.scheme != "" && a.scheme != g.scheme:
		return false // a without a scheme is two schemes
	case g.port >= 0 && a.port != g.port:
		return false // a without a port is every port
	case g.ip || a.ip:
		return g.ip && a.ip && g.host == a.host
	}
	return a.host == g.host || strings.HasSuffix(a.host, "."+g.host)
}

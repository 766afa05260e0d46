// Package deptest checks the import boundaries of ARCHITECTURE.md's package
// table, as tailscale's deptest does.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden lists, for each package, imports it must not reach, directly or
// through its dependencies.
var forbidden = map[string][]string{
	"fsm":       {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"consent":   {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"reconnect": {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"lease":     {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"platform":  {"github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/consent", "github.com/webcodex/webcodex/reconnect", "github.com/webcodex/webcodex/lease"},
	// The origin gate is a pure parser, so the approval digest (consent)
	// can canonicalize allowlists with the gate's own rules: it must stay
	// free of I/O and of the CDP transport.
	"cdp/origin": {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
}

// pureParsers are packages that parse text and open no sockets: net/url,
// net/netip, and the origin gate (its own rule above keeps it so).
var pureParsers = map[string]bool{"net/url": true, "net/netip": true, "github.com/webcodex/webcodex/cdp/origin": true}

func TestImportBoundaries(t *testing.T) {
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "github.com/webcodex/webcodex/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, b := range bad {
			for d := range deps {
				if d == b || (strings.HasPrefix(d, b+"/") && !pureParsers[d]) {
					t.Errorf("%s depends on %s, which ARCHITECTURE.md forbids", pkg, d)
				}
			}
		}
	}
}

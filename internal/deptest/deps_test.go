// Package deptest checks the import boundaries between the packages: the
// pure state machines and parsers open no sockets and never reach the CDP
// transport, the platform layer stays below the machines, and the command
// line's layers are kept (TestCommandLayers).
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden lists, for each package, imports it must not reach, directly or
// through its dependencies.
var forbidden = map[string][]string{
	"fsm":        {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"consent":    {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"reconnect":  {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"lease":      {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"mcpsession": {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	"platform":   {"github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/consent", "github.com/webcodex/webcodex/reconnect", "github.com/webcodex/webcodex/lease"},
	// The origin gate is a pure parser, so the approval digest (consent)
	// can canonicalize allowlists with the gate's own rules: it must stay
	// free of I/O and of the CDP transport.
	"cdp/origin": {"net", "net/http", "os/exec", "github.com/webcodex/webcodex/cdp", "github.com/webcodex/webcodex/platform"},
	// The network boundary judges with an allowlist on one CDP connection
	// and a directory; it is started by the Runner for one browser and
	// knows neither consent, leases, the bridge nor the command line.
	"netguard": {"github.com/webcodex/webcodex/consent", "github.com/webcodex/webcodex/reconnect", "github.com/webcodex/webcodex/lease", "github.com/webcodex/webcodex/extension", "github.com/webcodex/webcodex/cmd"},
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
					t.Errorf("%s depends on %s, which its layer forbids", pkg, d)
				}
			}
		}
	}
}

const module = "github.com/webcodex/webcodex"

// deps lists the packages pkgs import, directly or through their
// dependencies, themselves included.
func deps(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
	}
	m := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		m[d] = true
	}
	return m
}

// under reports whether pkg is root or a package below it.
func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// TestCommandLayers keeps the command line's layers: the CLI, what it
// shares with the other verbs (cmdutil), the local API and the operation
// table (op) are thin: they reach no browser machinery and link no CDP
// library (cdproto) — only the origin gate's pure parser, which checks an
// --allow entry exactly as a browser's gate keeps it; the Runner never
// reaches up into the CLI or the MCP server.
func TestCommandLayers(t *testing.T) {
	machinery := []string{"/cdp", "/consent", "/lease", "/reconnect", "/platform", "/extension", "/cmd/internal/runner", "/cmd/internal/mcp"}
	for _, pkg := range []string{"/cmd/internal/cli", "/cmd/internal/cmdutil", "/cmd/internal/localapi", "/cmd/internal/op"} {
		for d := range deps(t, module+pkg) {
			if under(d, "github.com/chromedp") {
				t.Errorf("%s links the CDP library: %s", pkg, d)
			}
			for _, m := range machinery {
				if under(d, module+m) && !pureParsers[d] {
					t.Errorf("%s reaches %s", pkg, d)
				}
			}
		}
	}
	rules := map[string][]string{
		"/cmd/internal/localapi": {"/cmd/internal/cli", "/cmd/internal/cmdutil", "/cmd/internal/runner", "/cmd/internal/mcp", "/cdp"},
		"/cmd/internal/op":       {"/cmd/internal/cli", "/cmd/internal/cmdutil", "/cmd/internal/localapi", "/cmd/internal/runner", "/cmd/internal/mcp", "/cdp"},
		"/cmd/internal/runner":   {"/cmd/internal/cli", "/cmd/internal/mcp"},
		"/cmd/internal/mcp":      {"/cmd/internal/cli"},
	}
	for pkg, bad := range rules {
		for d := range deps(t, module+pkg) {
			for _, b := range bad {
				if under(d, module+b) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}

// TestShippedBinariesLinkNoTestCode: the binaries a user installs link
// neither the testing package, nor the property harness (rapid, fsmtest),
// nor any of the tests' helpers, which are everything under internal/.
func TestShippedBinariesLinkNoTestCode(t *testing.T) {
	for d := range deps(t, module+"/cmd/webcodex", module+"/cmd/webcodex-bridge-host") {
		if d == "testing" || under(d, "pgregory.net/rapid") || under(d, module+"/fsm/fsmtest") || under(d, module+"/internal") {
			t.Errorf("the shipped binaries link %s", d)
		}
	}
}

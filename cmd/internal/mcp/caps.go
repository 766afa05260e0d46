package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webcodex/webcodex/cmd/internal/op"
)

// Capability groups: like Playwright MCP's --caps, tools an agent rarely
// needs are listed only when the owner names their group, since the whole
// tool list reaches the model on every turn. A tool with no group is always
// listed.
const (
	CapVision   = op.CapVision   // coordinate mouse tools (browser_mouse_*_xy)
	CapPDF      = op.CapPDF      // browser_pdf_save
	CapDevtools = op.CapDevtools // raw CDP and probing: debugging webcodex or a page
)

// AllCaps lists the groups in the order they are shown.
var AllCaps = []string{CapVision, CapPDF, CapDevtools}

// Caps is the set of groups turned on.
type Caps map[string]bool

// ParseCaps parses --caps: a comma-separated list of groups, or "all".
func ParseCaps(s string) (Caps, error) {
	out := Caps{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			for _, c := range AllCaps {
				out[c] = true
			}
		case slices.Contains(AllCaps, f):
			out[f] = true
		default:
			return nil, fmt.Errorf("unknown capability group %q (known: %s, or all)", f, strings.Join(AllCaps, ", "))
		}
	}
	return out, nil
}

// List returns the groups turned on, in order.
func (c Caps) List() []string {
	out := []string{}
	for _, g := range AllCaps {
		if c[g] {
			out = append(out, g)
		}
	}
	return out
}

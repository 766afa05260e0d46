package mcp

import (
	"slices"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/op"
)

// legacyTools are the MCP tools not yet derived from the operation table
// (package op): each is to move there. A tool in neither is refused.
var legacyTools = []string{
	"browser_launch", "browser_attach", "browser_reconnect", "browser_close", "browser_adopt",
	"browser_tabs", "browser_cdp",
	"browser_downloads",
}

// TestToolsAreTheTable: every tool the server lists (every capability
// group on) is a tool of the operation table, with its declared
// description, or a legacy tool; and every tool of the table is listed.
func TestToolsAreTheTable(t *testing.T) {
	declared := map[string]op.Tool{}
	for _, d := range op.All() {
		for _, tool := range d.Declared().MCP {
			declared[tool.Name] = tool
		}
	}
	listed := map[string]bool{}
	for _, tool := range listTools(t, serverOpts{}).Tools {
		listed[tool.Name] = true
		d, ok := declared[tool.Name]
		switch {
		case !ok && !slices.Contains(legacyTools, tool.Name):
			t.Errorf("%s is listed but is no tool of the operation table", tool.Name)
		case !ok:
		case tool.Description != d.Desc:
			t.Errorf("%s: description %q, the table says %q", tool.Name, tool.Description, d.Desc)
		}
	}
	for name := range declared {
		if !listed[name] {
			t.Errorf("the table's tool %s is not listed", name)
		}
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of tools/list as a client receives it: an agent host sends it
// to the model on every turn (Playwright MCP's default list is about 20 KB).
const (
	maxToolListBytes    = 14 << 10 // the default list
	maxAllToolListBytes = 20 << 10 // every capability group on (--caps all)
)

// TestToolListSize: the real server's tools/list, every tool with its schema
// and description, stays under its bound by default and with every
// capability group on; a group's tools are listed only when it is on.
func TestToolListSize(t *testing.T) {
	def := listTools(t, serverOpts{defaultCaps: true})
	all := listTools(t, serverOpts{})
	for _, l := range []struct {
		name  string
		res   *sdk.ListToolsResult
		bound int
	}{{"default", def, maxToolListBytes}, {"--caps all", all, maxAllToolListBytes}} {
		b, err := json.Marshal(l.res)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, tool := range l.res.Tools {
			tb, _ := json.Marshal(tool)
			per[tool.Name] = len(tb)
		}
		t.Logf("tools/list %s: %d tools, %d bytes; per tool: %v", l.name, len(l.res.Tools), len(b), per)
		if len(b) > l.bound {
			t.Errorf("tools/list %s is %d bytes, want at most %d", l.name, len(b), l.bound)
		}
	}
	names := func(r *sdk.ListToolsResult) []string {
		var out []string
		for _, tool := range r.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if n := names(def); slices.Contains(n, "browser_cdp") || !slices.Contains(n, "browser_click") {
		t.Errorf("the default list lists browser_cdp (group devtools) or lacks browser_click: %v", n)
	}
	if n := names(all); !slices.Contains(n, "browser_cdp") {
		t.Errorf("--caps all does not list browser_cdp: %v", n)
	}
}

func listTools(t *testing.T, o serverOpts) *sdk.ListToolsResult {
	t.Helper()
	s := startServer(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

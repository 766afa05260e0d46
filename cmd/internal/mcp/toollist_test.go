package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// maxToolListBytes bounds tools/list as a client receives it: an agent
// host sends it to the model on every turn (Playwright MCP's default list
// is about 20 KB).
const maxToolListBytes = 14 << 10

// TestToolListSize: the real server's tools/list, every tool with its schema
// and description, stays under the bound.
func TestToolListSize(t *testing.T) {
	s := startServer(t, serverOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, tool := range res.Tools {
		tb, _ := json.Marshal(tool)
		per[tool.Name] = len(tb)
	}
	t.Logf("tools/list: %d tools, %d bytes; per tool: %v", len(res.Tools), len(b), per)
	if len(b) > maxToolListBytes {
		t.Errorf("tools/list is %d bytes, want at most %d", len(b), maxToolListBytes)
	}
}

package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// bigTable is 3,000 rows with a button each, and "Load more" adding 100.
func bigTable() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>Table</title><h1>Big table</h1><table id=t><tbody>`)
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, `<tr><td>%d</td><td>Item %d</td><td><button onclick="hit(%d)">Open</button></td></tr>`, i, i, i)
	}
	b.WriteString(`</tbody></table><button onclick="more()">Load more</button>
<script>window.hits = []; function hit(i) { hits.push(i); }
function more() { const tb = document.querySelector('#t tbody'); const n = tb.rows.length;
 for (let i = n + 1; i <= n + 100; i++) { const tr = tb.insertRow(); tr.insertCell().textContent = i; tr.insertCell().textContent = 'Item ' + i;
  const btn = document.createElement('button'); btn.textContent = 'Open'; btn.onclick = () => hit(i); tr.insertCell().appendChild(btn); } }</script>`)
	return b.String()
}

// TestBigPageThroughMCP: on the 3,000-row table an agent learns the refs of
// row 2,999's button and of "Load more" in two calls (an outline whose rows
// fold, then a query) under 30 KB as a client receives them, and acts on
// both by bare ref: each means the snapshot that listed it.
func TestBigPageThroughMCP(t *testing.T) {
	t.Parallel() // its own MCP server, Runner and browser
	needChromium(t)
	srv := fixture(t, map[string]string{"/": bigTable()})
	s := startServer(t, serverOpts{})
	s.ok("browser_navigate", map[string]any{"url": srv.URL + "/"})

	snap := s.call("browser_snapshot", nil)
	if !regexp.MustCompile(`… 2998 more row`).MatchString(snap.text) {
		t.Fatalf("the rows did not fold:\n%.2000s", snap.text)
	}
	more := ref(t, snap.text, `button "Load more"`)
	find := s.call("browser_snapshot", map[string]any{"query": map[string]any{"role": "row", "text": "Item 2999"}})
	open := regexp.MustCompile(`row "2999 \| Item 2999" › button "Open"[^\n]*\[(e[0-9]+)\]`).FindStringSubmatch(find.text)
	if find.isError || open == nil {
		t.Fatalf("query:\n%s", find.text)
	}
	bytes := wire(t, snap) + wire(t, find)
	t.Logf("2 calls, %d bytes as a client receives them (outline %d, query %d)", bytes, wire(t, snap), wire(t, find))
	if bytes > 30000 {
		t.Fatalf("2 calls took %d bytes, over 30 KB", bytes)
	}

	s.ok("browser_click", map[string]any{"ref": open[1]})
	s.ok("browser_click", map[string]any{"ref": more})
	v := s.ok("browser_evaluate", map[string]any{"expression": "hits.join() + '/' + document.querySelectorAll('tr').length"})
	if v["value"] != "2999/3100" {
		t.Fatalf("after the two clicks: %v, want row 2999 hit and 3,100 rows", v["value"])
	}

	whole := s.call("browser_snapshot", map[string]any{"maxChars": 200000})
	t.Logf("the whole page asked for: %d bytes in one call (complete %v)", wire(t, whole), whole.body["complete"])
}

// wire is a result's size as the client received it.
func wire(t *testing.T, r result) int {
	t.Helper()
	b, err := json.Marshal(r.raw)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

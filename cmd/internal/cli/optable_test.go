package cli

import (
	"slices"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// legacyVerbs are the verbs not (yet) derived from the operation table
// (package op): the Runner's routes still declared in localapi, and the
// verbs that are the CLI's own. A verb in neither is refused.
var legacyVerbs = []string{
	"version", "launch", "pages", "open", "close", "demo",
	"attach", "approve", "reconnect", "close-page",
	"tabs", "downloads", "handover", "activate", "serve", "bridge",
	"help", "completion",
}

// TestVerbsAreTheTable: every verb of the command tree is the verb of an
// operation of the table, with its declared use line and help, or a legacy
// verb; every verb the table declares is in the tree once.
func TestVerbsAreTheTable(t *testing.T) {
	f := &Factory{IO: cmdutil.IO{}}
	root := NewRootCmd(f)
	root.AddCommand(NewCmdDiscover(f), NewCmdBridge(f)) // as the binary adds them (main.go)
	declared := map[string]*op.Verb{}
	for _, d := range op.All() {
		if v := d.Declared().CLI; v != nil {
			declared[v.Name] = v
		}
	}
	seen := map[string]int{}
	for _, c := range root.Commands() {
		seen[c.Name()]++
		v, ok := declared[c.Name()]
		switch {
		case !ok && !slices.Contains(legacyVerbs, c.Name()):
			t.Errorf("verb %s is no verb of the operation table", c.Name())
		case !ok:
		case c.Use != v.Use || c.Short != v.Short:
			t.Errorf("verb %s: %q / %q, the table says %q / %q", c.Name(), c.Use, c.Short, v.Use, v.Short)
		}
	}
	for name := range declared {
		if seen[name] != 1 {
			t.Errorf("the table's verb %s is in the tree %d times, want once", name, seen[name])
		}
	}
}

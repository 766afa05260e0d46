package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/spec"
)

// TestMutationsApply: every seeded bug's text is in its file exactly once
// (a stale mutation seeds nothing), and spec/ states their number.
func TestMutationsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	names := map[string]bool{}
	for _, m := range mutations {
		if names[m.Name] {
			t.Errorf("%s: named twice", m.Name)
		}
		names[m.Name] = true
		b, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		text := string(b)
		for _, p := range m.Patches {
			if n := strings.Count(text, p.Old); n != 1 {
				t.Errorf("%s: %q occurs %d times in %s, want once", m.Name, firstLine(p.Old), n, m.File)
				continue
			}
			text = strings.Replace(text, p.Old, p.New, 1)
		}
		if len(m.Pkgs) == 0 {
			t.Errorf("%s: no package to run", m.Name)
		}
	}
	if len(mutations) != spec.SeededBugs {
		t.Errorf("scripts/mutate seeds %d bugs, spec.SeededBugs says %d", len(mutations), spec.SeededBugs)
	}
}

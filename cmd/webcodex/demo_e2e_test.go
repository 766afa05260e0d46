package main_test

import (
	"strings"
	"testing"
)

// TestDemoSaysNoRunnerNotice: `webcodex demo` stops the Runner it starts,
// so it does not announce a background Runner.
func TestDemoSaysNoRunnerNotice(t *testing.T) {
	t.Parallel() // its own state directory
	e := newEnv(t)
	code, _, errs := e.run("demo")
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, errs)
	}
	if strings.Contains(errs, "started a Runner in the background") {
		t.Fatalf("demo announced a Runner it stops itself:\n%s", errs)
	}
	if e.running() {
		t.Fatal("demo left its Runner running")
	}
}

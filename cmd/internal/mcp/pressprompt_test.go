package mcp

import (
	"strings"
	"sync/atomic"
	"testing"
)

// TestAttachAsksToPressThePrompt: an agent that asks browser_attach to
// press Chrome's own prompt gets that only through the person's approval:
// the question the host shows says so, and an attach without the ask is
// shown "no". (Pressing itself is tested under Xvfb in the runner.)
func TestAttachAsksToPressThePrompt(t *testing.T) {
	u := startUsersChrome(t)
	a := fixture(t, map[string]string{"/": `<!doctype html><title>allowed tab</title>`})
	u.openTab(t, a.URL+"/")
	for _, ask := range []bool{false, true} {
		var asked atomic.Int32
		var summary atomic.Value
		s := attachServer(t, u, strings.TrimPrefix(a.URL, "http://"), allowAnswer(&asked, &summary))
		s.call("browser_attach", map[string]any{"candidate": "chromium", "pressPrompt": ask})
		msg, _ := summary.Load().(string)
		want := "prompt for you: no"
		if ask {
			want = "prompt for you: yes"
		}
		if asked.Load() != 1 || !strings.Contains(msg, want) {
			t.Fatalf("pressPrompt=%v: the person was asked %d times and saw %q, want %q", ask, asked.Load(), msg, want)
		}
	}
}

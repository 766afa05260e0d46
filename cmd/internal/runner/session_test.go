package runner

import (
	"fmt"
	"os"
	"testing"

	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// TestSessionTableBindsOneProcessAndIsBounded: a session id is bound to the
// first process that uses it and refused to any other; the table holds at
// most maxSessions, and a session whose process is gone is ended by the
// watcher, which stops with the table.
func TestSessionTableBindsOneProcessAndIsBounded(t *testing.T) {
	self, err := platform.FingerprintOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(Options{})
	defer r.sessions.close()
	tab := &r.sessions
	if !tab.bind(r, "mcp-a", self) || !tab.bind(r, "mcp-a", self) {
		t.Fatal("the first process is refused its own session")
	}
	other := self
	other.StartTime++
	if tab.bind(r, "mcp-a", other) {
		t.Fatal("another process may speak for a bound session")
	}
	for i := 1; i < maxSessions; i++ {
		if !tab.bind(r, fmt.Sprintf("mcp-%d", i), self) {
			t.Fatalf("session %d of %d refused", i+1, maxSessions)
		}
	}
	if tab.bind(r, "mcp-one-too-many", self) {
		t.Fatalf("more than %d sessions bound", maxSessions)
	}
	gone := platform.Fingerprint{PID: self.PID, StartTime: self.StartTime + 1, Exe: self.Exe} // not alive
	tab.forget("mcp-1")
	if !tab.bind(r, "mcp-gone", gone) {
		t.Fatal("a free slot is not reused")
	}
	// The watcher polls on its own ticker.
	var n int
	waitfor.Until(t, 4*sessionPoll, "the session of a process that is gone is ended", func() bool {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		_, still := tab.m["mcp-gone"]
		n = len(tab.m)
		return !still
	})
	if n != maxSessions-1 {
		t.Errorf("the watcher ended %d sessions, want only the one whose process is gone", maxSessions-n)
	}
}

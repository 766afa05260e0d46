package chromiumtest

import "os"

// ours returns the live processes of b's job object.
func (b *Browser) ours() []int { return b.tree.Members() }

// closeInheritedFDs does nothing: a Windows child inherits only the
// handles it is given.
func closeInheritedFDs() {}

func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

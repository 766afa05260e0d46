package chromiumtest

import "syscall"

// ours returns the live processes of b's group. The crashpad handler that
// leaves the group on Linux is not looked for here yet.
func (b *Browser) ours() []int { return b.tree.Members() }

// fdDir lists this process's open descriptors.
const fdDir = "/dev/fd"

func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

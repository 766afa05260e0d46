package platform

import "syscall"

// treeAttr starts a process as the leader of its own group, and sends it
// SIGTERM when the launching thread dies (Pdeathsig; do not start it from
// a goroutine that locked its OS thread and then exits).
func treeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

package platform

import "syscall"

// treeAttr starts a process as the leader of its own group. macOS has no
// parent-death signal: a tree outlives a launcher that dies without
// closing it.
func treeAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

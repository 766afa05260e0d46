package chromiumtest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// ours returns the live processes of b: in its group, or naming its
// directory on their command line (the crashpad handlers, which leave the
// group), reading /proc.
func (b *Browser) ours() []int {
	pgid, dir := b.PID, b.dir
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 3 || string(f[0]) == "Z" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			pids = append(pids, pid)
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// fdDir lists this process's open descriptors.
const fdDir = "/proc/self/fd"

func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

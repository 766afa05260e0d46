//go:build linux || darwin

package platform

import (
	"errors"
	"os"
	"syscall"
)

// treeSys holds nothing on Unix: the group's ID is the root's PID.
type treeSys struct{}

// adoptTree returns the tree p leads; p was started with treeAttr.
func adoptTree(p *os.Process) (*ProcessTree, error) { return &ProcessTree{pid: p.Pid}, nil }

// Terminate asks the root to exit (SIGTERM); its children follow it.
func (t *ProcessTree) Terminate() error {
	if err := syscall.Kill(t.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Kill sends SIGKILL to every process of the tree.
func (t *ProcessTree) Kill() error { return KillGroup(t.pid) }

// Members returns the live processes of the tree.
func (t *ProcessTree) Members() []int { return GroupMembers(t.pid) }

// Release does nothing on Unix: a process group needs no handle.
func (t *ProcessTree) Release() {}

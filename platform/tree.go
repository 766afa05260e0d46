package platform

import (
	"errors"
	"os/exec"
)

// ProcessTree is a started process and every process it starts, ended as a
// whole. On Unix it is the process group the root leads (on Linux the root
// also gets SIGTERM when the launching thread dies); on Windows it is a job
// object that kills every member when its last handle closes, so the tree
// dies with the program that launched it.
//
// [StartTree] starts one; call [ProcessTree.Release] once the tree is gone.
type ProcessTree struct {
	pid int
	sys treeSys
}

// PID returns the root process's ID.
func (t *ProcessTree) PID() int { return t.pid }

// StartTree starts cmd as the root of a new tree. cmd.SysProcAttr must be
// unset: StartTree sets it. On Windows the root starts suspended and runs
// once it is in the job, so no child escapes the job.
func StartTree(cmd *exec.Cmd) (*ProcessTree, error) {
	if cmd.SysProcAttr != nil {
		return nil, errors.New("platform: StartTree sets the process attributes itself")
	}
	cmd.SysProcAttr = treeAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t, err := adoptTree(cmd.Process)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	return t, nil
}

package platform

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// treeSys is the job object holding the tree.
type treeSys struct {
	job windows.Handle
}

// treeAttr starts a process suspended, in a console process group of its
// own, so that adoptTree can put it in a job before it runs.
func treeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

// adoptTree puts p, started suspended by treeAttr, in a new job object
// that kills its members when its last handle closes, then lets p run.
// Every process p starts joins the job. On failure p is left suspended for
// the caller to kill.
func adoptTree(p *os.Process) (*ProcessTree, error) {
	job, err := newKillOnCloseJob()
	if err != nil {
		return nil, err
	}
	if err := assignToJob(job, p.Pid); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	if err := resumeProcess(p.Pid); err != nil {
		windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
		return nil, err
	}
	return &ProcessTree{pid: p.Pid, sys: treeSys{job: job}}, nil
}

func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("platform: create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("platform: job object limits: %w", err)
	}
	return job, nil
}

func assignToJob(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("platform: open process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("platform: assign to job object: %w", err)
	}
	return nil
}

// resumeProcess resumes every thread of a process started suspended (its
// one main thread).
func resumeProcess(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("platform: thread snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("platform: open thread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("platform: resume thread: %w", err)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("platform: the new process has no thread to resume")
	}
	return nil
}

// Terminate ends every process of the tree: Windows has no signal asking
// a windowless process to exit (Browser.close on the DevTools pipe is the
// graceful way).
func (t *ProcessTree) Terminate() error { return t.Kill() }

// Kill terminates every process in the job.
func (t *ProcessTree) Kill() error {
	if err := windows.TerminateJobObject(t.sys.job, 1); err != nil {
		return fmt.Errorf("platform: terminate job object: %w", err)
	}
	return nil
}

// jobProcessList is JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 256
// processes (a browser runs a few dozen).
type jobProcessList struct {
	Assigned uint32
	Listed   uint32
	IDs      [256]uintptr
}

// Members returns the live processes in the job.
func (t *ProcessTree) Members() []int {
	var list jobProcessList
	if err := windows.QueryInformationJobObject(t.sys.job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil); err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
		return nil
	}
	pids := make([]int, 0, list.Listed)
	for _, id := range list.IDs[:min(int(list.Listed), len(list.IDs))] {
		pids = append(pids, int(id))
	}
	return pids
}

// Release closes the job's handle, which kills any member left.
func (t *ProcessTree) Release() {
	if t.sys.job != 0 {
		windows.CloseHandle(t.sys.job)
		t.sys.job = 0
	}
}

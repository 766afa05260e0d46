package platform

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/webcodex/webcodex/fsm"
)

// szomb is the p_stat of a zombie (sys/proc.h).
const szomb = 5

// kinfo reads pid's kinfo_proc; a PID that names no process is
// [ErrNoProcess].
func kinfo(pid int) (*unix.KinfoProc, error) {
	if pid <= 0 {
		return nil, ErrNoProcess
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return nil, fmt.Errorf("platform: process %d: %w", pid, err)
	}
	if int(kp.Proc.P_pid) != pid || kp.Proc.P_stat == szomb {
		return nil, ErrNoProcess
	}
	return kp, nil
}

// FingerprintOf returns pid's identity: its start time (microseconds since
// the epoch, from kinfo_proc) and the path it was executed as (the exec
// path kern.procargs2 records). A dead or zombie PID is [ErrNoProcess].
func FingerprintOf(pid int) (Fingerprint, error) {
	kp, err := kinfo(pid)
	if err != nil {
		return Fingerprint{}, err
	}
	args, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("platform: process %d arguments: %w", pid, err)
	}
	exe, err := procargsExe(args)
	if err != nil {
		return Fingerprint{}, err
	}
	tv := kp.Proc.P_starttime
	return Fingerprint{PID: pid, StartTime: uint64(tv.Sec)*1e6 + uint64(tv.Usec), Exe: exe}, nil
}

// procargsExe reads the exec path from kern.procargs2's answer: a 4-byte
// argc, then the NUL-terminated path.
func procargsExe(data []byte) (string, error) {
	if len(data) < 5 {
		return "", errors.New("platform: short kern.procargs2")
	}
	path, _, ok := bytes.Cut(data[4:], []byte{0})
	if !ok || len(path) == 0 {
		return "", errors.New("platform: no exec path in kern.procargs2")
	}
	return string(path), nil
}

// GroupMembers returns the PIDs of the live (non-zombie) processes of
// group pgid, in ascending order.
func GroupMembers(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil
	}
	var pids []int
	for _, kp := range kps {
		if kp.Proc.P_stat != szomb && int(kp.Eproc.Pgid) == pgid {
			pids = append(pids, int(kp.Proc.P_pid))
		}
	}
	slices.Sort(pids)
	return pids
}

// GroupAlive reports whether any live process remains in group pgid.
func GroupAlive(pgid int) bool { return len(GroupMembers(pgid)) > 0 }

// KillGroup sends SIGKILL to every process in group pgid, as on Linux.
func KillGroup(pgid int) error {
	if pgid <= 1 || pgid == syscall.Getpgrp() {
		return fsm.Refuse(fsm.InvalidArgument, "that process group cannot be killed")
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("platform: kill group %d: %w", pgid, err)
	}
	return nil
}

// OwnerUID returns the real user ID of pid.
func OwnerUID(pid int) (int, error) {
	kp, err := kinfo(pid)
	if err != nil {
		return 0, err
	}
	return int(kp.Eproc.Pcred.P_ruid), nil
}

package platform

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/webcodex/webcodex/fsm"
)

// procStat is the part of /proc/PID/stat this package reads.
type procStat struct {
	comm      string
	state     byte
	pgrp      int
	startTime uint64
}

// dead reports whether the state is a zombie or a dead task.
func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// readStat parses /proc/PID/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return procStat{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
		}
		return procStat{}, fmt.Errorf("platform: read stat of %d: %w", pid, err)
	}
	return parseStat(data)
}

func parseStat(data []byte) (procStat, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("platform: malformed /proc stat")
	}
	// Fields after the command: 3 state, 4 ppid, 5 pgrp, ..., 22 starttime.
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("platform: malformed /proc stat")
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, errors.New("platform: malformed /proc stat")
	}
	return procStat{comm: string(data[open+1 : end]), state: f[0][0], pgrp: pgrp, startTime: start}, nil
}

// FingerprintOf reads the identity of the running process pid: its start
// time from /proc/PID/stat and its executable from /proc/PID/exe. A missing
// or zombie process returns an error wrapping [ErrNoProcess]; a process of
// another user whose executable cannot be read returns a permission error.
func FingerprintOf(pid int) (Fingerprint, error) {
	if pid <= 0 {
		return Fingerprint{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
	}
	st, err := readStat(pid)
	if err != nil {
		return Fingerprint{}, err
	}
	if st.dead() {
		return Fingerprint{}, fmt.Errorf("%w: %d is a zombie", ErrNoProcess, pid)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return Fingerprint{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
		}
		return Fingerprint{}, fmt.Errorf("platform: read executable of %d: %w", pid, err)
	}
	// Re-read the start time: the PID may have been reused between reads.
	again, err := readStat(pid)
	if err != nil {
		return Fingerprint{}, err
	}
	if again.startTime != st.startTime || again.dead() {
		return Fingerprint{}, fmt.Errorf("%w: %d changed while read", ErrNoProcess, pid)
	}
	return Fingerprint{PID: pid, StartTime: st.startTime, Exe: strings.TrimSuffix(exe, deletedSuffix)}, nil
}

// GroupMembers returns the PIDs of the live (non-zombie) processes whose
// process group is pgid, in ascending order, by scanning field 5 of every
// /proc/PID/stat. Processes that vanish during the scan are skipped.
func GroupMembers(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	var pids []int
	for _, pid := range procPIDs() {
		st, err := readStat(pid)
		if err != nil || st.pgrp != pgid || st.dead() {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// GroupAlive reports whether any live process remains in group pgid.
func GroupAlive(pgid int) bool { return len(GroupMembers(pgid)) > 0 }

// KillGroup sends SIGKILL to every process in group pgid. An empty group is
// not an error. It refuses pgid ≤ 1 and the caller's own group, which
// kill(2) would turn into "everything" or "ourselves". The caller proves the
// group is its own first: for a recorded orphan, that its leader's
// [Fingerprint] is still [Fingerprint.Alive].
func KillGroup(pgid int) error {
	if pgid <= 1 || pgid == syscall.Getpgrp() {
		return fsm.Refuse(fsm.InvalidArgument, "that process group cannot be killed")
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("platform: kill group %d: %w", pgid, err)
	}
	return nil
}

// procPIDs lists the numeric entries of /proc.
func procPIDs() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// OwnerUID returns the user id of the running process pid, from the
// owner of its /proc directory (the kernel sets it to the process's
// effective uid, and to root for an undumpable process of another user).
// A missing process returns an error wrapping [ErrNoProcess].
func OwnerUID(pid int) (int, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid), &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return 0, fmt.Errorf("%w: %d", ErrNoProcess, pid)
		}
		return 0, fmt.Errorf("platform: stat process %d: %w", pid, err)
	}
	return int(st.Uid), nil
}

package platform

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ProcRef names one process as read from /proc: its PID, its start time (a
// reused PID is another process) and its command name (comm, which the
// process itself can change: it is for the record, never for a decision).
type ProcRef struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Comm  string `json:"comm"`
}

// Same reports whether p and q are the same process.
func (p ProcRef) Same(q ProcRef) bool { return p.PID == q.PID && p.Start == q.Start }

// procLinks is the part of /proc/PID/stat that places a process among
// others: its parent, process group, session and controlling terminal.
type procLinks struct {
	ProcRef
	ppid    int
	pgrp    int
	session int
	ttyNr   int // controlling terminal device (new_encode_dev), 0 when none
	tpgid   int // foreground process group of that terminal, -1 when none
}

// readLinks parses /proc/PID/stat, counting fields from the last ')' since
// comm may hold spaces and parentheses.
func readLinks(pid int) (procLinks, error) {
	if pid <= 0 {
		return procLinks{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return procLinks{}, fmt.Errorf("%w: %d", ErrNoProcess, pid)
		}
		return procLinks{}, fmt.Errorf("platform: read stat of %d: %w", pid, err)
	}
	return parseLinks(pid, data)
}

func parseLinks(pid int, data []byte) (procLinks, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procLinks{}, errors.New("platform: malformed /proc stat")
	}
	// Fields after comm: 3 state, 4 ppid, 5 pgrp, 6 session, 7 tty_nr,
	// 8 tpgid, …, 22 starttime.
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procLinks{}, errors.New("platform: malformed /proc stat")
	}
	if f[0] == "Z" || f[0] == "X" || f[0] == "x" {
		return procLinks{}, fmt.Errorf("%w: %d is a zombie", ErrNoProcess, pid)
	}
	var n [5]int
	for i := range n {
		v, err := strconv.Atoi(f[1+i])
		if err != nil {
			return procLinks{}, errors.New("platform: malformed /proc stat")
		}
		n[i] = v
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procLinks{}, errors.New("platform: malformed /proc stat")
	}
	return procLinks{
		ProcRef: ProcRef{PID: pid, Start: start, Comm: string(data[open+1 : end])},
		ppid:    n[0], pgrp: n[1], session: n[2], ttyNr: n[3], tpgid: n[4],
	}, nil
}

// ProcessRef reads the identity of a live process.
func ProcessRef(pid int) (ProcRef, error) {
	l, err := readLinks(pid)
	return l.ProcRef, err
}

// Parent returns the identity of pid's parent process.
func Parent(pid int) (ProcRef, error) {
	l, err := readLinks(pid)
	if err != nil {
		return ProcRef{}, err
	}
	return ProcessRef(l.ppid)
}

// Ancestry returns pid and then its ancestors, nearest first, at most max
// processes; it stops early at a process it cannot read or at the top of
// this PID namespace.
func Ancestry(pid, max int) []ProcRef {
	var out []ProcRef
	for len(out) < max && pid > 0 {
		l, err := readLinks(pid)
		if err != nil {
			break
		}
		out = append(out, l.ProcRef)
		pid = l.ppid
	}
	return out
}

// SessionOf returns the session id of pid and the identity of that
// session's leader (zero when the leader is gone: a session outlives it).
func SessionOf(pid int) (sid int, leader ProcRef, err error) {
	l, err := readLinks(pid)
	if err != nil {
		return 0, ProcRef{}, err
	}
	leader, _ = ProcessRef(l.session)
	if leader.PID != 0 {
		if ll, err := readLinks(leader.PID); err != nil || ll.session != l.session {
			leader = ProcRef{} // the PID was reused outside the session
		}
	}
	return l.session, leader, nil
}

// DescendsFrom reports whether pid is anc or one of its descendants,
// walking at most maxDepth parents up from pid.
func DescendsFrom(pid int, anc ProcRef, maxDepth int) bool {
	for _, p := range Ancestry(pid, maxDepth) {
		if p.Same(anc) {
			return true
		}
	}
	return false
}

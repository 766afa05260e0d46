package platform

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Terminal is the terminal a process answers on, as /proc shows it: the
// device's name (never what is on it), its session leader (the process
// that controls it) and that leader's parent, whether the process is the
// terminal's foreground job, and the processes holding the pty's master
// side — whoever writes there types on this terminal.
type Terminal struct {
	Device       string    `json:"device"` // "pts/3", "tty2"
	Leader       ProcRef   `json:"session_leader"`
	LeaderParent ProcRef   `json:"session_leader_parent"`
	Foreground   bool      `json:"foreground"`
	Drivers      []ProcRef `json:"pty_master_holders,omitempty"`
	// DriversHidden reports that a process of this user could not be
	// inspected (it made itself non-dumpable, as sshd does), so Drivers
	// may be incomplete.
	DriversHidden bool `json:"pty_master_holders_hidden,omitempty"`
}

// ErrNoTerminal is returned by TerminalOf when a process's standard input
// and output are not both its controlling terminal.
var ErrNoTerminal = errors.New("platform: standard input and output are not the process's controlling terminal")

// TerminalOf describes the terminal process pid answers on. Its standard
// input and output must both be its controlling terminal (tty_nr in
// /proc/PID/stat): a terminal opened by path, or one inherited without
// being the controlling terminal, is refused with ErrNoTerminal.
func TerminalOf(pid int) (Terminal, error) {
	l, err := readLinks(pid)
	if err != nil {
		return Terminal{}, err
	}
	if l.ttyNr == 0 {
		return Terminal{}, ErrNoTerminal
	}
	dev := ""
	for _, fd := range []string{"0", "1"} {
		p := filepath.Join("/proc", strconv.Itoa(pid), "fd", fd)
		target, err := os.Readlink(p)
		if err != nil {
			return Terminal{}, ErrNoTerminal
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR || !sameDevice(st.Rdev, uint64(l.ttyNr)) {
			return Terminal{}, ErrNoTerminal
		}
		name, ok := strings.CutPrefix(target, "/dev/")
		if !ok || (dev != "" && dev != name) {
			return Terminal{}, ErrNoTerminal
		}
		dev = name
	}
	t := Terminal{Device: dev, Foreground: l.pgrp == l.tpgid}
	if leader, err := readLinks(l.session); err == nil && leader.session == l.session && leader.ttyNr == l.ttyNr {
		t.Leader = leader.ProcRef
		t.LeaderParent, _ = ProcessRef(leader.ppid)
	}
	if n, ok := strings.CutPrefix(dev, "pts/"); ok {
		if idx, err := strconv.Atoi(n); err == nil {
			t.Drivers, t.DriversHidden = ptyMasterHolders(idx)
		}
	}
	return t, nil
}

// sameDevice compares two device numbers in the kernel's encodings (a
// stat rdev and a /proc tty_nr decode alike).
func sameDevice(a, b uint64) bool {
	major := func(d uint64) uint64 { return (d>>8)&0xfff | (d>>32)&^uint64(0xfff) }
	minor := func(d uint64) uint64 { return d&0xff | (d>>12)&^uint64(0xff) }
	return major(a) == major(b) && minor(a) == minor(b)
}

// maxFDScan bounds the file descriptors read while looking for a pty's
// master side across every process.
const maxFDScan = 1 << 20

// ptyMasterHolders returns the processes holding the master side of
// /dev/pts/idx (a /dev/ptmx descriptor whose fdinfo names that tty-index),
// and whether some process of this user could not be inspected.
func ptyMasterHolders(idx int) (holders []ProcRef, hidden bool) {
	want := "tty-index:\t" + strconv.Itoa(idx)
	scanned := 0
	for _, pid := range procPIDs() {
		dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			hidden = hidden || ownUID(pid)
			continue
		}
		for _, fd := range fds {
			if scanned++; scanned > maxFDScan {
				return holders, true
			}
			target, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || (target != "/dev/ptmx" && target != "/dev/pts/ptmx") {
				continue
			}
			info, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "fdinfo", fd.Name()))
			if err != nil || !slices.Contains(strings.Split(string(info), "\n"), want) {
				continue
			}
			if p, err := ProcessRef(pid); err == nil {
				holders = append(holders, p)
			}
			break
		}
	}
	return holders, hidden
}

// ownUID reports whether pid's real user is this process's user.
func ownUID(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			return len(f) > 0 && f[0] == strconv.Itoa(os.Getuid())
		}
	}
	return false
}

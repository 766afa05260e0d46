//go:build !linux

package platform

import (
	"context"
	"errors"
)

// ProcRef names one process: PID, start time and command name.
type ProcRef struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Comm  string `json:"comm"`
}

// Same reports whether p and q are the same process.
func (p ProcRef) Same(q ProcRef) bool { return p.PID == q.PID && p.Start == q.Start }

// Terminal is the terminal a process answers on.
type Terminal struct {
	Device        string    `json:"device"`
	Leader        ProcRef   `json:"session_leader"`
	LeaderParent  ProcRef   `json:"session_leader_parent"`
	Foreground    bool      `json:"foreground"`
	Drivers       []ProcRef `json:"pty_master_holders,omitempty"`
	DriversHidden bool      `json:"pty_master_holders_hidden,omitempty"`
}

// ErrNoTerminal is returned by TerminalOf.
var ErrNoTerminal = errors.New("platform: standard input and output are not the process's controlling terminal")

// ErrNoDesktop is returned by OpenDesktop.
var ErrNoDesktop = errors.New("platform: no desktop notification service in this session")

// ProcessRef is not implemented on this operating system yet.
func ProcessRef(pid int) (ProcRef, error) { return ProcRef{}, unsupported("process identity") }

// Parent is not implemented on this operating system yet.
func Parent(pid int) (ProcRef, error) { return ProcRef{}, unsupported("process identity") }

// Ancestry is not implemented on this operating system yet: it returns nil.
func Ancestry(pid, max int) []ProcRef { return nil }

// SessionOf is not implemented on this operating system yet.
func SessionOf(pid int) (int, ProcRef, error) { return 0, ProcRef{}, unsupported("process sessions") }

// DescendsFrom is not implemented on this operating system yet: it reports
// true, so an approval is refused rather than waved through.
func DescendsFrom(pid int, anc ProcRef, maxDepth int) bool { return true }

// TerminalOf is not implemented on this operating system yet.
func TerminalOf(pid int) (Terminal, error) { return Terminal{}, ErrNoTerminal }

// Desktop is a connection to the desktop's notification service.
type Desktop struct{}

// OpenDesktop is not implemented on this operating system yet.
func OpenDesktop(ctx context.Context) (*Desktop, error) { return nil, ErrNoDesktop }

// Notify is not implemented on this operating system yet.
func (d *Desktop) Notify(ctx context.Context, summary, body string) error { return ErrNoDesktop }

// Close does nothing.
func (d *Desktop) Close() error { return nil }

// LoginPasswordOf is not implemented on this operating system yet: the
// state is unknown, so approvals fall back to the terminal and say so.
func LoginPasswordOf(ctx context.Context, account string) (LoginPassword, error) {
	return LoginPassword{Account: account, State: PasswordUnknown, Reason: "this operating system's password check is not implemented yet"}, nil
}

// CheckLoginPassword is not implemented on this operating system yet.
func CheckLoginPassword(ctx context.Context, account string, password []byte) (bool, error) {
	return false, unsupported("checking a login password")
}

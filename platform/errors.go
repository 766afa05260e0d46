package platform

import (
	"errors"

	"github.com/webcodex/webcodex/fsm"
)

// ErrNoProcess reports that a PID names no live process (it never existed,
// has exited, or is a zombie waiting to be reaped).
var ErrNoProcess = errors.New("platform: no such process")

// unsupported is the honest answer on systems without an implementation.
func unsupported(what string) error {
	return fsm.Refuse(fsm.RouteUnavailable, what+" is not supported on this operating system yet").
		WithCause(errors.ErrUnsupported)
}

// ErrNoListener reports that nothing listens on the address.
var ErrNoListener = errors.New("platform: no listening socket on that address")

// ErrListenerHidden reports a listening socket whose owning process this
// user cannot see (it belongs to another user).
var ErrListenerHidden = errors.New("platform: the listening socket's owner is not visible")

// ErrListenerShared reports a listening socket held by more than one
// process, so it has no single owner.
var ErrListenerShared = errors.New("platform: the listening socket is held by several processes")

// PrivateDirError is the internal cause of a private-directory refusal: it
// names the path, so it never crosses the wire.
type PrivateDirError struct {
	Path   string // the offending component
	Reason string
}

func (e *PrivateDirError) Error() string {
	return "platform: unsafe directory " + e.Path + ": " + e.Reason
}

// ErrBadLock reports a SingletonLock that is not a "HOSTNAME-PID" symlink.
var ErrBadLock = errors.New("platform: unrecognised SingletonLock")

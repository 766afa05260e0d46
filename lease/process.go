// Package lease grants time-bounded, exclusive use of browser resources:
// process leases on managed profiles, extension offers, attachments,
// mutation gates keyed by (browser identity, target), and the effect
// ledger. It does no I/O beyond its lock files.
package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/webcodex/webcodex/fsm"
)

// ProcessState is a state of a managed profile's process lease.
type ProcessState string

// Process lease states. Their exits are rendered from the declared edges (spec/).
const (
	ProcessFree       ProcessState = "free"        // not held.
	ProcessTakingOver ProcessState = "taking_over" // removing a lock verified stale.
	ProcessHeld       ProcessState = "held"        // this Runner's browser owns the profile.
	ProcessReleased   ProcessState = "released"    // the browser closed; the data is kept.
	ProcessRefused    ProcessState = "refused"     // another live or unverifiable holder.
)

// ProcessTrigger is an event in a process lease's life.
type ProcessTrigger string

// Process lease triggers.
const (
	ProcessAcquire ProcessTrigger = "acquire"
	ProcessTaken   ProcessTrigger = "taken_over"
	ProcessRelease ProcessTrigger = "release"
)

// Process lease effects.
const (
	EffectRemoveStaleLock fsm.Effect = "remove_stale_lock"
	EffectReleaseFlock    fsm.Effect = "release_flock"
)

// LockState classifies a profile's SingletonLock, as the platform read it.
type LockState int

// Lock states.
const (
	LockAbsent  LockState = iota // no lock
	LockStale                    // this host, and the PID is dead or is not the browser
	LockLive                     // this host, a live browser holds it
	LockForeign                  // another host: unverifiable, never adopted
)

// ProcessFacts are read by the process lease's guards.
type ProcessFacts struct {
	Lock      LockState
	FlockFree bool // our own flock beside the profile was free
}

var (
	lockAbsent  = &fsm.Guard[ProcessFacts]{Name: "no_lock", OK: func(e fsm.Env[ProcessFacts]) bool { return e.Facts.FlockFree && e.Facts.Lock == LockAbsent }}
	lockStale   = &fsm.Guard[ProcessFacts]{Name: "stale_verified", OK: func(e fsm.Env[ProcessFacts]) bool { return e.Facts.FlockFree && e.Facts.Lock == LockStale }}
	lockRefused = &fsm.Guard[ProcessFacts]{Name: "held_live_or_unverifiable", OK: func(e fsm.Env[ProcessFacts]) bool {
		return !e.Facts.FlockFree || e.Facts.Lock == LockLive || e.Facts.Lock == LockForeign
	}}
)

// ProcessSpec is a managed profile's process lease.
var ProcessSpec = (&fsm.Spec[ProcessState, ProcessTrigger, ProcessFacts]{
	Name:  "process_lease",
	Title: "Process lease (managed profile)",
	Guards: "Exclusive use of a managed profile by one browser process. An flock beside the profile excludes other Runners; " +
		"Chromium's SingletonLock is taken over only when verified stale (this host, dead PID); a live or foreign lock is " +
		"refused with lease_held, never adopted.",
	Initial: ProcessFree,
	States: []fsm.StateDoc[ProcessState]{
		fsm.Doc(ProcessFree, "Not held."),
		fsm.Doc(ProcessTakingOver, "Removing a lock verified stale."),
		fsm.Doc(ProcessHeld, "This Runner's browser owns the profile."),
		fsm.Doc(ProcessReleased, "The browser closed; the data is kept."),
		fsm.Doc(ProcessRefused, "Another live or unverifiable holder: lease_held."),
	},
	Triggers: []ProcessTrigger{ProcessAcquire, ProcessTaken, ProcessRelease},
	Edges: []fsm.Edge[ProcessState, ProcessTrigger, ProcessFacts]{
		{From: ProcessFree, On: ProcessAcquire, To: ProcessHeld, Guard: lockAbsent},
		{From: ProcessFree, On: ProcessAcquire, To: ProcessTakingOver, Guard: lockStale, Effect: EffectRemoveStaleLock},
		{From: ProcessFree, On: ProcessAcquire, To: ProcessRefused, Guard: lockRefused},
		{From: ProcessTakingOver, On: ProcessTaken, To: ProcessHeld},
		{From: ProcessHeld, On: ProcessRelease, To: ProcessReleased, Effect: EffectReleaseFlock},
	},
	Effects:      []fsm.Effect{EffectRemoveStaleLock, EffectReleaseFlock},
	Stable:       []ProcessState{ProcessFree, ProcessHeld},
	Terminal:     []ProcessState{ProcessReleased, ProcessRefused},
	MaxTransient: 1,
	DrawFacts: func(d fsm.Drawer) ProcessFacts {
		return ProcessFacts{Lock: LockState(d.IntRange("lock", 0, 3)), FlockFree: d.Bool("flock_free")}
	},
}).MustValidate()

// ErrFlockUnsupported is returned where advisory file locks are not
// available.
var ErrFlockUnsupported = errors.New("lease: file locks are not supported on this platform")

// ProcessLease is a held process lease: the owner of its machine, which
// runs only the effects the machine returns. Release is safe to call twice.
type ProcessLease struct {
	mu          sync.Mutex // mu serializes Release
	file        *os.File
	removeStale func() error
	owner       *fsm.Owner[ProcessState, ProcessTrigger, ProcessFacts]
}

// AcquireProcess takes the flock at lockPath and judges the profile's
// SingletonLock state lock (read by the caller through platform/). When the
// lock is stale, removeStale is called to clear it. Refusals are lease_held.
func AcquireProcess(lockPath string, lock LockState, removeStale func() error) (*ProcessLease, error) {
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lease: open lock file: %w", err)
	}
	free, err := tryFlock(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &ProcessLease{file: f, removeStale: removeStale}
	l.owner = fsm.NewOwner(ProcessSpec, fsm.Effects[ProcessState, ProcessTrigger]{
		EffectRemoveStaleLock: l.removeStaleLock,
		EffectReleaseFlock:    l.releaseFlock,
	})
	l.owner.SetFacts(func(f *ProcessFacts) { *f = ProcessFacts{Lock: lock, FlockFree: free} })
	if _, err := l.owner.Fire(context.Background(), ProcessAcquire); err != nil {
		f.Close()
		return nil, err
	}
	switch l.owner.State() {
	case ProcessHeld:
		return l, nil
	case ProcessRefused:
		f.Close() // closing drops our flock if we got it
		switch {
		case !free:
			return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is in use by another webcodex browser")
		case lock == LockForeign:
			return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is locked by a browser on another host; it cannot be verified, so it is not taken over")
		default:
			return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is in use by a running browser")
		}
	}
	f.Close()
	return nil, fmt.Errorf("lease: the process lease stopped in %s", l.owner.State())
}

// removeStaleLock is remove_stale_lock: clear the lock verified stale, then
// the lease is taken over.
func (l *ProcessLease) removeStaleLock(context.Context, fsm.Step[ProcessState, ProcessTrigger]) (ProcessTrigger, error) {
	if l.removeStale != nil {
		if err := l.removeStale(); err != nil {
			return "", fmt.Errorf("lease: remove stale lock: %w", err)
		}
	}
	return ProcessTaken, nil
}

// releaseFlock is release_flock: closing the lock file drops the flock.
func (l *ProcessLease) releaseFlock(context.Context, fsm.Step[ProcessState, ProcessTrigger]) (ProcessTrigger, error) {
	err := l.file.Close()
	l.file = nil
	return "", err
}

// State returns the lease's state.
func (l *ProcessLease) State() ProcessState { return l.owner.State() }

// Release drops the lease; the profile's data is kept. A released lease
// stays released.
func (l *ProcessLease) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owner.State() == ProcessReleased {
		return nil
	}
	_, err := l.owner.Fire(context.Background(), ProcessRelease)
	return err
}

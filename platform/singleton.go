package platform

import (
	"strconv"
	"strings"
)

// LockState classifies a profile's SingletonLock. As of Chromium 156 on
// Linux the lock is a symlink whose target is "HOSTNAME-PID".
type LockState string

// The lock states. Only [LockStale] may be removed; Chromium itself takes a
// stale lock over on launch, and refuses (exit status 21) a foreign one.
const (
	LockNone    LockState = "none"    // no SingletonLock
	LockStale   LockState = "stale"   // this host; the PID is dead, or alive but not a browser
	LockLive    LockState = "live"    // this host; the PID is a running browser
	LockForeign LockState = "foreign" // another hostname: liveness cannot be verified from here
)

// The profile's singleton files, removed together when the lock is stale.
const (
	singletonLock   = "SingletonLock"
	singletonSocket = "SingletonSocket"
	singletonCookie = "SingletonCookie"
)

// parseLockTarget splits "HOSTNAME-PID" at its last dash (host names may
// contain dashes).
func parseLockTarget(target string) (host string, pid int, ok bool) {
	i := strings.LastIndexByte(target, '-')
	if i <= 0 {
		return "", 0, false
	}
	digits := target[i+1:]
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return "", 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return target[:i], pid, true
}

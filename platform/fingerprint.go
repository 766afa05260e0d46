package platform

// Fingerprint identifies one process instance. A bare PID is never an
// identity because the kernel reuses PIDs; the start time (clock ticks since
// boot, field 22 of /proc/PID/stat on Linux) and the executable tell a
// reused PID apart. Exe is the resolved executable path with a trailing
// " (deleted)" removed, so a browser upgraded on disk keeps its identity.
//
// The zero Fingerprint names no process.
type Fingerprint struct {
	PID       int
	StartTime uint64
	Exe       string
}

// Alive reports whether the process f names still runs: it re-reads the
// PID's fingerprint and compares all three fields. A reused PID, a zombie
// and an exited process all report false.
func (f Fingerprint) Alive() bool {
	if f.PID <= 0 {
		return false
	}
	now, err := FingerprintOf(f.PID)
	return err == nil && now == f
}

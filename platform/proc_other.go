//go:build !linux && !darwin

package platform

// FingerprintOf is not implemented on this operating system yet.
func FingerprintOf(pid int) (Fingerprint, error) {
	return Fingerprint{}, unsupported("process identity")
}

// GroupMembers is not implemented on this operating system yet: it returns nil.
func GroupMembers(pgid int) []int { return nil }

// GroupAlive is not implemented on this operating system yet: it reports false.
func GroupAlive(pgid int) bool { return false }

// KillGroup is not implemented on this operating system yet.
func KillGroup(pgid int) error { return unsupported("process groups") }

// OwnerUID is not implemented on this operating system yet.
func OwnerUID(pid int) (int, error) { return 0, unsupported("process identity") }

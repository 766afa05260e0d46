//go:build !linux

package platform

// platformHelper knows no role beyond the shared ones here.
func platformHelper(role string) (code int, ok bool) { return 0, false }

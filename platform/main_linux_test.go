package platform

import "os"

// platformHelper runs the helper roles that exist on Linux only.
func platformHelper(role string) (code int, ok bool) {
	switch role {
	case "scan":
		return scanForDoor(os.Stdout), true
	case "sandbox":
		return sandboxHelper(os.Stdout), true
	}
	return 0, false
}

//go:build !linux

package platform

// Sandbox reports the sandbox as on: no browser is launched on this
// operating system yet.
func Sandbox() SandboxState { return SandboxState{Enabled: true} }

package platform

// SandboxState says whether the browsers this process launches run with
// Chromium's sandbox, which confines each renderer (the process that runs a
// page's code) so that a hostile page that takes over its renderer cannot
// read the user's files or start programs.
type SandboxState struct {
	Enabled bool
	// Reason says why the sandbox is off, for a person; empty when on.
	Reason string
}

// sandboxDecision is the pure rule behind [Sandbox]: Chromium refuses to
// sandbox as root; otherwise it needs either user namespaces (its
// namespace sandbox; userNSErr is the probe's result) or a setuid-root
// chrome-sandbox helper next to the browser.
func sandboxDecision(euid int, userNSErr error, setuidHelper bool) SandboxState {
	switch {
	case euid == 0:
		return SandboxState{Reason: "webcodex runs as root, and Chromium cannot sandbox a browser run as root"}
	case userNSErr == nil || setuidHelper:
		return SandboxState{Enabled: true}
	}
	return SandboxState{Reason: "this system does not let this user create user namespaces, which Chromium's sandbox needs (" + userNSErr.Error() + ")"}
}

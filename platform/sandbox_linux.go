package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

var sandbox struct {
	once  sync.Once
	mu    sync.Mutex // guards state after once
	state SandboxState
}

// Sandbox reports whether browsers launched by this process get Chromium's
// sandbox: not when it runs as root, and only where this user may create
// user namespaces (probed once, by starting a trivial program in new user,
// PID and network namespaces as Chromium's namespace sandbox does) or a
// setuid-root chrome-sandbox sits beside the browser. [Launch] also turns
// it off for the rest of the process when Chromium itself finds no usable
// sandbox. Safe for concurrent use.
func Sandbox() SandboxState {
	sandbox.once.Do(func() {
		st := sandboxDecision(0, nil, false)
		if os.Geteuid() != 0 {
			st = sandboxDecision(os.Geteuid(), probeUserNamespaces(), setuidSandboxHelper())
		}
		sandbox.mu.Lock()
		sandbox.state = st
		sandbox.mu.Unlock()
	})
	sandbox.mu.Lock()
	defer sandbox.mu.Unlock()
	return sandbox.state
}

// disableSandbox turns the sandbox off for later launches, with the reason.
func disableSandbox(reason string) {
	Sandbox()
	sandbox.mu.Lock()
	sandbox.state = SandboxState{Reason: reason}
	sandbox.mu.Unlock()
}

// probeTimeout bounds the user-namespace probe (a fork and exec of `true`).
const probeTimeout = 5 * time.Second

// probeUserNamespaces starts `true` in new user, PID and network namespaces
// and reports why that failed, or nil.
func probeUserNamespaces() error {
	exe := ""
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if isExecutable(p) {
			exe = p
			break
		}
	}
	if exe == "" {
		var err error
		if exe, err = exec.LookPath("true"); err != nil {
			return nil // nothing to probe with: let Chromium decide
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET}
	err := cmd.Run()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("creating a user namespace: %w", errno)
	}
	return err
}

// setuidSandboxHelper reports whether the browser found by [FindChromium]
// has a setuid-root chrome-sandbox helper beside it (Chrome's packages
// ship one; Debian's Chromium does not need it).
func setuidSandboxHelper() bool {
	exe, err := FindChromium()
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	fi, err := os.Stat(filepath.Join(filepath.Dir(exe), "chrome-sandbox"))
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0 && fi.Mode()&os.ModeSetuid != 0
}

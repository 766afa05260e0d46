package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// baseFlags are the flags every launch uses (CHROMIUM-FACTS.md, Chromium
// 156): no sandbox (containers, root), no GPU, no QUIC, no first-run UI, no
// background traffic.
//
// --disable-crashpad-for-testing is deliberately absent: as of Chromium 156
// (Debian, measured 2026-11-30) it makes the network service crash in a
// loop ("Crashing due to FD ownership violation", ~15 restarts a second) and
// http pages never load. The two crashpad handlers it would suppress leave
// the process group; Close reaps them through their TMPDIR instead.
var baseFlags = []string{
	"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update",
	"--disable-sync",
}

// reservedFlags may not appear in LaunchOptions.ExtraArgs: they would move
// the profile or the endpoint away from what Launch verifies.
var reservedFlags = []string{
	"--user-data-dir", "--remote-debugging-port", "--remote-debugging-pipe",
	"--remote-debugging-address",
}

// chromiumArgs builds the command line for opts; userDataDir is absolute.
func chromiumArgs(opts LaunchOptions, userDataDir string) []string {
	args := append([]string(nil), baseFlags...)
	if opts.Headless {
		args = append(args, "--headless=new")
	}
	args = append(args, "--user-data-dir="+userDataDir, "--remote-debugging-port=0")
	args = append(args, opts.ExtraArgs...)
	return append(args, "about:blank")
}

// Launch starts a browser in its own process group and waits until its
// DevTools endpoint is up and owned by it. ctx bounds only the start-up,
// as does opts.StartTimeout (default [DefaultStartTimeout]); the browser
// then runs until [Process.Close].
//
// Before starting, Launch refuses a profile whose SingletonLock is live or
// foreign ([fsm.LeaseHeld]) and deletes a stale DevToolsActivePort. The
// browser gets a fresh private TMPDIR (0700, under [os.TempDir]) and
// SIGTERM if the launching thread dies (Pdeathsig; a goroutine that called
// runtime.LockOSThread and then exits would trigger it, so do not launch
// from one). Its stdout and stderr go to a bounded buffer ([Process.Output]).
//
// Start-up polls for DevToolsActivePort and fails early when the browser
// exits: status 21 (the profile is in use) is a [fsm.LeaseHeld] refusal;
// other failures are a [*LaunchError]. An endpoint owned by another process
// is a [fsm.EndpointOwnerMismatch] refusal. On failure nothing is left
// running and the TMPDIR is removed.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	if opts.UserDataDir == "" {
		return nil, fsm.Refuse(fsm.InvalidArgument, "a profile directory is required")
	}
	for _, a := range opts.ExtraArgs {
		for _, r := range reservedFlags {
			if a == r || strings.HasPrefix(a, r+"=") {
				return nil, fsm.Refuse(fsm.InvalidArgument, "extra arguments may not set the profile or the debugging endpoint")
			}
		}
	}
	exe := opts.Exec
	if exe == "" {
		var err error
		if exe, err = FindChromium(); err != nil {
			return nil, err
		}
	}
	udd, err := filepath.Abs(opts.UserDataDir)
	if err != nil {
		return nil, fmt.Errorf("platform: launch: %w", err)
	}
	switch state, err := InspectSingletonLock(udd); {
	case err != nil:
		return nil, err
	case state == LockLive:
		return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is in use by a running browser")
	case state == LockForeign:
		return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is locked by a browser on another host")
	}
	if err := os.Remove(filepath.Join(udd, DevToolsActivePortFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("platform: remove stale DevToolsActivePort: %w", err)
	}
	tmp, err := os.MkdirTemp("", "webcodex-chromium-")
	if err != nil {
		return nil, fmt.Errorf("platform: private TMPDIR: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("platform: output pipe: %w", err)
	}
	cmd := exec.Command(exe, chromiumArgs(opts, udd)...)
	cmd.Env = append(append(os.Environ(), opts.Env...), "TMPDIR="+tmp)
	// A *os.File, not a Writer: exec then starts no copying goroutine, and
	// Wait returns when the browser exits even if children hold the pipe.
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("platform: start browser: %w", err)
	}
	p := &Process{
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		tmpDir:    tmp,
		userData:  udd,
		removeUDD: opts.RemoveUserDataDir,
		out:       newTailBuffer(OutputLimit),
		outR:      outR,
		exited:    make(chan struct{}),
		drained:   make(chan struct{}),
	}
	go p.wait()
	go p.drain()

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	cause := p.awaitEndpoint(ctx, timeout)
	if cause == nil {
		return p, nil
	}
	exitCode := p.exitCode() // before teardown signals it
	if exitCode == profileInUseStatus {
		p.removeUDD = false // another browser's profile: never delete it
	}
	_ = p.Close(context.Background(), nil)
	if _, ok := fsm.AsRefusal(cause); ok {
		return nil, cause
	}
	lerr := &LaunchError{ExitCode: exitCode, Output: p.Output(), Err: cause}
	if exitCode == profileInUseStatus {
		return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is in use by another browser").WithCause(lerr)
	}
	return nil, lerr
}

// awaitEndpoint polls for DevToolsActivePort, with intervals growing from
// 10 ms to 100 ms, until the endpoint it names is listened on by p's own
// process, p exits, ctx ends or timeout passes.
func (p *Process) awaitEndpoint(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTimer(0)
	defer tick.Stop()
	interval := 10 * time.Millisecond
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	for {
		select {
		case <-p.exited:
			return ErrExitedEarly
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return ErrStartTimeout
		case <-tick.C:
		}
		if port, path, err := ReadDevToolsActivePort(p.userData); err == nil {
			owner, err := ListenerOwner(netip.AddrPortFrom(loopback, uint16(port)))
			switch {
			case err == nil && owner == p.pid:
				fp, err := FingerprintOf(p.pid)
				if err != nil {
					return ErrExitedEarly
				}
				p.fp = fp
				p.wsURL = "ws://127.0.0.1:" + strconv.Itoa(port) + path
				return nil
			case err == nil:
				return fsm.Refuse(fsm.EndpointOwnerMismatch, "the new browser's debugging endpoint is held by another process")
			}
			// Not listening yet (or not visible): poll again.
		}
		tick.Reset(interval)
		interval = min(2*interval, 100*time.Millisecond)
	}
}

// wait reaps the main process and closes exited.
func (p *Process) wait() {
	_ = p.cmd.Wait()
	close(p.exited)
}

// drain copies the browser's output into the tail buffer until every
// writer has closed the pipe or Close closes the read end.
func (p *Process) drain() {
	defer close(p.drained)
	buf := make([]byte, 4096)
	for {
		n, err := p.outR.Read(buf)
		p.out.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func (p *Process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExited waits for the main process to exit until ctx ends, and reports
// whether it did.
func (p *Process) waitExited(ctx context.Context) bool {
	select {
	case <-p.exited:
		return true
	case <-ctx.Done():
		return p.hasExited()
	}
}

// Close ends the browser and everything in its process group, then removes
// its private TMPDIR and, when LaunchOptions.RemoveUserDataDir was set, its
// profile. In order: browserClose (the caller sends CDP Browser.close; nil
// skips it) and a wait of up to 5 s for exit; SIGTERM to the main process
// and up to 2 s; then SIGKILL to the whole group. Helpers that left the
// group (crashpad handlers) are found by their private TMPDIR and, if they
// have not exited within 2 s, killed. ctx can shorten the two graceful
// waits, never the forced reaping, which is bounded on its own. A
// persistent profile's stale SingletonLock is removed afterwards.
//
// Close is idempotent and safe for concurrent use: later calls wait for the
// first and return its result. When it returns nil, no process of the group
// remains ([GroupAlive] is false) and the goroutines Launch started have
// stopped.
func (p *Process) Close(ctx context.Context, browserClose func(context.Context) error) error {
	p.closeOnce.Do(func() { p.closeErr = p.teardown(ctx, browserClose) })
	return p.closeErr
}

func (p *Process) teardown(ctx context.Context, browserClose func(context.Context) error) error {
	if browserClose != nil && !p.hasExited() {
		cctx, cancel := context.WithTimeout(ctx, browserCloseWait)
		// The socket often drops before Browser.close replies: only the
		// exit counts, so the call's error is not one.
		_ = browserClose(cctx)
		p.waitExited(cctx)
		cancel()
	}
	if !p.hasExited() {
		// Not yet reaped, so the PID is still ours to signal.
		_ = syscall.Kill(p.pid, syscall.SIGTERM)
		tctx, cancel := context.WithTimeout(ctx, sigtermWait)
		p.waitExited(tctx)
		cancel()
	}
	if p.hasExited() {
		waitGroupEmpty(p.pid, groupGrace)
	}
	var errs []error
	if !p.hasExited() || GroupAlive(p.pid) {
		if err := KillGroup(p.pid); err != nil {
			errs = append(errs, err)
		}
	}
	fctx, cancel := context.WithTimeout(context.Background(), forcedWait)
	if !p.waitExited(fctx) {
		errs = append(errs, errors.New("platform: the browser did not exit after SIGKILL"))
	}
	cancel()
	if !waitGroupEmpty(p.pid, forcedWait) {
		errs = append(errs, errors.New("platform: processes remain in the browser's group after SIGKILL"))
	}
	if err := reapTagged(p.tmpDir); err != nil {
		errs = append(errs, err)
	}
	select {
	case <-p.drained:
	case <-time.After(drainWait):
	}
	p.outR.Close() // unblocks drain if an escaped process holds the pipe
	<-p.drained
	if err := os.RemoveAll(p.tmpDir); err != nil {
		errs = append(errs, fmt.Errorf("platform: remove private TMPDIR: %w", err))
	}
	if p.removeUDD {
		if err := os.RemoveAll(p.userData); err != nil {
			errs = append(errs, fmt.Errorf("platform: remove profile: %w", err))
		}
	} else {
		// Best effort: Chromium also takes a stale lock over on launch.
		_ = RemoveStaleLock(p.userData)
	}
	return errors.Join(errs...)
}

// reapTagged ends the browser's processes that left its group (the crashpad
// handlers daemonize under PID 1): they still carry TMPDIR=tmp, a directory
// unique to this launch. They normally exit within 0.2 s of the browser;
// after escapeeGrace they are killed.
func reapTagged(tmp string) error {
	if poll(escapeeGrace, func() bool { return len(taggedProcesses(tmp)) == 0 }) {
		return nil
	}
	for _, pid := range taggedProcesses(tmp) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !poll(forcedWait, func() bool { return len(taggedProcesses(tmp)) == 0 }) {
		return errors.New("platform: browser helper processes outside its group survive SIGKILL")
	}
	return nil
}

// taggedProcesses returns the live processes, other than this one, whose
// environment holds exactly TMPDIR=tmp. Processes that rewrote their
// environment block (Chromium's zygote children) do not show it; they stay
// in the group instead. Environments of other users are unreadable and
// skipped.
func taggedProcesses(tmp string) []int {
	entry := []byte("TMPDIR=" + tmp)
	self := os.Getpid()
	var pids []int
	for _, pid := range procPIDs() {
		if pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for e := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(e, entry) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// waitGroupEmpty polls until group pgid has no live member or d passes,
// and reports whether it emptied.
func waitGroupEmpty(pgid int, d time.Duration) bool {
	return poll(d, func() bool { return !GroupAlive(pgid) })
}

// poll calls cond, at intervals growing from 5 ms to 50 ms, until it holds
// or d passes, and reports whether it held.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	interval := 5 * time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
		interval = min(2*interval, 50*time.Millisecond)
	}
}

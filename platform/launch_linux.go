package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
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

// baseFlags are the flags every launch uses (measured on Chromium 156): no GPU, no QUIC, no first-run UI, no background traffic.
// --no-sandbox is added only where the sandbox cannot run ([Sandbox]).
//
// --disable-crashpad-for-testing is deliberately absent: as of Chromium 156
// (Debian, measured 2026-11-30) it makes the network service crash in a
// loop ("Crashing due to FD ownership violation", ~15 restarts a second) and
// http pages never load. The two crashpad handlers it would suppress leave
// the process group; Close reaps them through their TMPDIR instead.
var baseFlags = []string{
	"--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update",
	"--disable-sync",
}

// reservedFlags may not appear in LaunchOptions.ExtraArgs: they would move
// the profile or the endpoint away from what Launch verifies.
var reservedFlags = []string{
	"--user-data-dir", "--remote-debugging-port", "--remote-debugging-pipe",
	"--remote-debugging-address", "--remote-debugging-io-pipes",
}

// chromiumArgs builds the command line for opts; userDataDir is absolute.
// The DevTools endpoint is the pipe on fds 3 and 4, unless opts asks for a
// port. Without sandbox, the renderers run unconfined (--no-sandbox).
func chromiumArgs(opts LaunchOptions, userDataDir string, sandbox bool) []string {
	var args []string
	if !sandbox {
		args = append(args, "--no-sandbox")
	}
	args = append(args, baseFlags...)
	if opts.Headless {
		args = append(args, "--headless=new")
	}
	endpoint := "--remote-debugging-pipe"
	if opts.DebuggingPort {
		endpoint = "--remote-debugging-port=0"
	}
	args = append(args, "--user-data-dir="+userDataDir, endpoint)
	args = append(args, opts.ExtraArgs...)
	return append(args, "about:blank")
}

// devtoolsPipes are the two pipes of --remote-debugging-pipe: the browser
// reads commands from fd 3 (cmdR) and writes to fd 4 (outW); the parent
// keeps cmdW and outR.
type devtoolsPipes struct {
	cmdR, cmdW, outR, outW *os.File
}

func newDevtoolsPipes() (*devtoolsPipes, error) {
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("platform: DevTools pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, fmt.Errorf("platform: DevTools pipe: %w", err)
	}
	return &devtoolsPipes{cmdR: cmdR, cmdW: cmdW, outR: outR, outW: outW}, nil
}

// closeChildEnds closes the parent's copies of the browser's ends, so that
// the browser's exit reads as end of file.
func (d *devtoolsPipes) closeChildEnds() {
	d.cmdR.Close()
	d.outW.Close()
}

func (d *devtoolsPipes) closeAll() {
	d.closeChildEnds()
	d.cmdW.Close()
	d.outR.Close()
}

// Launch starts a browser in its own process group and waits until its
// DevTools endpoint is up and owned by it. ctx bounds only the start-up,
// as does opts.StartTimeout (default [DefaultStartTimeout]); the browser
// then runs until [Process.Close].
//
// The endpoint is a pair of pipes (--remote-debugging-pipe): the browser
// listens on no port and writes no DevToolsActivePort, so there is nothing
// for another process or user to connect to; [Process.Pipe] is the way in.
// (A process allowed to debug the browser's own processes, same uid and
// ptrace permitted, could still open the pipe through /proc: that power is
// the browser's memory already.) The browser is ready when it has answered
// Browser.getVersion on the pipe.
// LaunchOptions.DebuggingPort instead opens a loopback port and waits for
// DevToolsActivePort to name a port the browser itself listens on.
//
// Before starting, Launch refuses a profile whose SingletonLock is live or
// foreign ([fsm.LeaseHeld]) and deletes a stale DevToolsActivePort. The
// browser gets a fresh private TMPDIR (0700, where Chromium's sockets fit:
// [ShortTempDir]) and
// SIGTERM if the launching thread dies (Pdeathsig; a goroutine that called
// runtime.LockOSThread and then exits would trigger it, so do not launch
// from one). Its stdout and stderr go to a bounded buffer ([Process.Output]).
//
// Start-up fails early when the browser exits: status 21 (the profile is in
// use) is a [fsm.LeaseHeld] refusal; other failures are a [*LaunchError].
// A port owned by another process is a [fsm.EndpointOwnerMismatch]
// refusal. On failure nothing is left running and the TMPDIR is removed.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	exe, udd, err := prepareLaunch(opts)
	if err != nil {
		return nil, err
	}
	// Chromium binds its SingletonSocket two levels under TMPDIR and a
	// socket path has at most SocketPathMax bytes: the private TMPDIR is
	// made where that fits, whatever the caller's TMPDIR is.
	tmp, err := browserTempDir(opts.TempParent)
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("platform: output pipe: %w", err)
	}
	var pipes *devtoolsPipes
	if !opts.DebuggingPort {
		if pipes, err = newDevtoolsPipes(); err != nil {
			outR.Close()
			outW.Close()
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	sandboxed := Sandbox().Enabled
	cmd := exec.Command(exe, chromiumArgs(opts, udd, sandboxed)...)
	var netConn *net.UnixConn // the way the private network's listener comes back
	var netChild *os.File
	home, err := privateHome(tmp)
	if err == nil && opts.PrivateNetwork {
		cmd = privateNetworkCommand(exe, chromiumArgs(opts, udd, sandboxed))
		netConn, netChild, err = socketPair()
	}
	if err != nil {
		outR.Close()
		outW.Close()
		if pipes != nil {
			pipes.closeAll()
		}
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd.Env = append(append(append(os.Environ(), home...), opts.Env...), "TMPDIR="+tmp)
	// A *os.File, not a Writer: exec then starts no copying goroutine, and
	// Wait returns when the browser exits even if children hold the pipe.
	cmd.Stdout, cmd.Stderr = outW, outW
	if pipes != nil {
		cmd.ExtraFiles = []*os.File{pipes.cmdR, pipes.outW} // fds 3 and 4
	}
	if netChild != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, netChild) // privateNetworkFD
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	}
	err = cmd.Start()
	outW.Close()
	if pipes != nil {
		pipes.closeChildEnds()
	}
	if netChild != nil {
		netChild.Close()
		defer netConn.Close()
	}
	if err != nil {
		outR.Close()
		if pipes != nil {
			pipes.closeAll()
		}
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("platform: start browser: %w", err)
	}
	p := startedProcess(cmd, tmp, udd, opts, outR, pipes)
	if cause := p.awaitStart(ctx, opts, netConn); cause != nil {
		return startFailed(ctx, p, opts, sandboxed, cause)
	}
	return p, nil
}

// startedProcess is the Process of a started browser; its goroutines (the
// reaper and the output drain) belong to it and end with the browser.
func startedProcess(cmd *exec.Cmd, tmp, udd string, opts LaunchOptions, outR *os.File, pipes *devtoolsPipes) *Process {
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
	if pipes != nil {
		p.pipeR, p.pipeW = pipes.outR, pipes.cmdW
	}
	go p.wait()
	go p.drain()
	return p
}

// awaitStart waits, within the start timeout, for the browser to come up:
// first the private network's listener where it has one, then its DevTools
// pipe or endpoint.
func (p *Process) awaitStart(ctx context.Context, opts LaunchOptions, netConn *net.UnixConn) error {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	if netConn != nil {
		nctx, cancel := context.WithTimeout(ctx, timeout)
		ln, err := receiveListener(nctx, netConn)
		cancel()
		if err != nil {
			return err
		}
		p.netLn = ln
	}
	if p.pipeW != nil {
		return p.awaitPipe(ctx, timeout)
	}
	return p.awaitEndpoint(ctx, timeout)
}

// prepareLaunch checks the options and the profile before anything
// starts, and returns the browser to run and the profile's absolute path.
func prepareLaunch(opts LaunchOptions) (exe, udd string, err error) {
	if opts.UserDataDir == "" {
		return "", "", fsm.Refuse(fsm.InvalidArgument, "a profile directory is required")
	}
	for _, a := range opts.ExtraArgs {
		for _, r := range reservedFlags {
			if a == r || strings.HasPrefix(a, r+"=") {
				return "", "", fsm.Refuse(fsm.InvalidArgument, "extra arguments may not set the profile or the debugging endpoint")
			}
		}
	}
	if opts.PrivateNetwork && opts.DebuggingPort {
		return "", "", fsm.Refuse(fsm.InvalidArgument, "a browser in a private network cannot listen on a debugging port")
	}
	exe = opts.Exec
	if exe == "" {
		if exe, err = FindChromium(); err != nil {
			return "", "", err
		}
	}
	udd, err = filepath.Abs(opts.UserDataDir)
	if err != nil {
		return "", "", fmt.Errorf("platform: launch: %w", err)
	}
	switch state, err := InspectSingletonLock(udd); {
	case err != nil:
		return "", "", err
	case state == LockLive:
		return "", "", fsm.Refuse(fsm.LeaseHeld, "the profile is in use by a running browser")
	case state == LockForeign:
		return "", "", fsm.Refuse(fsm.LeaseHeld, "the profile is locked by a browser on another host")
	}
	if err := os.Remove(filepath.Join(udd, DevToolsActivePortFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("platform: remove stale DevToolsActivePort: %w", err)
	}
	return exe, udd, nil
}

// startFailed tears down a browser that did not come up (cause says why)
// and reports it; a browser that found no usable sandbox is launched once
// more without it.
func startFailed(ctx context.Context, p *Process, opts LaunchOptions, sandboxed bool, cause error) (*Process, error) {
	exitCode := p.exitCode() // before teardown signals it
	// Chromium says so when the sandbox cannot start here (an AppArmor
	// rule, a seccomp filter of a container): then it cannot run, and the
	// launch is tried once more without it.
	noUsableSandbox := sandboxed && bytes.Contains(p.Output(), []byte(noUsableSandboxLine))
	if exitCode == profileInUseStatus || noUsableSandbox {
		p.removeUDD = false // another browser's profile, or the retry's: never delete it
	}
	_ = p.Close(context.Background(), nil)
	if noUsableSandbox {
		disableSandbox("Chromium found no usable sandbox on this system")
		return Launch(ctx, opts)
	}
	if _, ok := fsm.AsRefusal(cause); ok {
		return nil, cause
	}
	lerr := &LaunchError{ExitCode: exitCode, Output: p.Output(), Err: cause, Reason: BrowserReason(p.Output())}
	if exitCode == profileInUseStatus {
		return nil, fsm.Refuse(fsm.LeaseHeld, "the profile is in use by another browser").WithCause(lerr)
	}
	return nil, lerr
}

// browserTempDir makes the browser's private TMPDIR: in parent (made by
// the caller with room for it, [TempParentRoom]) or, without one, wherever
// [ShortTempDir] finds room for Chromium's sockets.
func browserTempDir(parent string) (string, error) {
	if parent == "" {
		return ShortTempDir("webcodex-chromium-", len(chromiumSocketTail))
	}
	tmp, err := os.MkdirTemp(parent, browserTmpPattern)
	if err != nil {
		return "", fmt.Errorf("platform: private TMPDIR: %w", err)
	}
	if !fitsSocket(tmp, len(chromiumSocketTail)) {
		os.RemoveAll(tmp)
		return "", fsm.Refuse(fsm.InvalidArgument, fmt.Sprintf("the launch's temporary directory is too long for the browser's sockets (%d bytes, at most %d)", len(tmp), SocketPathMax-len(chromiumSocketTail)))
	}
	return tmp, nil
}

// privateHome makes the browser's HOME and XDG base directories inside its
// private TMPDIR: what Chromium keeps outside the profile (its default
// download directory, ~/.pki, caches) never lands in the home of the user
// running webcodex, and goes with the browser. LaunchOptions.Env may still
// set them.
func privateHome(tmp string) ([]string, error) {
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("platform: private HOME: %w", err)
	}
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}, nil
}

// noUsableSandboxLine is what Chromium prints (as of Chromium 156) when it
// cannot start its sandbox.
const noUsableSandboxLine = "No usable sandbox!"

// readinessCall is the command Launch sends on the pipe to learn that the
// browser is up. Its answer is read before anyone else reads the pipe, so
// a client that starts its ids at 1 too cannot confuse the two.
var readinessCall = []byte(`{"id":1,"method":"Browser.getVersion"}` + "\x00")

// past is a deadline that has already expired, set to end a blocked call.
var past = time.Unix(1, 0)

// maxReadiness bounds what Launch reads from the pipe while it waits for
// the answer to readinessCall (a few hundred bytes).
const maxReadiness = 1 << 20

// awaitPipe sends Browser.getVersion on p's pipe and waits for the answer,
// until p exits, ctx ends or timeout passes. It reads one byte at a time,
// so it stops exactly after that answer and leaves the rest of the stream
// to the client; messages before it are skipped.
func (p *Process) awaitPipe(ctx context.Context, timeout time.Duration) error {
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrStartTimeout)
	defer cancel()
	stopExit := make(chan struct{})
	defer close(stopExit)
	go func() { // ends with awaitPipe
		select {
		case <-p.exited:
			cancel()
		case <-stopExit:
		}
	}()
	// The pipe's files are pollable, so expired deadlines end blocked
	// calls when rctx ends; the deadlines are cleared before returning.
	expired := make(chan struct{})
	stopExpire := context.AfterFunc(rctx, func() {
		p.pipeR.SetDeadline(past)
		p.pipeW.SetDeadline(past)
		close(expired)
	})
	defer func() {
		if !stopExpire() {
			<-expired
		}
		p.pipeR.SetDeadline(time.Time{})
		p.pipeW.SetDeadline(time.Time{})
	}()
	if _, err := p.pipeW.Write(readinessCall); err != nil {
		return p.pipeFailure(rctx, err)
	}
	msg := make([]byte, 0, 512)
	b := make([]byte, 1)
	for read := 0; read < maxReadiness; read++ {
		if _, err := p.pipeR.Read(b); err != nil {
			return p.pipeFailure(rctx, err)
		}
		if b[0] != 0 {
			msg = append(msg, b[0])
			continue
		}
		var reply struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(msg, &reply) != nil || reply.ID != 1 {
			msg = msg[:0]
			continue
		}
		if reply.Result == nil || reply.Error != nil {
			return errors.New("platform: the browser refused Browser.getVersion on its pipe")
		}
		fp, err := FingerprintOf(p.pid)
		if err != nil {
			return ErrExitedEarly
		}
		p.fp = fp
		return nil
	}
	return errors.New("platform: the browser sent too much on its pipe before answering")
}

// pipeFailure explains a failed exchange on the pipe during start-up. A
// browser that closed its end (or a write to its closed end) is given until
// rctx ends to be reaped, so its exit status is known.
func (p *Process) pipeFailure(rctx context.Context, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) {
		select {
		case <-p.exited:
		case <-rctx.Done():
		}
	}
	select {
	case <-p.exited:
		return ErrExitedEarly
	default:
	}
	if cause := context.Cause(rctx); cause != nil {
		return cause // ctx's own error, or ErrStartTimeout
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the file's name is not for errors
	}
	return fmt.Errorf("platform: DevTools pipe: %w", err)
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
	if p.pipeW != nil {
		// Our ends of the pipe go first: a browser that is still running
		// takes the end of its command pipe as a request to exit cleanly.
		// A client may have closed them already; closing again is harmless.
		_ = p.pipeW.Close()
		_ = p.pipeR.Close()
		if !p.hasExited() {
			pctx, cancel := context.WithTimeout(ctx, sigtermWait)
			p.waitExited(pctx)
			cancel()
		}
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
	if p.netLn != nil {
		p.netLn.Close() // the browser is gone: nothing is left to serve
	}
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

// ErrTreeHidden reports that the open files of a process in the browser's
// tree could not be read, so its listeners cannot be known.
var ErrTreeHidden = errors.New("platform: a process of the browser's tree hides its open files")

// Listeners returns the TCP sockets in LISTEN state (IPv4 and IPv6) held by
// any process of the browser's tree: its process group and the helpers
// that left the group but carry its TMPDIR. A browser launched without
// LaunchOptions.DebuggingPort has none; tests hold it to that. An
// unreadable member fails with [ErrTreeHidden] rather than under-report.
func (p *Process) Listeners() ([]netip.AddrPort, error) {
	inodes, err := socketInodes(p.treePIDs())
	if err != nil {
		return nil, err
	}
	// The browser's own view: in a private network its sockets are in
	// its namespace, not the caller's.
	var out []netip.AddrPort
	dir := "/proc/" + strconv.Itoa(p.pid) + "/net/"
	for _, file := range []string{dir + "tcp", dir + "tcp6"} {
		es, err := readListeners(file)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // tcp6 is absent without IPv6
			return nil, err
		}
		for _, e := range es {
			if inodes[e.inode] {
				out = append(out, e.addr)
			}
		}
	}
	return out, nil
}

// treePIDs returns the live processes of p's tree: its group and the
// helpers tagged with its TMPDIR.
func (p *Process) treePIDs() []int {
	return append(GroupMembers(p.pid), taggedProcesses(p.tmpDir)...)
}

// socketInodes returns the inodes of the sockets the processes pids hold
// open, as /proc/net lists them. A process that exited meanwhile is
// skipped; one whose descriptors cannot be read is [ErrTreeHidden].
func socketInodes(pids []int) (map[string]bool, error) {
	inodes := map[string]bool{}
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, ErrTreeHidden
		}
		for _, fd := range fds {
			target, err := os.Readlink(dir + fd.Name())
			if in, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
				inodes[strings.TrimSuffix(in, "]")] = true
			}
		}
	}
	return inodes, nil
}

package platform

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LaunchOptions configures [Launch]. The zero value of each field is its
// default.
type LaunchOptions struct {
	// Exec is the browser executable; empty means [FindChromium].
	Exec string
	// UserDataDir is the profile directory (required). Launch deletes a
	// stale DevToolsActivePort in it first. Check it with
	// [EnsurePrivateDir] before launching.
	UserDataDir string
	// Headless adds --headless=new; without it the browser needs a display.
	Headless bool
	// ExtraArgs go after the standard flags and before about:blank. They may
	// not set the user-data-dir or the remote-debugging flags.
	ExtraArgs []string
	// Env entries are added to the inherited environment (later entries
	// win); TMPDIR is always the private directory Launch creates, and HOME
	// and the XDG base directories default to a private home inside it.
	Env []string
	// TempParent is where Launch creates the browser's private TMPDIR;
	// empty means where [ShortTempDir] finds room. A caller that records it
	// before launching can remove what a launch left if the caller dies
	// mid-way; it makes it with [ShortTempDir] and [TempParentRoom], so
	// Chromium's sockets fit below it.
	TempParent string
	// RemoveUserDataDir makes [Process.Close] delete UserDataDir, for
	// ephemeral profiles. A launch that finds the profile in use never
	// deletes it.
	RemoveUserDataDir bool
	// StartTimeout bounds the wait for the DevTools endpoint; zero means
	// DefaultStartTimeout. The ctx passed to Launch may end it sooner.
	StartTimeout time.Duration
	// DebuggingPort makes the browser listen on a loopback DevTools port
	// (--remote-debugging-port=0, reached through [Process.WebSocketURL])
	// instead of speaking over a pipe. Any local process or user can connect
	// to such a port, so a browser webcodex owns never sets it; it exists for
	// a browser that stands in for a person's own Chrome, which webcodex
	// attaches to (tests).
	DebuggingPort bool
	// PrivateNetwork runs the browser in a network namespace of its own
	// whose one way out is [Process.PrivateNetworkListener]
	// ([PrivateNetwork] says whether this system allows it). It cannot be
	// combined with DebuggingPort.
	PrivateNetwork bool
}

// DefaultStartTimeout bounds start-up when LaunchOptions.StartTimeout is
// zero. The browser normally answers within 0.5 s (Chromium 156).
const DefaultStartTimeout = 20 * time.Second

// Teardown bounds: Browser.close, then SIGTERM, then SIGKILL of the group
// (Chromium 156 exits within about a second of Browser.close when healthy).
const (
	browserCloseWait = 5 * time.Second
	sigtermWait      = 2 * time.Second
	// forcedWait bounds each wait after SIGKILL, which cannot be ignored.
	forcedWait = 5 * time.Second
	// groupGrace lets children of an exited browser leave on their own
	// before they are killed.
	groupGrace = 1 * time.Second
	// escapeeGrace lets the crashpad handlers, which leave the group,
	// exit on their own after the browser.
	escapeeGrace = 2 * time.Second
	// drainWait bounds waiting for the output pipe to reach EOF; a process
	// that escaped the group can hold it open forever.
	drainWait = 1 * time.Second
)

// OutputLimit is how much of the browser's combined stdout and stderr a
// [Process] keeps: the last 16 KiB.
const OutputLimit = 16 << 10

// ErrStartTimeout reports that the browser's DevTools endpoint was not
// ready within the start-up bound: no answer on the pipe, or (with
// LaunchOptions.DebuggingPort) no port published.
var ErrStartTimeout = errors.New("platform: the browser's DevTools endpoint was not ready in time")

// ErrExitedEarly reports that the browser exited during start-up.
var ErrExitedEarly = errors.New("platform: the browser exited during start-up")

// profileInUseStatus is Chromium's exit status when another instance holds
// the profile ("Aborting now to avoid profile corruption").
const profileInUseStatus = 21

// LaunchError is a failed start-up. Its Error text holds no output, path or
// port; Output is for diagnosis only and must not be logged verbatim.
type LaunchError struct {
	// ExitCode is the browser's exit status, or -1 if it did not exit by
	// itself (it was stopped after a timeout or cancellation).
	ExitCode int
	// Output is the tail of the browser's stdout and stderr, with DevTools
	// WebSocket URLs redacted.
	Output []byte
	// Err is the cause: ErrStartTimeout, ErrExitedEarly or a context error.
	Err error
	// Reason is why the browser says it stopped (its last fatal line, as
	// [BrowserReason] reads it from Output), or empty.
	Reason string
}

func (e *LaunchError) Error() string {
	s := e.Err.Error()
	if e.ExitCode >= 0 {
		s = fmt.Sprintf("%s (exit status %d)", s, e.ExitCode)
	}
	if e.Reason != "" {
		s += ": the browser says " + strconv.Quote(e.Reason)
	}
	return s
}

// maxReason bounds the length of [LaunchError.Reason].
const maxReason = 120

// addressPattern matches what in a browser's line could name an endpoint.
var addressPattern = regexp.MustCompile(`(?i)\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?|\[[0-9a-f:.]+\](?::\d+)?|localhost:\d+|wss?://\S*`)

// BrowserReason returns why a browser that failed to start says it
// stopped: the message of its last FATAL line (Chromium's "[pid:tid:time:
// FATAL:file.cc:line] message"), or the known fatal ERROR line of a browser
// without a display, cut before the first path and with addresses
// replaced, so it names no path, port or endpoint. Empty when the output
// holds neither.
func BrowserReason(output []byte) string {
	var reason string
	for _, line := range strings.Split(string(output), "\n") {
		head, msg, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		if strings.Contains(head, ":FATAL:") || (strings.Contains(head, ":ERROR:") && strings.Contains(msg, "Missing X server")) {
			reason = msg
		}
	}
	if i := strings.IndexByte(reason, '/'); i >= 0 {
		reason = reason[:i]
	}
	reason = addressPattern.ReplaceAllString(reason, "[address]")
	reason = strings.TrimRight(strings.TrimSpace(reason), ":.,;")
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	return reason
}

func (e *LaunchError) Unwrap() error { return e.Err }

// Process is a browser started by [Launch], the leader of its own process
// group. Its methods are safe for concurrent use. The process runs until
// [Process.Close], or until the program that launched it dies (Linux
// Pdeathsig). Two goroutines serve it (one waits for exit, one drains its
// output); Close stops both.
type Process struct {
	cmd       *exec.Cmd
	pid       int
	fp        Fingerprint
	pipeR     *os.File     // our end of the browser's fd 4; nil with DebuggingPort
	pipeW     *os.File     // our end of the browser's fd 3; nil with DebuggingPort
	wsURL     string       // set only with DebuggingPort
	netLn     net.Listener // set only with PrivateNetwork
	tmpDir    string
	userData  string
	removeUDD bool
	out       *tailBuffer
	outR      *os.File
	exited    chan struct{} // closed when the main process has been waited for
	drained   chan struct{} // closed when the output reader stops

	closeOnce sync.Once
	closeErr  error
}

// PID returns the browser's main process ID.
func (p *Process) PID() int { return p.pid }

// PGID returns the browser's process group ID (equal to its PID: the
// browser leads its own group).
func (p *Process) PGID() int { return p.pid }

// Fingerprint returns the browser's identity, taken once its DevTools
// endpoint was up (after any wrapper script had exec'd the real binary).
func (p *Process) Fingerprint() Fingerprint { return p.fp }

// Pipe returns our ends of the browser's DevTools pipe, the only way to
// speak to a browser launched without LaunchOptions.DebuggingPort (nil, nil
// with it): fromBrowser carries its NUL-terminated JSON messages, toBrowser
// takes commands. Hand both to one reader (cdp.NewPipeSocket), which then
// owns them. Launch has already read the answer to its own
// Browser.getVersion (id 1). Closing toBrowser makes the browser exit;
// Close closes both.
func (p *Process) Pipe() (fromBrowser, toBrowser *os.File) { return p.pipeR, p.pipeW }

// WebSocketURL returns the browser-level DevTools WebSocket URL of a
// browser launched with LaunchOptions.DebuggingPort, and "" otherwise. It is
// an internal secret: never log it or return it to an agent.
func (p *Process) WebSocketURL() string { return p.wsURL }

// Exited returns a channel closed when the main browser process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// TmpDir returns the private TMPDIR given to the browser, removed by
// [Process.Close].
func (p *Process) TmpDir() string { return p.tmpDir }

// Output returns the last [OutputLimit] bytes of the browser's stdout and
// stderr, with DevTools WebSocket URLs redacted. It is for diagnosis: do
// not copy it into logs.
func (p *Process) Output() []byte { return p.out.Bytes() }

// exitCode returns the main process's exit status once Exited is closed:
// -1 when a signal ended it.
func (p *Process) exitCode() int {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		copy(b.buf, b.buf[over:])
		b.buf = b.buf[:b.max]
	}
	return n, nil
}

var wsURLPattern = regexp.MustCompile(`wss?://[^\s"'<>]+`)

// Bytes returns a redacted copy of the kept tail.
func (b *tailBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return wsURLPattern.ReplaceAll(b.buf, []byte("ws://[redacted]"))
}

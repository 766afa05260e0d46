// Package persontty runs a command on a terminal the way a person's own
// terminal window does, for tests of `webcodex approve`: on a
// pseudo-terminal whose master side is held by script(1), started through
// `setsid -f` so that it is reparented away from the test's process tree,
// as a terminal emulator launched from the desktop is not a descendant of
// the agent that asked for an attach. The test types through script's
// standard input and reads the screen from its standard output.
//
// A test that drives a pty it holds itself (creack/pty) plays the agent
// instead: the Runner refuses that terminal.
package persontty

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Term is one running terminal.
type Term struct {
	t    testing.TB
	in   io.WriteCloser
	pid  int    // script's pid
	comm string // its command name, checked before it is signalled

	mu     sync.Mutex // mu guards the fields that follow
	screen bytes.Buffer
	done   bool
	change chan struct{} // closed and replaced on every change
}

// Start runs argv (with env as its whole environment) on a new terminal.
// The terminal is killed, by its pid, when the test ends.
func Start(t testing.TB, env []string, argv ...string) *Term {
	t.Helper()
	for _, tool := range []string{"setsid", "script"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (util-linux): %v", tool, err)
		}
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	cmd := exec.Command("setsid", "-f", "sh", "-c", `echo $$ >&3; exec 3>&-; exec script -q -e -c "$PERSONTTY_CMD" /dev/null`)
	cmd.Env = append(append([]string{}, env...), "PERSONTTY_CMD="+strings.Join(quoted, " "), "SHELL=/bin/sh")
	// Plain pipes, not StdinPipe/StdoutPipe: Wait below returns when
	// setsid's first process exits, long before the terminal closes.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pidR, pidW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	cmd.ExtraFiles = []*os.File{pidW}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	pidW.Close()
	// setsid -f returns once it has forked: after Wait the terminal's
	// parent is gone and it belongs to no process of the test.
	if err := cmd.Wait(); err != nil {
		t.Fatalf("setsid: %v", err)
	}
	line, err := bufio.NewReader(pidR).ReadString('\n')
	pidR.Close()
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the terminal did not report its pid: %q %v", line, err)
	}
	term := &Term{t: t, in: inW, pid: pid, comm: "script", change: make(chan struct{})}
	go term.read(outR)
	t.Cleanup(term.kill)
	return term
}

// PID is the pid of the process holding the terminal's master side.
func (tm *Term) PID() int { return tm.pid }

func (tm *Term) read(r io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		tm.mu.Lock()
		tm.screen.Write(buf[:n])
		if err != nil {
			tm.done = true
		}
		close(tm.change)
		tm.change = make(chan struct{})
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Screen returns everything the terminal showed so far.
func (tm *Term) Screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.screen.String()
}

// WaitFor waits until the screen shows s, failing the test after d.
func (tm *Term) WaitFor(s string, d time.Duration) string {
	tm.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		screen, done, change := tm.screen.String(), tm.done, tm.change
		tm.mu.Unlock()
		if strings.Contains(screen, s) {
			return screen
		}
		if done {
			tm.t.Fatalf("the terminal closed before showing %q:\n%s", s, screen)
		}
		select {
		case <-change:
		case <-deadline.C:
			tm.t.Fatalf("the terminal did not show %q within %s:\n%s", s, d, screen)
		}
	}
}

// Type types s on the terminal.
func (tm *Term) Type(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.in, s); err != nil {
		tm.t.Fatalf("type on the terminal: %v", err)
	}
}

// Wait waits until the command ended and the terminal closed, failing the
// test after d, and returns the whole screen.
func (tm *Term) Wait(d time.Duration) string {
	tm.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		screen, done, change := tm.screen.String(), tm.done, tm.change
		tm.mu.Unlock()
		if done {
			return screen
		}
		select {
		case <-change:
		case <-deadline.C:
			tm.t.Fatalf("the terminal's command did not end within %s:\n%s", d, screen)
		}
	}
}

// kill ends the terminal if it is still the process started here.
func (tm *Term) kill() {
	tm.in.Close()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", tm.pid))
	if err == nil && strings.TrimSpace(string(comm)) == tm.comm {
		if p, err := os.FindProcess(tm.pid); err == nil {
			_ = p.Kill()
		}
	}
}

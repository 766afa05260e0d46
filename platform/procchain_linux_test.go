package platform

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// startOn starts sleep on a new pty this test holds (as its controlling
// terminal) and returns it; it is killed, by pid, when the test ends.
func startOn(t *testing.T) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); f.Close() })
	return cmd, f
}

// TestTerminalOfNamesTheTerminalAndWhoDrivesIt: a process on a pty is
// described by the pty's name, its session leader, the leader's parent and
// the holder of the master side (this test); descent is by process
// identity.
func TestTerminalOfNamesTheTerminalAndWhoDrivesIt(t *testing.T) {
	cmd, _ := startOn(t)
	pid := cmd.Process.Pid
	link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0")
	if err != nil {
		t.Fatal(err)
	}
	term, err := TerminalOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	self, err := ProcessRef(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if term.Device != strings.TrimPrefix(link, "/dev/") || !strings.HasPrefix(term.Device, "pts/") {
		t.Errorf("device %q, want %q", term.Device, link)
	}
	if term.Leader.PID != pid || !term.LeaderParent.Same(self) || !term.Foreground {
		t.Errorf("leader %+v, leader's parent %+v, foreground %v; want the child, this test, true", term.Leader, term.LeaderParent, term.Foreground)
	}
	found := false
	for _, d := range term.Drivers {
		found = found || d.Same(self)
	}
	if !found {
		t.Errorf("drivers %+v do not include this test (pid %d), which holds the master side", term.Drivers, os.Getpid())
	}
	child, _ := ProcessRef(pid)
	if !DescendsFrom(pid, self, 8) || DescendsFrom(os.Getpid(), child, 8) {
		t.Errorf("descent is wrong: child from self %v, self from child %v", DescendsFrom(pid, self, 8), DescendsFrom(os.Getpid(), child, 8))
	}
	if reused := (ProcRef{PID: self.PID, Start: self.Start + 1}); DescendsFrom(pid, reused, 8) {
		t.Error("a process with this pid but another start time counts as an ancestor")
	}
	if chain := Ancestry(pid, 8); len(chain) < 2 || !chain[0].Same(child) || !chain[1].Same(self) {
		t.Errorf("ancestry %+v", chain)
	}
}

// TestTerminalOfRefusesPipesAndBorrowedTerminals: standard input on a pipe,
// or on a terminal that is not the process's controlling terminal, is not
// a terminal to answer on.
func TestTerminalOfRefusesPipesAndBorrowedTerminals(t *testing.T) {
	piped := exec.Command("sleep", "60")
	if _, err := piped.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := piped.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { piped.Process.Kill(); piped.Wait() })
	if _, err := TerminalOf(piped.Process.Pid); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("a process on pipes: %v, want ErrNoTerminal", err)
	}
	// A pty opened by path and handed over, without becoming the
	// controlling terminal (no new session).
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	borrowed := exec.Command("sleep", "60")
	borrowed.Stdin, borrowed.Stdout = slave, slave
	if err := borrowed.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { borrowed.Process.Kill(); borrowed.Wait() })
	if _, err := TerminalOf(borrowed.Process.Pid); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("a process on a terminal that is not its controlling one: %v, want ErrNoTerminal", err)
	}
}

func TestParseLinks(t *testing.T) {
	stat := []byte("42 (a) b) (c) S 7 42 42 34817 42 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0")
	l, err := parseLinks(42, stat)
	if err != nil {
		t.Fatal(err)
	}
	if l.Comm != "a) b) (c" || l.ppid != 7 || l.session != 42 || l.ttyNr != 34817 || l.tpgid != 42 || l.Start != 123456 {
		t.Fatalf("parseLinks = %+v", l)
	}
	if !sameDevice(34817, 136<<8|1) {
		t.Error("tty_nr 34817 is /dev/pts/1 (136, 1)")
	}
	if _, err := parseLinks(1, []byte("1 (z) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0")); !errors.Is(err, ErrNoProcess) {
		t.Errorf("a zombie: %v", err)
	}
}

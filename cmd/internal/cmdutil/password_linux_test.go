package cmdutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestReadPasswordEchoOff reads from a real pseudo-terminal: what is typed
// is returned and never echoed, the terminal's echo is back on afterwards,
// and an interrupt (what Ctrl-C sends the terminal's foreground job)
// cancels instead of ending the process with the echo off.
func TestReadPasswordEchoOff(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	// Opened by path, as `webcodex approve` opens /dev/tty: a file the
	// runtime polls, so closing it ends a read left behind by a cancel.
	tty, err := os.OpenFile(slave.Name(), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var screen bytes.Buffer
	screenDone := make(chan struct{})
	go func() { defer close(screenDone); io.Copy(&screen, master) }()
	read := func(typed string) ([]byte, error) {
		t.Helper()
		type result struct {
			b   []byte
			err error
		}
		done := make(chan result, 1)
		go func() { b, err := readPasswordFrom(tty, "Password: "); done <- result{b, err} }()
		// Typed only once echo is off: the reader turns it off before reading.
		waitfor.Until(t, 10*time.Second, "the echo is turned off", func() bool {
			tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			return tio.Lflag&unix.ECHO == 0
		})
		if typed == "" {
			syscall.Kill(os.Getpid(), syscall.SIGINT) // ReadPassword is listening: echo is off after it subscribed
		} else {
			master.Write([]byte(typed))
		}
		r := <-done
		return r.b, r.err
	}
	got, err := read("s3cret pw\n")
	if err != nil || string(got) != "s3cret pw" {
		t.Fatalf("read %q, %v", got, err)
	}
	if _, err := read(""); !errors.Is(err, errCancelled) {
		t.Fatalf("an interrupt = %v, want errCancelled", err)
	}
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil || tio.Lflag&unix.ECHO == 0 {
		t.Fatalf("the terminal's mode was not restored: %v", err)
	}
	// Echo is on again: what is typed now shows, which proves the screen
	// is read and the password was not on it.
	master.Write([]byte("visible\n"))
	tty.Close()
	slave.Close()
	<-screenDone // the master reads the end once no one holds the terminal
	if s := screen.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "visible") || !strings.Contains(s, "Password: ") {
		t.Fatalf("the terminal showed %q", s)
	}
}

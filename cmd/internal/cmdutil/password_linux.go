package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxPasswordBytes bounds a password typed for an approval: pam_unix's own
// bound (PAM_MAX_RESP_SIZE).
const maxPasswordBytes = 512

// errCancelled is returned by readPasswordFrom when the person pressed
// Ctrl-C (or the process was told to end) while it read.
var errCancelled = errors.New("cmdutil: cancelled at the terminal")

// readPasswordFrom writes prompt to the terminal tty once its echo is off (so
// nothing typed after the prompt shows) and reads one line (the way sudo
// asks), restoring the terminal's mode before it returns. An
// interrupt (Ctrl-C), hangup or termination while it reads restores the
// terminal and returns errCancelled, so the process never ends with the
// echo still off. It reads at most maxPasswordBytes+1 bytes; the line ends
// at a newline or when the terminal closes.
func readPasswordFrom(tty *os.File, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("cmdutil: read the terminal's mode: %w", err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return nil, fmt.Errorf("cmdutil: turn the terminal's echo off: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	if _, err := io.WriteString(tty, prompt); err != nil {
		return nil, fmt.Errorf("cmdutil: write the password prompt: %w", err)
	}
	line := make(chan []byte, 1)
	go func() { line <- readLine(tty) }() // ends when the line does, or when the caller closes tty
	select {
	case l := <-line:
		return l, nil
	case <-signals:
		return nil, errCancelled
	}
}

// readLine reads up to a newline, the end of input or maxPasswordBytes+1 bytes.
func readLine(tty *os.File) []byte {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= maxPasswordBytes {
		n, err := tty.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return line
			}
			line = append(line, b[0])
		}
		if err != nil {
			return line
		}
	}
	return line
}

//go:build !linux

package cmdutil

import (
	"errors"
	"os"
)

// errCancelled is returned by readPasswordFrom when the person cancelled.
var errCancelled = errors.New("cmdutil: cancelled at the terminal")

// readPasswordFrom is not implemented on this operating system yet.
func readPasswordFrom(tty *os.File, prompt string) ([]byte, error) {
	return nil, errors.New("cmdutil: reading a password with the echo off is not implemented on this operating system yet")
}

// Package testbin builds the webcodex binary once per test binary, for
// end-to-end tests that run it as a person or an agent host would.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Main builds github.com/webcodex/webcodex/cmd/webcodex into a temporary
// directory (with the race detector when race is set), stores its path in
// *binary, runs the tests and removes the directory. Use it from TestMain;
// m is the *testing.M, or a wrapper of it (tracecheck.Wrap).
func Main(m interface{ Run() int }, race bool, binary *string) {
	dir, err := os.MkdirTemp("", "webcodex-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbin: %v\n", err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "webcodex")
	args := []string{"build", "-o", *binary}
	if race {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, "github.com/webcodex/webcodex/cmd/webcodex")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "testbin: build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

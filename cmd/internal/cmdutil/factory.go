// Package cmdutil is what the command line's verbs share wherever they
// live (cli, runner, mcp): the Factory that reaches the Runner, the output
// conventions, the errors the exit code is chosen from, and the version.
// It holds no browser logic, and imports nothing of the Runner's but its
// local API.
package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// IO are the streams a command writes to: stdout carries only the intended
// output, everything else goes to stderr.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Factory carries what every verb needs, built lazily.
type Factory struct {
	IO   IO
	JSON bool // --json: stable machine-readable output

	// Runner, when set, is where commands reach the Runner (a test's
	// route table); nil: the local API over the socket, started when no
	// Runner answers.
	Runner localapi.Invoker

	// QuietStart leaves unsaid that a background Runner was started: for a
	// command that stops the Runner it started before it returns (demo).
	QuietStart bool

	client *localapi.Client
}

// ErrRunnerUnreachable is wrapped by errors from commands that could not
// reach (or start) the Runner.
var ErrRunnerUnreachable = errors.New("runner unreachable")

// UsageError marks a bad command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ShownError is a failure whose result is already on stdout (a page the
// server answered with 404, doctor's report): the exit code says failure,
// and --json adds no second object.
type ShownError struct{ Err error }

func (e *ShownError) Error() string { return e.Err.Error() }
func (e *ShownError) Unwrap() error { return e.Err }

// Shown marks err as a failure whose result is already printed on stdout.
func Shown(err error) error { return &ShownError{err} }

// ExactArgs takes exactly n positional arguments; other counts are a usage
// error (exit 2).
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{Err: fmt.Errorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}

// Emit prints v as JSON with --json, else calls human.
func (f *Factory) Emit(v any, human func(w io.Writer)) error {
	if f.JSON {
		return EmitJSON(f.IO.Out, v)
	}
	human(f.IO.Out)
	return nil
}

// EmitJSON writes v as every verb's --json output is written: one
// indented object (README: "JSON output").
func EmitJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Progress prints a slow step's progress when stderr is a terminal.
func (f *Factory) Progress(format string, args ...any) {
	if file, ok := f.IO.Err.(*os.File); ok {
		if st, err := file.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(file, format+"\n", args...)
		}
	}
}

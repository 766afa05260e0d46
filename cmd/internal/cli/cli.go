// Package cli is the webcodex command line: cobra verbs that format what the
// Runner's local API returns. It holds no browser logic of its own.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// Exit codes: one switch maps every error to one of these.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitRefused     = 3
	ExitUnreachable = 4
)

// Version is set at link time (-ldflags "-X .../cli.Version=v1.2.3").
var Version = "dev"

// ErrRunnerUnreachable is wrapped by errors from commands that could not
// reach (or start) the Runner.
var ErrRunnerUnreachable = errors.New("runner unreachable")

// UsageError marks a bad command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

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

	client *localapi.Client
}

// Main runs the CLI and returns the process exit code.
// extra adds verbs that live outside this package (serve, mcp), so the CLI
// itself imports no browser code.
func Main(args []string, in io.Reader, out, errw io.Writer, extra ...func(*Factory) *cobra.Command) int {
	f := &Factory{IO: IO{In: in, Out: out, Err: errw}}
	root := NewRootCmd(f)
	for _, mk := range extra {
		c := mk(f)
		if old, _, err := root.Find([]string{c.Name()}); err == nil && old != root {
			root.RemoveCommand(old)
		}
		root.AddCommand(c)
	}
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.Execute()
	return exitCode(f, err)
}

// exitCode is the one error-to-exit-code switch.
func exitCode(f *Factory, err error) int {
	if err == nil {
		return ExitOK
	}
	if r, ok := fsm.AsRefusal(err); ok {
		if f.JSON {
			json.NewEncoder(f.IO.Out).Encode(map[string]any{"refusal": r})
		}
		fmt.Fprintf(f.IO.Err, "refused: %s\n", r.Code)
		if r.Detail != "" {
			fmt.Fprintf(f.IO.Err, "  %s\n", r.Detail)
		}
		if r.Next != "" {
			fmt.Fprintf(f.IO.Err, "  next: %s\n", r.Next)
		}
		return ExitRefused
	}
	if _, ok := errors.AsType[*UsageError](err); ok {
		fmt.Fprintf(f.IO.Err, "usage: %v\n", err)
		return ExitUsage
	}
	if errors.Is(err, ErrRunnerUnreachable) {
		fmt.Fprintf(f.IO.Err, "error: %v\n", err)
		return ExitUnreachable
	}
	fmt.Fprintf(f.IO.Err, "error: %v\n", err)
	return ExitFailure
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "webcodex",
		Short:         "Let an agent drive Chromium over CDP, with every boundary enforced",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().BoolVar(&f.JSON, "json", false, "print stable machine-readable JSON")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(
		NewCmdVersion(f),
		NewCmdSpec(f),
		NewCmdLaunch(f),
		NewCmdStatus(f),
		NewCmdPages(f),
		NewCmdOpen(f),
		NewCmdGoto(f),
		NewCmdRead(f),
		NewCmdScreenshot(f),
		NewCmdEval(f),
		NewCmdClose(f),
		NewCmdStop(f),
		NewCmdDemo(f),
		NewCmdAttach(f),
		NewCmdApprove(f),
		NewCmdReconnect(f),
		NewCmdSnapshot(f),
		NewCmdWait(f),
		newDiagCmd(f, "console", "Read console messages and JS exceptions (bounded, --since cursor)"),
		newDiagCmd(f, "network", "Read network requests (bounded, --since cursor)"),
		NewCmdProbe(f),
		NewCmdClosePage(f),
	)
	root.AddCommand(NewCmdActions(f)...)
	for _, c := range notBuilt {
		root.AddCommand(newCmdNotBuilt(c[0], c[1]))
	}
	return root
}

// notBuilt are the verbs of the design card not built yet: they say so.
var notBuilt = [][2]string{
	{"serve", "Run the Runner daemon"},
}

func newCmdNotBuilt(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short + " (not built yet)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return fsm.Refusef(fsm.RouteUnavailable, "`webcodex %s` is not built yet in this version", use)
		},
	}
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{Err: fmt.Errorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}

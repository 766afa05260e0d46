// Package cli is the webcodex command line: cobra verbs that format what the
// Runner's local API returns. It holds no browser logic of its own.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
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

// Factory is the verbs' shared context (cmdutil.Factory).
type Factory = cmdutil.Factory

// UsageError marks a bad command line (cmdutil.UsageError).
type UsageError = cmdutil.UsageError

// Main runs the CLI and returns the process exit code.
// extra adds verbs that live outside this package (serve, mcp), so the CLI
// itself imports no browser code.
func Main(args []string, in io.Reader, out, errw io.Writer, extra ...func(*Factory) *cobra.Command) int {
	return Run(&Factory{IO: cmdutil.IO{In: in, Out: out, Err: errw}}, args, extra...)
}

// Run runs the CLI with f and returns the exit code. A test's Factory
// reaches a route table of its own instead of a Runner (f.Runner), so each
// verb's parsing and presentation are tested without a browser.
func Run(f *Factory, args []string, extra ...func(*Factory) *cobra.Command) int {
	in, out, errw := f.IO.In, f.IO.Out, f.IO.Err
	if in == nil {
		in = strings.NewReader("")
	}
	root := NewRootCmd(f)
	// --json is known before parsing (after the flag's registration, which
	// sets its default), so a flag mistake is reported in JSON too.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			f.JSON = true
		}
	}
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

// RefusalOutput is --json for a refusal: its code, detail, next step, and
// what it is about (approvalId, browser, page) as fields of their own.
type RefusalOutput struct {
	Refusal *fsm.Refusal `json:"refusal"`
}

// ErrorOutput is --json for a failure that is not a refusal.
type ErrorOutput struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo says what kind of failure it was: usage, unreachable or
// failure.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// exitCode is the one error-to-exit-code switch: a refusal exits with its
// code's class ([fsm.Code.CLIExit]: 3, or 2 for a malformed request, 1 for
// a failed navigation), a bad command line 2, an unreachable Runner 4,
// anything else 1. With --json, stdout carries one object for the error
// too: {"refusal":{"code","detail","next"}} or {"error":{"kind","message"}},
// unless the verb already printed its one object (cmdutil.Shown).
func exitCode(f *Factory, err error) int {
	if err == nil {
		return ExitOK
	}
	_, shown := errors.AsType[*cmdutil.ShownError](err)
	if r, ok := fsm.AsRefusal(err); ok {
		if f.JSON && !shown {
			json.NewEncoder(f.IO.Out).Encode(RefusalOutput{Refusal: r})
		}
		fmt.Fprintf(f.IO.Err, "refused: %s\n", r.Code)
		if r.Detail != "" {
			fmt.Fprintf(f.IO.Err, "  %s\n", r.Detail)
		}
		if r.Next != "" {
			fmt.Fprintf(f.IO.Err, "  next: %s\n", r.Next)
		}
		return r.Code.CLIExit()
	}
	code, kind, prefix := ExitFailure, "failure", "webcodex"
	if _, ok := errors.AsType[*UsageError](err); ok {
		code, kind, prefix = ExitUsage, "usage", "usage"
	} else if errors.Is(err, cmdutil.ErrRunnerUnreachable) {
		code, kind = ExitUnreachable, "unreachable"
	}
	msg := localapi.Plain(err.Error())
	if f.JSON && !shown {
		json.NewEncoder(f.IO.Out).Encode(ErrorOutput{Error: ErrorInfo{Kind: kind, Message: msg}})
	}
	fmt.Fprintf(f.IO.Err, "%s: %s\n", prefix, msg)
	// A launch failure names its log already (runner.log, or the standard
	// error of the serve or mcp command): no second pointer.
	if _, fromRunner := errors.AsType[*localapi.RunnerError](err); fromRunner && !strings.Contains(msg, "its output is in ") {
		fmt.Fprintln(f.IO.Err, "  the Runner's log says more: runner.log in the state directory ($WEBCODEX_STATE_DIR, else $XDG_STATE_HOME/webcodex or ~/.local/state/webcodex)")
	}
	return code
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "webcodex",
		Short:         "Let an agent drive Chromium over CDP, with every boundary enforced",
		Version:       cmdutil.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// An unknown command is a usage mistake (exit 2), not a failure.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q (see webcodex --help)", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg = fmt.Sprintf("unknown command %q: did you mean %q?", args[0], s[0])
			}
			return &UsageError{Err: errors.New(msg)}
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("webcodex {{.Version}}\n")
	root.PersistentFlags().BoolVar(&f.JSON, "json", false, "print stable machine-readable JSON")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.AddCommand(
		NewCmdVersion(f),
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
		newDiagCmd(f, op.Console),
		newDiagCmd(f, op.Network),
		newRequestCmd(f),
		NewCmdProbe(f),
		NewCmdClosePage(f),
	)
	root.AddCommand(NewCmdActions(f)...)
	root.AddCommand(NewCmdVerbs(f)...) // history, tabs, downloads (verbs_cmds.go)
	for _, c := range notBuilt {
		root.AddCommand(newCmdNotBuilt(c[0], c[1]))
	}
	return root
}

// notBuilt are the verbs announced but not built yet: they say so.
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

func exactArgs(n int) cobra.PositionalArgs { return cmdutil.ExactArgs(n) }

package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// NewCmdAttach attaches to the person's running Chrome.
func NewCmdAttach(f *Factory) *cobra.Command {
	var req localapi.AttachRequest
	cmd := &cobra.Command{
		Use:   "attach (--profile-dir DIR | --endpoint 127.0.0.1:PORT) [--allow ORIGIN…]",
		Short: "Attach to your running Chrome after one real approval (detach-only teardown)",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if (req.ProfileDir == "") == (req.Endpoint == "") {
				return &UsageError{Err: fmt.Errorf("give exactly one of --profile-dir and --endpoint")}
			}
			f.progress("attaching (answer Chrome's \"Allow remote debugging?\" prompt if it appears)…")
			res, err := callWith[localapi.AttachRequest, localapi.AttachResult](f, "attach", req, 3*time.Minute)
			if err != nil {
				return err
			}
			return f.emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "attached browser %s (%s), generation %d, %d visible page(s)\n", res.Browser.ID, res.Product, res.Browser.Generation, len(res.Browser.Pages))
				for _, p := range res.Browser.Pages {
					fmt.Fprintf(w, "  page %s\t%s\n", p.ID, p.URL)
				}
			})
		},
	}
	cmd.Flags().StringVar(&req.ProfileDir, "profile-dir", "", "the running browser's profile directory (its DevToolsActivePort is read)")
	cmd.Flags().StringVar(&req.Endpoint, "endpoint", "", "the debugging endpoint, 127.0.0.1:PORT (loopback only)")
	cmd.Flags().StringArrayVar(&req.Allow, "allow", nil, "origin the agent may read and act on (repeatable; none = nothing)")
	cmd.Flags().BoolVar(&req.AllowEvaluate, "allow-evaluate", false, "allow JavaScript evaluation and raw page CDP on this attachment")
	cmd.Flags().StringVar(&req.Request, "request", "", "the approval request id to use (default: the one matching these arguments)")
	return cmd
}

// callWith is call with a longer deadline, for steps that wait on a person.
func callWith[Req, Resp any](f *Factory, route string, req Req, d time.Duration) (Resp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var zero Resp
	c, err := f.Client(ctx)
	if err != nil {
		return zero, err
	}
	resp, err := localapi.Call[Req, Resp](ctx, c, route, req)
	if err != nil && isUnreachable(err) {
		return zero, fmt.Errorf("%w: %v", ErrRunnerUnreachable, err)
	}
	return resp, err
}

// isTerminal reports whether the file is a character device (a terminal).
func isTerminal(v any) bool {
	file, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// NewCmdApprove approves a pending attach request. It needs a person: stdin
// and stdout must be terminals, and the person types the confirmation.
func NewCmdApprove(f *Factory) *cobra.Command {
	var deny bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve (or --deny) a pending attach request: interactive terminal only",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if !isTerminal(f.IO.In) || !isTerminal(f.IO.Out) {
				return fsm.Refuse(fsm.ApprovalInvalid, "approval needs a person at an interactive terminal (stdin and stdout must be a TTY)")
			}
			info, err := call[localapi.ApprovalRequest, localapi.ApprovalSummary](f, "approval", localapi.ApprovalRequest{ID: args[0]})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "\n%s\n\nThis request expires at %s.\n", info.Summary, info.Expires.Local().Format(time.TimeOnly))
			if deny {
				_, err := call[localapi.ApprovalRequest, map[string]any](f, "deny", localapi.ApprovalRequest{ID: args[0]})
				if err == nil {
					fmt.Fprintln(f.IO.Out, "denied.")
				}
				return err
			}
			fmt.Fprint(f.IO.Out, "Type \"allow\" to approve, anything else to cancel: ")
			line, _ := bufio.NewReader(io.LimitReader(f.IO.In, 256)).ReadString('\n')
			if strings.TrimSpace(line) != "allow" {
				fmt.Fprintln(f.IO.Out, "not approved.")
				return fsm.Refuse(fsm.ApprovalInvalid, "the person did not confirm")
			}
			if _, err := call[localapi.ApprovalRequest, map[string]any](f, "approve", localapi.ApprovalRequest{ID: args[0]}); err != nil {
				return err
			}
			fmt.Fprintln(f.IO.Out, "approved. Run the same `webcodex attach` again to connect.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&deny, "deny", false, "deny the request instead")
	return cmd
}

// NewCmdReconnect reconnects an attached browser.
func NewCmdReconnect(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "reconnect BROWSER",
		Short: "Reconnect an attached browser: new generation, old page ids and refs refused",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f.progress("reconnecting…")
			res, err := callWith[localapi.BrowserRequest, localapi.ReconnectResult](f, "reconnect", localapi.BrowserRequest{Browser: args[0]}, 2*time.Minute)
			if err != nil {
				return err
			}
			return f.emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "browser %s reconnected: generation %d, capabilities invalidated: list pages again\n", res.Browser, res.Generation)
			})
		},
	}
}

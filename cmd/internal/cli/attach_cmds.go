package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// NewCmdAttach attaches to the person's running Chrome.
func NewCmdAttach(f *Factory) *cobra.Command {
	var req localapi.AttachRequest
	var offer string
	cmd := &cobra.Command{
		Use:   "attach (--profile-dir DIR | --endpoint 127.0.0.1:PORT | --offer ID) [--allow ORIGIN…]",
		Short: "Attach to your running Chrome after one real approval (detach-only teardown)",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if err := cmdutil.CheckAllow(req.Allow); err != nil {
				return &UsageError{Err: err} // before any Runner starts
			}
			if offer != "" {
				if req.ProfileDir != "" || req.Endpoint != "" {
					return &UsageError{Err: fmt.Errorf("--offer attaches a shared tab: give it without --profile-dir or --endpoint")}
				}
				return attachOffer(f, localapi.AttachOfferRequest{Offer: offer, Allow: req.Allow, AllowEvaluate: req.AllowEvaluate})
			}
			if (req.ProfileDir == "") == (req.Endpoint == "") {
				return &UsageError{Err: fmt.Errorf("give exactly one of --profile-dir and --endpoint")}
			}
			f.Progress("attaching (answer Chrome's \"Allow remote debugging?\" prompt if it appears)…")
			res, err := callWith(f, localapi.Attach, req, 3*time.Minute)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "attached browser %s (%s), generation %d, %d visible page(s)\n", res.Browser.ID, res.Product, res.Browser.Generation, len(res.Browser.Pages))
				for _, p := range res.Browser.Pages {
					fmt.Fprintf(w, "  page %s\t%s\n", p.ID, p.URL)
				}
			})
		},
	}
	cmd.Flags().StringVar(&req.ProfileDir, "profile-dir", "", "the running browser's profile directory (its DevToolsActivePort is read; for a browser started with --remote-debugging-port=PORT use --endpoint)")
	cmd.Flags().StringVar(&req.Endpoint, "endpoint", "", "the debugging endpoint, 127.0.0.1:PORT (loopback only)")
	cmd.Flags().StringVar(&offer, "offer", "", "the exact offer of a tab shared from the webcodex extension (webcodex discover lists them)")
	cmd.Flags().StringArrayVar(&req.Allow, "allow", nil, "origin the agent may read and act on (repeatable; none = nothing)")
	cmd.Flags().BoolVar(&req.AllowEvaluate, "allow-evaluate", false, "allow JavaScript evaluation and raw page CDP on this attachment")
	cmd.Flags().BoolVar(&req.PressPrompt, "press-prompt", false, "ask that webcodex press Chrome's own \"Allow remote debugging?\" prompt for the person (shown at approval; Linux X11 with accessibility on)")
	cmd.Flags().StringVar(&req.Request, "request", "", "the approval request id to use (default: the one matching these arguments)")
	return cmd
}

// callWith is call with a longer deadline, for steps that wait on a person.
func callWith[Req, Resp any](f *Factory, rt localapi.Route[Req, Resp], req Req, d time.Duration) (Resp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var zero Resp
	c, err := f.Invoker(ctx)
	if err != nil {
		return zero, err
	}
	resp, err := rt.Call(ctx, c, req)
	return resp, unreachable(err)
}

// unreachable says a lost Runner in the CLI's terms: exit 4.
func unreachable(err error) error {
	if errors.Is(err, localapi.ErrUnreachable) {
		return fmt.Errorf("%w: %v", cmdutil.ErrRunnerUnreachable, err)
	}
	return err
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

// NewCmdApprove approves a pending attach request. It needs a person:
// stdin and stdout must be terminals, and the person types the
// confirmation — the one-time code from the desktop's notification when
// the session has a desktop.
func NewCmdApprove(f *Factory) *cobra.Command {
	var deny bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve (or --deny) a pending attach request: interactive terminal only",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), consentAnswerTimeout)
			defer cancel()
			// Where the request lives: the Runner daemon, or an embedded
			// `webcodex mcp` server (which has its own approve). Asking
			// starts no Runner.
			c, err := f.RunningClient(ctx)
			if err != nil {
				return err
			}
			held := false
			if c != nil {
				actx, acancel := context.WithTimeout(ctx, 5*time.Second)
				_, aerr := localapi.Approval.Call(actx, c, localapi.ApprovalRequest{ID: args[0]})
				acancel()
				held = aerr == nil
			}
			if !held && cmdutil.MCPHasApproval(ctx, args[0]) {
				ref := fsm.Refusef(fsm.ApprovalInvalid, "approval request %s belongs to a running `webcodex mcp` server, not the Runner", args[0])
				ref.Next = fmt.Sprintf("webcodex mcp approve %s", args[0])
				ref.ApprovalID = args[0]
				return ref
			}
			if c == nil {
				return fsm.Refusef(fsm.ApprovalInvalid, "no Runner is running and no `webcodex mcp` server has approval request %s (it may have expired): run the attach again for a fresh one", args[0])
			}
			if !isTerminal(f.IO.In) || !isTerminal(f.IO.Out) {
				return fsm.Refuse(fsm.ApprovalInvalid, "approval needs a person at an interactive terminal (stdin and stdout must be a TTY)")
			}
			return cmdutil.RunApproval(ctx, f.IO.In, f.IO.Out, c, args[0], deny, "Run the same `webcodex attach` again to connect.")
		},
	}
	cmd.Flags().BoolVar(&deny, "deny", false, "deny the request instead")
	return cmd
}

// consentAnswerTimeout bounds `webcodex approve`, which waits on a person.
const consentAnswerTimeout = 10 * time.Minute

// NewCmdReconnect reconnects an attached browser.
func NewCmdReconnect(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "reconnect BROWSER",
		Short: "Reconnect an attached browser: new generation, old page ids and refs refused",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f.Progress("reconnecting…")
			res, err := callWith(f, localapi.Reconnect, localapi.BrowserRequest{Browser: args[0]}, 2*time.Minute)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "browser %s reconnected: generation %d, capabilities invalidated: list pages again\n", res.Browser, res.Generation)
			})
		},
	}
}

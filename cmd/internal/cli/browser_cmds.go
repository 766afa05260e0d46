package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// Bounds on the CLI's waits: each command's request has one deadline.
const (
	defaultTimeout = 60 * time.Second
)

// call runs one local API request with the command's deadline.
func call[Req, Resp any](f *Factory, rt localapi.Route[Req, Resp], req Req) (Resp, error) {
	return callWith(f, rt, req, defaultTimeout)
}

// NewCmdLaunch launches a browser webcodex owns.
func NewCmdLaunch(f *Factory) *cobra.Command {
	var managed string
	var headless, headed bool
	var allow []string
	cmd := &cobra.Command{
		Use:   "launch [--managed NAME] [--headless|--headed]",
		Short: "Launch a browser webcodex owns (ephemeral and headless by default)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if headless && headed {
				return &UsageError{Err: fmt.Errorf("--headless and --headed exclude each other")}
			}
			if err := cmdutil.CheckAllow(allow); err != nil {
				return &UsageError{Err: err} // before any Runner starts
			}
			req := localapi.LaunchRequest{Managed: managed, Allow: allow}
			if headless || headed {
				req.Headless = &headless
			}
			f.Progress("launching Chromium…")
			b, err := call(f, localapi.Launch, req)
			if err != nil {
				return err
			}
			return f.Emit(b, func(w io.Writer) {
				fmt.Fprintf(w, "browser %s (%s)\n", b.ID, b.Mode)
				for _, p := range b.Pages {
					fmt.Fprintf(w, "  page %s\t%s\n", p.ID, p.URL)
				}
			})
		},
	}
	cmd.Flags().StringVar(&managed, "managed", "", "use the managed persistent profile NAME (1..48 of a-z, 0-9, '-')")
	cmd.Flags().BoolVar(&headless, "headless", false, "hide the browser (the default for ephemeral browsers)")
	cmd.Flags().BoolVar(&headed, "headed", false, "show the browser (the default for managed profiles)")
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "origin the browser may visit (repeatable; empty = the open web for owned browsers)")
	return cmd
}

// NotRunning is `status --json` when no Runner is running.
type NotRunning struct {
	Running  bool                   `json:"running"` // always false
	Browsers []localapi.BrowserInfo `json:"browsers"`
}

// NewCmdStatus shows the Runner and its browsers. It never starts a Runner:
// with none running it says so and exits 0.
func NewCmdStatus(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   op.Status.CLI.Use,
		Short: op.Status.CLI.Short,
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
			defer cancel()
			c, err := f.RunningClient(ctx)
			if err != nil {
				return err
			}
			if c == nil {
				return f.Emit(NotRunning{Browsers: []localapi.BrowserInfo{}}, func(w io.Writer) {
					fmt.Fprintln(w, "no Runner is running (a command that needs one starts it)")
				})
			}
			st, err := localapi.GetStatus.Call(ctx, c, struct{}{})
			if err != nil {
				return unreachable(err)
			}
			st.Running = true
			return f.Emit(st, func(w io.Writer) {
				fmt.Fprintf(w, "runner %s, pid %d, up %s", st.Runner.Version, st.Runner.PID, time.Since(st.Runner.Started).Round(time.Second))
				if st.Runner.IdleExitMs > 0 {
					fmt.Fprintf(w, ", exits after %s idle", time.Duration(st.Runner.IdleExitMs)*time.Millisecond)
				}
				fmt.Fprintln(w)
				if !st.Runner.Sandbox.Enabled {
					fmt.Fprintf(w, "sandbox off: %s\n", st.Runner.Sandbox.Reason)
				}
				if !st.Runner.PromptPress.Available {
					fmt.Fprintf(w, "pressing Chrome's prompt for you: unavailable (%s)\n", st.Runner.PromptPress.Reason)
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "BROWSER\tMODE\tSTATE\tGEN\tPAGES\tGRANT EXPIRES\tRECONNECTS LEFT")
				for _, b := range st.Browsers {
					grant, left := "-", "-"
					if b.GrantExpires != nil {
						grant = b.GrantExpires.Local().Format(time.TimeOnly)
					}
					if b.AttemptsLeft != nil {
						left = fmt.Sprint(*b.AttemptsLeft)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", b.ID, b.Mode, b.State, b.Generation, len(b.Pages), grant, left)
				}
				tw.Flush()
			})
		},
	}
}

// NewCmdPages lists a browser's pages.
func NewCmdPages(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "pages BROWSER",
		Short: "List a browser's pages",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			pages, err := call(f, localapi.Pages, localapi.BrowserRequest{Browser: args[0]})
			if err != nil {
				return err
			}
			res := localapi.PagesResult{Browser: args[0], Pages: pages}
			return f.Emit(res, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PAGE\tURL\tTITLE")
				for _, p := range res.Pages {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", p.ID, p.URL, p.Title)
				}
				tw.Flush()
			})
		},
	}
}

// NewCmdOpen opens a new page.
func NewCmdOpen(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "open BROWSER [URL]",
		Short: "Open a new page (about:blank unless URL is given)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return &UsageError{Err: fmt.Errorf("open takes BROWSER and an optional URL")}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			req := localapi.OpenRequest{Browser: args[0]}
			if len(args) == 2 {
				req.URL = args[1]
				f.Progress("opening %s…", req.URL)
			}
			p, err := call(f, localapi.Open, req)
			if err != nil {
				return err
			}
			return f.Emit(p, func(w io.Writer) { fmt.Fprintf(w, "page %s\t%s\n", p.ID, p.URL) })
		},
	}
}

// NewCmdGoto navigates a page.
func NewCmdGoto(f *Factory) *cobra.Command {
	var in op.GotoIn
	v := op.Goto.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			f.Progress("navigating to %s…", args[1])
			in.Page, in.URL = args[0], args[1]
			res, err := call(f, localapi.Of(op.Goto), in)
			if err != nil {
				return err
			}
			if err := f.Emit(res, func(w io.Writer) { fmt.Fprintf(w, "%s\n%s\n", res.URL, res.Title) }); err != nil {
				return err
			}
			return httpError(res.Status)
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

// NewCmdRead prints a page's visible text, bounded.
func NewCmdRead(f *Factory) *cobra.Command {
	var in op.ReadIn
	v := op.ReadText.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			in.Page = args[0]
			res, err := call(f, localapi.Of(op.ReadText), in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) { fmt.Fprintln(w, res.Text) })
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

// NewCmdScreenshot writes a PNG of a page.
func NewCmdScreenshot(f *Factory) *cobra.Command {
	var out string
	var in op.ScreenshotIn
	v := op.Screenshot.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return &UsageError{Err: fmt.Errorf("screenshot needs -o FILE")}
			}
			in.Page = args[0]
			res, err := call(f, localapi.Of(op.Screenshot), in)
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, res.PNG, 0o600); err != nil {
				return fmt.Errorf("write screenshot: %w", err)
			}
			summary := ScreenshotSummary{Page: args[0], File: out, Width: res.Width, Height: res.Height, Bytes: len(res.PNG)}
			return f.Emit(summary, func(w io.Writer) { fmt.Fprintf(w, "%s (%dx%d, %d bytes)\n", out, res.Width, res.Height, len(res.PNG)) })
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "PNG file to write")
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

// NewCmdEval evaluates an expression in a page.
func NewCmdEval(f *Factory) *cobra.Command {
	var in op.EvalIn
	v := op.Eval.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			in.Page, in.Expr = args[0], args[1]
			res, err := call(f, localapi.Of(op.Eval), in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				b, _ := json.Marshal(res.Value)
				fmt.Fprintln(w, string(b))
				if res.Truncated {
					fmt.Fprintln(w, "[truncated]")
				}
			})
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

// NewCmdClose closes or detaches a browser.
func NewCmdClose(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "close BROWSER",
		Short: "Close a browser webcodex owns, or detach from an attached one",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := call(f, localapi.Close, localapi.BrowserRequest{Browser: args[0]})
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "browser %s %s\n", res.Browser, res.Teardown)
				if res.AuditHead != "" {
					fmt.Fprintf(w, "audit head %s\n", res.AuditHead)
				}
			})
		},
	}
}

// stopWait bounds waiting, after the Runner has closed its browsers, for
// its socket to go quiet.
const stopWait = 10 * time.Second

// NewCmdStop stops a running Runner. It returns once owned browsers are
// closed (attached ones detached) and the Runner no longer answers; with
// none running there is nothing to do, which is success.
func NewCmdStop(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   op.Stop.CLI.Use,
		Short: op.Stop.CLI.Short,
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
			defer cancel()
			c, err := f.StoppingClient(ctx)
			if err != nil {
				return err
			}
			if c == nil {
				fmt.Fprintln(f.IO.Err, "webcodex: no Runner was running")
				return f.Emit(localapi.StopResult{}, func(io.Writer) {})
			}
			res, err := localapi.Stop.Call(ctx, c, struct{}{})
			if err != nil {
				return unreachable(err)
			}
			// The browsers are gone; wait for the Runner to let go of its
			// socket, so the next command starts a fresh one.
			deadline := time.Now().Add(stopWait)
			for time.Now().Before(deadline) {
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				gone := cmdutil.Gone(pctx, c)
				cancel()
				if gone {
					break
				}
				time.Sleep(50 * time.Millisecond) // poll the socket: there is no other signal
			}
			fmt.Fprintf(f.IO.Err, "webcodex: Runner stopped (%d browser(s) closed)\n", res.BrowsersClosed)
			if res.AuditHead != "" {
				fmt.Fprintf(f.IO.Err, "webcodex: audit head %s (webcodex audit verify --head %[1]s)\n", res.AuditHead)
			}
			return f.Emit(res, func(io.Writer) {})
		},
	}
}

// ScreenshotSummary is `screenshot --json`: the PNG went to File.
type ScreenshotSummary struct {
	Page   string `json:"page"`
	File   string `json:"file"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Bytes  int    `json:"bytes"`
}

// httpError is the failure for a navigation the server answered with an
// error status (4xx, 5xx): the page is there and was printed, but what
// was asked for was not found or failed.
func httpError(status int) error {
	if status < 400 {
		return nil
	}
	return cmdutil.Shown(fmt.Errorf("the server answered HTTP %d %s", status, http.StatusText(status)))
}

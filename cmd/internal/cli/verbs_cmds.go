package cli

import (
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// NewCmdVerbs returns the verbs of history, tabs and downloads.
func NewCmdVerbs(f *Factory) []*cobra.Command {
	return []*cobra.Command{
		newHistoryCmd(f, op.Back),
		newHistoryCmd(f, op.Forward),
		newHistoryCmd(f, op.Reload),
		newTabsCmd(f),
		newDownloadsCmd(f),
	}
}

// newHistoryCmd builds the verb of a move through history of the table.
func newHistoryCmd(f *Factory, o *op.Op[op.HistoryIn, op.NavResult]) *cobra.Command {
	var in op.HistoryIn
	v := o.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			in.Page = args[0]
			res, err := call(f, localapi.Of(o), in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) { fmt.Fprintf(w, "%s\n%s\n", res.URL, res.Title) })
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

func newTabsCmd(f *Factory) *cobra.Command {
	tabs := &cobra.Command{
		Use:   "tabs BROWSER",
		Short: "List a browser's tabs; tabs new|select|close|handover act on one",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			pages, err := call(f, localapi.Pages, localapi.BrowserRequest{Browser: args[0]})
			if err != nil {
				return err
			}
			res := localapi.PagesResult{Browser: args[0], Pages: pages}
			return f.Emit(res, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TAB\tURL\tTITLE")
				for _, p := range res.Pages {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", p.ID, p.URL, p.Title)
				}
				tw.Flush()
			})
		},
	}
	newTab := NewCmdOpen(f)
	newTab.Use, newTab.Short = "new BROWSER [URL]", "Open a tab (about:blank unless URL is given)"
	tabs.AddCommand(newTab,
		&cobra.Command{
			Use:   "select TAB",
			Short: "Bring a tab webcodex opened to the front (never one of yours)",
			Args:  exactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				p, err := call(f, localapi.Activate, localapi.PageRequest{Page: args[0]})
				if err != nil {
					return err
				}
				return f.Emit(p, func(w io.Writer) { fmt.Fprintf(w, "tab %s\t%s\n", p.ID, p.URL) })
			},
		},
		&cobra.Command{
			Use:   "close TAB",
			Short: "Close a tab webcodex opened (never one of yours)",
			Args:  exactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				res, err := call(f, localapi.ClosePage, localapi.ClosePageRequest{Page: args[0]})
				if err != nil {
					return err
				}
				return f.Emit(res, func(w io.Writer) { fmt.Fprintf(w, "closed %s\n", args[0]) })
			},
		},
		&cobra.Command{
			Use:   "handover BROWSER [TAB]",
			Short: "Give tabs webcodex opened in an attached browser to its person: detach leaves them open",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) < 1 || len(args) > 2 {
					return &UsageError{Err: fmt.Errorf("handover takes BROWSER and an optional TAB (default: every tab webcodex opened)")}
				}
				return nil
			},
			RunE: func(_ *cobra.Command, args []string) error {
				req := localapi.HandoverRequest{Browser: args[0]}
				if len(args) == 2 {
					req.Page = args[1]
				}
				res, err := call(f, localapi.Handover, req)
				if err != nil {
					return err
				}
				return f.Emit(res, func(w io.Writer) {
					for _, p := range res.Pages {
						fmt.Fprintf(w, "handed over %s\n", p)
					}
				})
			},
		},
	)
	return tabs
}

func newDownloadsCmd(f *Factory) *cobra.Command {
	var req localapi.DownloadsRequest
	var waitSeconds int
	var save string
	cmd := &cobra.Command{
		Use:   "downloads BROWSER [--wait SECONDS] [--id ID] [--save DIR]",
		Short: "List an owned browser's downloads (name, state, bytes); wait for them; save one to a directory of yours",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			req.Browser, req.WaitMS = args[0], waitSeconds*1000
			if waitSeconds < 0 {
				return &UsageError{Err: fmt.Errorf("--wait is seconds, zero or more")}
			}
			if save != "" && req.ID == "" {
				return &UsageError{Err: fmt.Errorf("--save needs --id: the download to save")}
			}
			res, err := call(f, localapi.Downloads, req)
			if err != nil {
				return err
			}
			if save != "" {
				saved, err := call(f, localapi.SaveDownload, localapi.SaveDownloadRequest{Browser: req.Browser, ID: req.ID, Dir: save})
				if err != nil {
					return err
				}
				return f.Emit(saved, func(w io.Writer) { fmt.Fprintf(w, "saved %s (%d bytes) to %s\n", saved.ID, saved.Bytes, saved.Path) })
			}
			return f.Emit(res, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSTATE\tBYTES")
				for _, d := range res.Downloads {
					state := d.State
					if d.Reason != "" {
						state += " (" + d.Reason + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", d.ID, d.FileName, state, d.ReceivedBytes)
				}
				tw.Flush()
			})
		},
	}
	cmd.Flags().IntVar(&waitSeconds, "wait", 0, "wait up to this many seconds for downloads to finish (at most 40)")
	cmd.Flags().StringVar(&req.ID, "id", "", "one download (d1)")
	cmd.Flags().StringVar(&save, "save", "", "move download --id into this existing directory of yours")
	return cmd
}

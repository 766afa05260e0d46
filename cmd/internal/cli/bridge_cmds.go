package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// NewCmdDiscover says what can be launched or attached here, including the
// tabs people shared from the webcodex extension and nobody attached yet.
func NewCmdDiscover(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   op.Discover.CLI.Use,
		Short: op.Discover.CLI.Short,
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			res, err := call(f, localapi.Discover, struct{}{})
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				if res.Launch.Available {
					fmt.Fprintf(w, "launch: %s available (visible: %v)\n", res.Launch.Product, res.Launch.Visible)
				} else {
					fmt.Fprintf(w, "launch: unavailable: %s\n", res.Launch.Reason)
				}
				for _, c := range res.Attach {
					fmt.Fprintf(w, "attach: %s (%s): %s\n", c.Name, c.State, c.Next)
				}
				if !res.ExtensionBridge {
					fmt.Fprintln(w, "extension bridge: not available (webcodex bridge status says why)")
					return
				}
				if len(res.Offers) == 0 {
					fmt.Fprintln(w, "shared tabs: none waiting (share one from the webcodex extension's popup)")
				}
				for _, o := range res.Offers {
					fmt.Fprintf(w, "shared tab: offer %s\t%s\t%s\t(expires %s)\n", o.ID, orDash(o.Origin), orDash(o.Title), o.Expires.Local().Format(time.TimeOnly))
				}
			})
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// NewCmdBridge groups the extension bridge's verbs.
func NewCmdBridge(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bridge",
		Short: "The extension bridge: share single tabs from your Chrome (bridge status)",
		Args:  exactArgs(0),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Whether the bridge is installed and the Runner listens, and how many tabs are shared or attached",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			st, err := call(f, localapi.GetBridgeStatus, struct{}{})
			if err != nil {
				return err
			}
			return f.Emit(st, func(w io.Writer) {
				fmt.Fprintf(w, "installed: %v\nlistening: %v\nnative hosts connected: %d\nshared tabs waiting: %d\nshared tabs attached: %d\n",
					st.Installed, st.Listening, st.Connected, st.Offers, st.Attached)
				if st.Why != "" {
					fmt.Fprintf(w, "why: %s\n", st.Why)
				}
				if st.Next != "" {
					fmt.Fprintf(w, "next: %s\n", st.Next)
				}
			})
		},
	})
	return cmd
}

// attachOffer is `webcodex attach --offer ID`.
func attachOffer(f *Factory, req localapi.AttachOfferRequest) error {
	f.Progress("attaching the shared tab…")
	res, err := call(f, localapi.AttachOffer, req)
	if err != nil {
		return err
	}
	return f.Emit(res, func(w io.Writer) {
		fmt.Fprintf(w, "attached browser %s (a tab shared from the extension), %d visible page(s)\n", res.Browser.ID, len(res.Browser.Pages))
		for _, p := range res.Browser.Pages {
			fmt.Fprintf(w, "  page %s\t%s\n", p.ID, p.URL)
		}
	})
}

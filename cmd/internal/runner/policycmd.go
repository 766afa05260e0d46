package runner

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/fsm"
)

// PolicyVerdict is one line of `webcodex policy check --json`.
type PolicyVerdict struct {
	URL     string   `json:"url"`
	Allowed bool     `json:"allowed"`
	Code    fsm.Code `json:"code,omitempty"`
	Detail  string   `json:"detail,omitempty"`
}

// NewCmdPolicy is `webcodex policy check`: the owner tests an allowlist
// against URLs before giving it to a browser. It judges with the same origin
// gate the Runner uses and needs no Runner. It lives here, not in cli,
// because the CLI does not import cdp/.
func NewCmdPolicy(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "policy",
		Short: "Check an origin allowlist before using it",
		Args:  cobra.NoArgs,
	}
	var mode string
	var allow []string
	check := &cobra.Command{
		Use:   "check [--mode attach|launch] [--allow ORIGIN…] [--] URL…",
		Short: "Print the origin gate's verdict for each URL (exit 0 when every URL was judged)",
		Long: "Judges each URL with the origin gate a browser would get from these --allow entries.\n" +
			"--mode attach (default): an empty list authorizes nothing. --mode launch: an empty list is the open web (http, https).\n" +
			"Entries the gate drops (single labels, wildcards, paths, …) are reported on stderr.\n" +
			"With --json, one object per URL: {\"url\", \"allowed\", and \"code\" and \"detail\" when denied}.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &cmdutil.UsageError{Err: fmt.Errorf("policy check needs at least one URL")}
			}
			var m origin.Mode
			switch mode {
			case "attach":
				m = origin.Attached
			case "launch":
				m = origin.Owned
			default:
				return &cmdutil.UsageError{Err: fmt.Errorf("--mode is attach or launch, not %q", mode)}
			}
			gate, dropped := origin.New(m, allow)
			for _, d := range dropped {
				fmt.Fprintf(f.IO.Err, "allow entry %q is dropped: %s\n", d.Entry, d.Reason)
			}
			enc := json.NewEncoder(f.IO.Out)
			for _, u := range args {
				v := PolicyVerdict{URL: u, Allowed: true}
				if err := gate.Check(u); err != nil {
					v.Allowed = false
					if ref, ok := fsm.AsRefusal(err); ok {
						v.Code, v.Detail = ref.Code, ref.Detail
					} else {
						v.Code, v.Detail = fsm.OriginDenied, "the URL could not be judged"
					}
				}
				if f.JSON {
					if err := enc.Encode(v); err != nil {
						return err
					}
					continue
				}
				if v.Allowed {
					fmt.Fprintf(f.IO.Out, "allowed\t%s\n", u)
				} else {
					fmt.Fprintf(f.IO.Out, "denied\t%s\t%s: %s\n", u, v.Code, v.Detail)
				}
			}
			return nil
		},
	}
	check.Flags().StringVar(&mode, "mode", "attach", "whose browser the list is for: attach (your own browser) or launch (a browser webcodex launches)")
	check.Flags().StringArrayVar(&allow, "allow", nil, "an allowlist entry, [scheme://]host[:port] (repeatable)")
	root.AddCommand(check)
	return root
}

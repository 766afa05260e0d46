package admincmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/fsm"
)

// PolicyCheck is `webcodex policy check --json`: one object, the verdict on
// every URL and whether all were allowed.
type PolicyCheck struct {
	Mode     string          `json:"mode"`
	Allowed  bool            `json:"allowed"` // every URL allowed
	Verdicts []PolicyVerdict `json:"verdicts"`
}

// PolicyVerdict is one URL's verdict in a [PolicyCheck].
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
		Short: "Print the origin gate's verdict for each URL (exit 0 when every URL is allowed, 3 when one is denied)",
		Long: "Judges each URL with the origin gate a browser would get from these --allow entries.\n" +
			"--mode attach (default): an empty list authorizes nothing. --mode launch: an empty list is the open web (http, https).\n" +
			"An entry the gate would drop (single labels, wildcards, paths, …) is a usage error (exit 2).\n" +
			"With --json, one object: {\"mode\", \"allowed\" (every URL), \"verdicts\": [{\"url\", \"allowed\", and \"code\" and \"detail\" when denied}]}.\n" +
			"Exits 3 (refused, origin_denied) when any URL is denied.",
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
			if err := cmdutil.CheckAllow(allow); err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			gate, _ := origin.New(m, allow)
			res := PolicyCheck{Mode: mode, Allowed: true, Verdicts: []PolicyVerdict{}}
			denied := 0
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
				if !v.Allowed {
					res.Allowed = false
					denied++
				}
				res.Verdicts = append(res.Verdicts, v)
			}
			if f.JSON {
				if err := json.NewEncoder(f.IO.Out).Encode(res); err != nil {
					return err
				}
			} else {
				for _, v := range res.Verdicts {
					if v.Allowed {
						fmt.Fprintf(f.IO.Out, "allowed\t%s\n", v.URL)
					} else {
						fmt.Fprintf(f.IO.Out, "denied\t%s\t%s: %s\n", v.URL, v.Code, v.Detail)
					}
				}
			}
			if denied > 0 {
				return cmdutil.Shown(fsm.Refusef(fsm.OriginDenied, "%d of %d URLs denied by this allowlist", denied, len(args)))
			}
			return nil
		},
	}
	check.Flags().StringVar(&mode, "mode", "attach", "whose browser the list is for: attach (your own browser) or launch (a browser webcodex launches)")
	check.Flags().StringArrayVar(&allow, "allow", nil, "an allowlist entry, [scheme://]host[:port] (repeatable)")
	root.AddCommand(check)
	return root
}

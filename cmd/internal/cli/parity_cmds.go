package cli

import (
	"fmt"
	"io"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// newRequestCmd prints one network request's details (op.NetworkRequest).
func newRequestCmd(f *Factory) *cobra.Command {
	var in op.NetworkRequestIn
	v := op.NetworkRequest.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			in.Page = args[0]
			res, err := call(f, localapi.Of(op.NetworkRequest), in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				e := res.Entry
				fmt.Fprintf(w, "%d %s %s %d\n", e.Seq, e.Method, e.URL, e.Status)
				for _, h := range res.RequestHeaders {
					fmt.Fprintf(w, "> %s: %s\n", h.Name, h.Value)
				}
				for _, h := range res.ResponseHeaders {
					fmt.Fprintf(w, "< %s: %s\n", h.Name, h.Value)
				}
				if res.RequestBody != "" {
					fmt.Fprintf(w, "request body:\n%s\n", res.RequestBody)
				}
				if res.ResponseBody != "" {
					fmt.Fprintf(w, "response body:\n%s\n", res.ResponseBody)
				}
				for _, n := range res.Notes {
					fmt.Fprintf(w, "(%s)\n", n)
				}
			})
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

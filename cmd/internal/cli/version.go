package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
)

// NewCmdVersion prints the version (also `webcodex --version`).
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the VCS revision it was built from",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			b := cmdutil.Build()
			return f.Emit(b, func(w io.Writer) { printVersion(w, b) })
		},
	}
}

func printVersion(w io.Writer, b cmdutil.BuildInfo) {
	fmt.Fprintf(w, "webcodex %s %s\n", b.String(), b.Go)
}

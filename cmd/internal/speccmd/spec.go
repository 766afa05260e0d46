// Package speccmd is `webcodex spec`: it regenerates spec/ from the
// machine declarations, so it links the machinery the CLI itself reaches
// only through the Runner's local API.
package speccmd

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/spec"
)

// SpecOptions are the flags of `webcodex spec`.
type SpecOptions struct {
	Dir   string
	Check bool
}

// NewCmdSpec regenerates spec/ or checks it for drift.
func NewCmdSpec(f *cmdutil.Factory) *cobra.Command {
	opts := &SpecOptions{}
	cmd := &cobra.Command{
		Use:   "spec",
		Short: "Regenerate spec/ from the machine declarations (--check: fail on drift)",
		Args:  cmdutil.ExactArgs(0),
		RunE:  func(*cobra.Command, []string) error { return specRun(f, opts) },
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "spec", "the spec/ directory of a checkout")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "exit 1 when spec/ differs from the code")
	return cmd
}

// ErrSpecDrift is returned by `spec --check` when spec/ is out of date.
type ErrSpecDrift struct{ Files []string }

func (e *ErrSpecDrift) Error() string {
	return "spec/ differs from the code in " + strings.Join(e.Files, ", ") + ": run `webcodex spec`"
}

func specRun(f *cmdutil.Factory, opts *SpecOptions) error {
	if opts.Check {
		if diff := spec.Diff(opts.Dir); len(diff) > 0 {
			if f.JSON {
				json.NewEncoder(f.IO.Out).Encode(map[string]any{"ok": false, "differs": diff})
			}
			return &ErrSpecDrift{Files: diff}
		}
		if f.JSON {
			return json.NewEncoder(f.IO.Out).Encode(map[string]any{"ok": true})
		}
		fmt.Fprintln(f.IO.Out, "spec/ matches the code")
		return nil
	}
	if err := spec.Write(opts.Dir); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Err, "wrote %d files to %s\n", len(spec.Files()), opts.Dir)
	return nil
}

package admincmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// NewCmdAudit is `webcodex audit verify`: it checks the audit trail's hash
// chain in the state root without a Runner, and names the first record
// where it breaks (exit 1). With --head, the head hash close or stop
// printed must still be in the chain, so records cut from its end are
// found too.
func NewCmdAudit(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "audit",
		Short: "Check the tamper-evident audit trail",
		Args:  cobra.NoArgs,
	}
	var head string
	verify := &cobra.Command{
		Use:   "verify [--head HASH]",
		Short: "Verify the audit trail's hash chain; exits 1 naming the first broken record",
		Long: "Checks every record of audit.jsonl (and audit.1.jsonl, the file before it) in the state root:\n" +
			"its hash matches its content and it follows the record before it. An edited, deleted, reordered or\n" +
			"cut-out record is reported at that record. --head HASH (printed by close and stop) must be a record's\n" +
			"hash, so records cut from the end are found too. With --json, one object: {\"records\", \"first\", \"head\", \"afterHead\"}.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			dir, err := localapi.StateDir()
			if err != nil {
				return err
			}
			rep, err := auditchain.Verify(dir, head)
			if err != nil {
				return fmt.Errorf("audit verify: %w", err)
			}
			return f.Emit(rep, func(w io.Writer) {
				fmt.Fprintf(w, "audit chain intact: %d record(s)", rep.Records)
				if rep.Records > 0 {
					fmt.Fprintf(w, ", seq %d to %d, head %s", rep.First, rep.First+uint64(rep.Records)-1, rep.Head)
				}
				fmt.Fprintln(w)
				if head != "" {
					fmt.Fprintf(w, "%d record(s) after head %s\n", rep.AfterHead, head)
				}
			})
		},
	}
	verify.Flags().StringVar(&head, "head", "", "a head hash close or stop printed: it must be in the chain")
	root.AddCommand(verify)
	return root
}

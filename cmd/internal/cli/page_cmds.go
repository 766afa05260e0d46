package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// targetFlags are the target an element verb takes: one positional TARGET
// after PAGE, as MCP's target (a ref, a compact target object or a CSS
// selector), or the flags that name one way of finding the element.
type targetFlags struct {
	t     localapi.Target
	index int
}

func (tf *targetFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&tf.t.Ref, "ref", "", "element ref eN from a snapshot (the page's latest snapshot listing it, unless --snapshot names one)")
	fl.StringVar(&tf.t.SnapshotID, "snapshot", "", "the snapshot id the ref came from (optional)")
	fl.StringVar(&tf.t.Role, "role", "", "ARIA role (with --name)")
	fl.StringVar(&tf.t.Name, "name", "", "accessible name")
	fl.StringVar(&tf.t.Label, "label", "", "label text of a form control")
	fl.StringVar(&tf.t.Text, "text", "", "visible text (resolves to its nearest actionable ancestor)")
	fl.StringVar(&tf.t.Placeholder, "placeholder", "", "placeholder text")
	fl.StringVar(&tf.t.TestID, "testid", "", "data-testid value")
	fl.StringVar(&tf.t.CSS, "css", "", "CSS selector")
	fl.IntVar(&tf.index, "index", -1, "pick the Nth visible match (0-based)")
}

// targetHelp is the shape of a TARGET, as usage errors say it.
const targetHelp = `TARGET is a ref (e5), a target object ('{"role":"button","name":"Save"}', or one of label, text, placeholder, testId, css) or a unique selector (CSS, text=…, role=button[name="Save"], data-testid=…); or use --ref, --role/--name, --label, --text, --placeholder, --testid or --css`

// refPattern is a ref as snapshots print it: e5, or f1e3 inside a frame.
var refPattern = regexp.MustCompile(`^(f[0-9]+)?e[0-9]+$`)

// parseTarget reads a positional TARGET the way MCP reads target: a ref, a
// compact target object with MCP's keys, or else a selector
// (localapi.SelectorTarget: text=…, data-testid=…, role=…[name="…"] or
// CSS), which must match one visible element unless --index picks one.
func parseTarget(s string) (localapi.Target, error) {
	switch {
	case refPattern.MatchString(s):
		return localapi.Target{Ref: s}, nil
	case strings.HasPrefix(strings.TrimSpace(s), "{"):
		var t localapi.Target
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return t, &UsageError{Err: fmt.Errorf("TARGET %q is not a target object: %s", s, targetHelp)}
		}
		return t, nil
	}
	t, err := localapi.SelectorTarget(s)
	if err != nil {
		return t, &UsageError{Err: fmt.Errorf("TARGET: %w; %s", err, targetHelp)}
	}
	return t, nil
}

// target returns the target the command line names, or nil when none: the
// positional TARGET (args[0], when given) or the flags, never both.
func (tf *targetFlags) target(args ...string) (*localapi.Target, error) {
	t := tf.t
	if len(args) > 0 {
		if t != (localapi.Target{}) {
			return nil, &UsageError{Err: errors.New("give TARGET or target flags, not both")}
		}
		var err error
		if t, err = parseTarget(args[0]); err != nil {
			return nil, err
		}
	}
	if tf.index >= 0 {
		i := tf.index
		t.Index = &i
	}
	if t == (localapi.Target{}) {
		return nil, nil
	}
	if err := checkTarget(t); err != nil {
		return nil, err
	}
	return &t, nil
}

// checkTarget refuses, before anything is sent, a target that names no
// element or more than one way of finding it (MCP's check).
func checkTarget(t localapi.Target) error {
	kinds := 0
	for _, s := range []string{t.Ref, t.Role, t.Label, t.Text, t.Placeholder, t.TestID, t.CSS} {
		if s != "" {
			kinds++
		}
	}
	switch {
	case t.Name != "" && t.Role == "":
		return &UsageError{Err: errors.New("--name goes with --role, e.g. --role button --name Save")}
	case kinds == 0:
		return &UsageError{Err: errors.New("the target names no element: " + targetHelp)}
	case kinds > 1:
		return &UsageError{Err: errors.New("the target gives more than one way to find the element: give one")}
	case t.SnapshotID != "" && t.Ref == "":
		return &UsageError{Err: errors.New("--snapshot goes with --ref")}
	case t.Ref != "" && !refPattern.MatchString(t.Ref):
		return &UsageError{Err: fmt.Errorf("ref %q is not a ref like e5 (from a snapshot)", t.Ref)}
	case t.Index != nil && *t.Index < 0:
		return &UsageError{Err: errors.New("--index is zero or more")}
	}
	return nil
}

// pageAndTarget are the positional arguments of an element verb: PAGE and
// an optional TARGET.
func pageAndTarget(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < 1 || len(args) > 2 {
			return &UsageError{Err: fmt.Errorf("%s takes PAGE and an optional TARGET (%d arguments given); %s", verb, len(args), targetHelp)}
		}
		return nil
	}
}

// compact prints v as one line of JSON: the human form of results that
// have no shorter one.
func compact(v any) func(w io.Writer) {
	return func(w io.Writer) {
		b, _ := json.Marshal(v)
		fmt.Fprintln(w, string(b))
	}
}

// NewCmdSnapshot prints the page outline with refs.
func NewCmdSnapshot(f *Factory) *cobra.Command {
	var req op.SnapshotIn
	var scope targetFlags
	v := op.TakeSnapshot.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			req.Page = args[0]
			var err error
			if req.Scope, err = scope.target(); err != nil {
				return err
			}
			res, err := call(f, localapi.Of(op.TakeSnapshot), req)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "snapshot %s  %s\n", res.ID, res.URL)
				if res.Unchanged {
					fmt.Fprintln(w, "unchanged")
					return
				}
				fmt.Fprintln(w, res.Text)
				if res.Cursor != "" {
					fmt.Fprintf(w, "(more: webcodex snapshot %s --cursor %s)\n", req.Page, res.Cursor)
				}
			})
		},
	}
	cmd.Flags().BoolVar(&req.Interactive, "interactive", false, "list only actionable elements")
	cmd.Flags().StringVar(&req.Since, "since", "", "only what changed since this snapshot id")
	cmd.Flags().IntVar(&req.MaxChars, "max", 0, "chunk budget in characters (default about 20,000)")
	cmd.Flags().StringVar(&req.Cursor, "cursor", "", "read the next chunk of an earlier snapshot")
	fl := cmd.Flags()
	fl.StringVar(&scope.t.Ref, "scope-ref", "", "limit to the subtree of this ref (of the page's latest snapshot listing it, unless --scope-snapshot names one)")
	fl.StringVar(&scope.t.SnapshotID, "scope-snapshot", "", "snapshot id of --scope-ref (optional)")
	fl.StringVar(&scope.t.CSS, "scope-css", "", "limit to the subtree of this CSS selector")
	scope.index = -1
	return cmd
}

// needFlag makes a flag required: without it the verb would act with
// nothing (type no text, press no key) and report success. emptyOK allows
// an explicit empty value (fill --value "" clears a field).
func needFlag(name, usage string, emptyOK bool) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || !fl.Changed || (!emptyOK && (fl.Value.String() == "" || fl.Value.String() == "[]")) {
			return &UsageError{Err: errors.New(usage)}
		}
		return nil
	}
}

// aliasFlag makes --alias another spelling of --name on cmd.
func aliasFlag(cmd *cobra.Command, alias, name string) {
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, n string) pflag.NormalizedName {
		if n == alias {
			n = name
		}
		return pflag.NormalizedName(n)
	})
}

// NewCmdActions returns the action verbs: the page actions of the
// operation table, and dialog.
func NewCmdActions(f *Factory) []*cobra.Command {
	return append(NewCmdOps(f), newDialogCmd(f))
}

func newDialogCmd(f *Factory) *cobra.Command {
	var accept, dismiss bool
	var text string
	v := op.HandleDialog.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			req := op.DialogIn{OnPage: op.OnPage{Page: args[0]}, Text: text}
			switch {
			case accept && dismiss:
				return &UsageError{Err: fmt.Errorf("--accept and --dismiss exclude each other")}
			case accept || dismiss:
				req.Accept = &accept
			}
			res, err := call(f, localapi.Of(op.HandleDialog), req)
			if err != nil {
				return err
			}
			return f.Emit(res, compact(res))
		},
	}
	cmd.Flags().BoolVar(&accept, "accept", false, "accept the dialog")
	cmd.Flags().BoolVar(&dismiss, "dismiss", false, "dismiss the dialog")
	cmd.Flags().StringVar(&text, "value", "", "text for a prompt dialog (--text is the same flag)")
	aliasFlag(cmd, "text", "value")
	return cmd
}

// NewCmdWait waits for a condition.
func NewCmdWait(f *Factory) *cobra.Command {
	var req op.WaitIn
	var tf targetFlags
	var timeout time.Duration
	v := op.Wait.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  pageAndTarget(v.Name),
		RunE: func(_ *cobra.Command, args []string) error {
			var err error
			if req.Target, err = tf.target(args[1:]...); err != nil {
				return err
			}
			req.Page, req.TimeoutMS = args[0], int(timeout/time.Millisecond)
			res, err := callWith(f, localapi.Of(op.Wait), req, timeout+defaultTimeout)
			if err != nil {
				return err
			}
			if !res.Found {
				ref := fsm.Refusef(fsm.Timeout, "%s did not hold within %s", res.Condition, timeout)
				ref.Page = req.Page
				return ref
			}
			return f.Emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "%s: found=%v after %dms\n", res.Condition, res.Found, res.ElapsedMS)
			})
		},
	}
	cmd.Flags().StringVar(&req.Condition, "for", "load", "the condition")
	cmd.Flags().StringVar(&req.Text, "for-text", "", "text for text and text_gone")
	cmd.Flags().StringVar(&req.URL, "url", "", "exact URL (for url)")
	cmd.Flags().StringVar(&req.URLIncludes, "url-includes", "", "URL substring (for url)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait")
	tf.add(cmd)
	return cmd
}

// newDiagCmd builds the verb of a diagnostics read of the table.
func newDiagCmd[In op.Input](f *Factory, o *op.Op[In, op.DiagResult]) *cobra.Command {
	var in In
	v := o.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			any(&in).(op.PageSetter).SetPage(args[0])
			res, err := call(f, localapi.Of(o), in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) {
				for _, e := range res.Entries {
					compact(e)(w)
				}
				if res.Discarded != "" {
					fmt.Fprintf(w, "%s: entries were dropped since the last clear; the log is incomplete\n", res.Discarded)
				}
				fmt.Fprintf(w, "(next: --since %d)\n", res.Next)
			})
		},
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(&in).Elem())
	return cmd
}

// NewCmdProbe performs one action and reports its effect.
func NewCmdProbe(f *Factory) *cobra.Command {
	var req op.ProbeIn
	var tf targetFlags
	var values []string
	v := op.Probe.CLI
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  pageAndTarget(v.Name),
		RunE: func(_ *cobra.Command, args []string) error {
			var err error
			if req.Target, err = tf.target(args[1:]...); err != nil {
				return err
			}
			req.Page = args[0]
			// --value is the action's values when it takes several, else its text.
			d, ok := op.Lookup(req.Action)
			switch {
			case ok && slices.Contains(op.Params(d), "values"):
				req.Values = values
			case len(values) > 1:
				return &UsageError{Err: fmt.Errorf("%s takes one --value", req.Action)}
			case len(values) == 1:
				req.Text = values[0]
			}
			res, err := call(f, localapi.Of(op.Probe), req)
			if err != nil {
				return err
			}
			return f.Emit(res, compact(res))
		},
	}
	cmd.Flags().StringVar(&req.Action, "action", op.Click.Name, "the action")
	cmd.Flags().StringArrayVar(&values, "value", nil, "text for type and fill; values for select (repeatable; --option is the same flag)")
	aliasFlag(cmd, "option", "value")
	cmd.Flags().BoolVar(&req.Slowly, "slowly", false, "type and fill: one key event per character")
	cmd.Flags().StringVar(&req.Keys, "key", "", "keys for press")
	tf.add(cmd)
	return cmd
}

// NewCmdClosePage closes a page webcodex opened.
func NewCmdClosePage(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "close-page PAGE",
		Short: "Close a page webcodex opened (never a tab of yours)",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := call(f, localapi.ClosePage, localapi.ClosePageRequest{Page: args[0]})
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) { fmt.Fprintf(w, "closed %s\n", res.Page) })
		},
	}
}

// actLine is an action's result on one line: what was asked, and what the
// page reported back (never the typed text).
func actLine(action string, res localapi.ActResult) string {
	parts := []string{action + ": ok"}
	add := func(k string, v any) {
		b, _ := json.Marshal(v)
		parts = append(parts, k+"="+string(b))
	}
	if res.Role != "" {
		add("role", res.Role)
	}
	if res.Requested != 0 || res.Delivered != 0 {
		add("requested", res.Requested)
		add("delivered", res.Delivered)
	}
	if res.Checked != nil {
		add("checked", *res.Checked)
	}
	if res.Selected != nil {
		add("selected", res.Selected)
	}
	if res.Files != nil {
		add("files", res.Files)
	}
	if res.Scroll != nil {
		add("scroll", res.Scroll)
	}
	if res.Rebound {
		add("rebound", true)
	}
	lines := []string{strings.Join(parts, " ")}
	return strings.Join(append(lines, effectLines(res.Page, res.ActionResult)...), "\n")
}

// effectLines say what an action caused, a line each, as MCP's results
// say it: a navigation, a new tab, a download, a dialog.
func effectLines(page string, res op.ActionResult) []string {
	var lines []string
	to := func(url string) string {
		if url == "" {
			return ""
		}
		return " to " + url
	}
	if n := res.Navigation; n != nil {
		switch {
		case n.Pending:
			lines = append(lines, "it started a navigation"+to(n.URL)+" that had not committed yet")
		case n.SameDocument:
			lines = append(lines, "it moved within the document"+to(n.URL)+" (refs stay valid)")
		default:
			line := "it navigated" + to(n.URL)
			if n.Title != "" {
				line += fmt.Sprintf(", title %q", n.Title)
			}
			lines = append(lines, line+"; refs from before are stale: take a snapshot")
		}
	}
	if res.NewTab != nil {
		lines = append(lines, "it opened a new tab"+to(res.NewTab.URL)+" (webcodex tabs BROWSER lists it)")
	}
	if res.Download != nil {
		name := res.Download.SuggestedFilename
		if name == "" {
			name = "a file"
		}
		lines = append(lines, "it started a download: "+name+" (webcodex downloads BROWSER lists it)")
	}
	if d := res.Dialog; d != nil {
		lines = append(lines, fmt.Sprintf("a %s dialog opened: %q; the page waits until it is answered (webcodex dialog %s --accept|--dismiss)", d.Type, d.Message, page))
	}
	return lines
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// The CLI verbs of the operation table (package op): each is derived from
// its declaration — `webcodex VERB PAGE [TARGET]`, its flags read from the
// input type's `flag` tags — and calls the operation's route. A verb whose
// result is not a page action's builds its own command (NewCmdProbe).

// NewCmdOps returns the page action verbs of the table.
func NewCmdOps(f *Factory) []*cobra.Command {
	var cmds []*cobra.Command
	for _, d := range op.All() {
		if _, acts := d.NewOutput().(*op.ActResult); acts && d.Declared().CLI != nil {
			cmds = append(cmds, newOpCmd(f, d))
		}
	}
	return cmds
}

// newOpCmd builds the verb of the page action d.
func newOpCmd(f *Factory, d op.Decl) *cobra.Command {
	m := d.Declared()
	v := m.CLI
	in := d.NewInput()
	tf := &targetFlags{}
	cmd := &cobra.Command{
		Use:   v.Use,
		Short: v.Short,
		Args:  pageAndTarget(v.Name),
		RunE: func(_ *cobra.Command, args []string) error {
			t, err := tf.target(args[1:]...)
			if err != nil {
				return err
			}
			if v.Target == op.RequiredTarget && t == nil {
				return &UsageError{Err: fmt.Errorf("%s needs a target: %s", v.Name, targetHelp)}
			}
			in.(op.PageSetter).SetPage(args[0])
			if e, ok := in.(interface{ SetTarget(*op.Target) }); ok {
				e.SetTarget(t)
			}
			res, err := call(f, localapi.Route[any, op.ActResult]{Name: m.Name, Effect: m.Effect}, in)
			if err != nil {
				return err
			}
			return f.Emit(res, func(w io.Writer) { fmt.Fprintln(w, actLine(v.Name, res)) })
		},
	}
	if v.Target == op.NoTarget {
		cmd.Args = exactArgs(1)
	} else {
		tf.add(cmd)
	}
	bindFlags(cmd, v.Name, reflect.ValueOf(in).Elem())
	return cmd
}

// bindFlags adds a flag for every field of in (at any depth of its
// embedded structs) tagged `flag:"NAME[,required|,emptyok][,alias=OTHER]"`
// with its `usage`. A required flag must be given and not empty (emptyok:
// an explicit empty value counts): without it the verb would act with
// nothing and report success.
func bindFlags(cmd *cobra.Command, verb string, in reflect.Value) {
	var required []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			tag, ok := f.Tag.Lookup("flag")
			if f.Anonymous && f.Type.Kind() == reflect.Struct && !ok {
				walk(fv)
				continue
			}
			if !ok {
				continue
			}
			parts := strings.Split(tag, ",")
			name, usage := parts[0], f.Tag.Get("usage")
			fl := cmd.Flags()
			switch p := fv.Addr().Interface().(type) {
			case *string:
				fl.StringVar(p, name, "", usage)
			case *bool:
				fl.BoolVar(p, name, false, usage)
			case *[]string:
				fl.StringArrayVar(p, name, nil, usage)
			case *float64:
				fl.Float64Var(p, name, 0, usage)
			case *int:
				fl.IntVar(p, name, 0, usage)
			case *uint64:
				fl.Uint64Var(p, name, 0, usage)
			case **op.Target:
				fl.Var(&targetValue{p}, name, usage)
			default:
				panic(fmt.Sprintf("cli: flag %s of %s: no flag of type %s", name, verb, f.Type))
			}
			for _, opt := range parts[1:] {
				switch {
				case opt == "required", opt == "emptyok":
					required = append(required, name+","+opt)
				case strings.HasPrefix(opt, "alias="):
					aliasFlag(cmd, strings.TrimPrefix(opt, "alias="), name)
				}
			}
		}
	}
	walk(in)
	if len(required) > 0 {
		cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
			for _, r := range required {
				name, opt, _ := strings.Cut(r, ",")
				if err := needFlag(name, fmt.Sprintf("%s needs --%s: %s", verb, name, cmd.Flags().Lookup(name).Usage), opt == "emptyok")(cmd, args); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// targetValue is a flag naming an element the way a positional TARGET
// does (parseTarget).
type targetValue struct{ p **op.Target }

func (v *targetValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	b, _ := json.Marshal(*v.p)
	return string(b)
}

func (v *targetValue) Set(s string) error {
	t, err := parseTarget(s)
	if err != nil {
		return err
	}
	*v.p = &t
	return nil
}

func (v *targetValue) Type() string { return "TARGET" }

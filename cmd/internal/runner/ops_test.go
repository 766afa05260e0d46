package runner

import (
	"context"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// runAct runs a page action of the table on r as a client calls it:
// through its route, so admission, the ledger and the audit apply.
func runAct[In op.Input](ctx context.Context, r *Runner, o *op.Op[In, op.ActResult], in In) (op.ActResult, error) {
	return localapi.Of(o).Call(ctx, r.Routes(), in)
}

// clickOn is a click on t in page.
func clickOn(page string, t localapi.Target) op.ClickIn {
	return op.ClickIn{OnPage: op.OnPage{Page: page}, Element: op.Element{Target: &t}}
}

// testAction is a page action a test repeats: kind is what the page's
// journal counts, run performs it on page under key, and other is another
// request under the same key.
type testAction struct {
	kind       string
	run, other func(ctx context.Context, r *Runner, page, key string) error
}

// clickAndType are a click and a typing, the effects the ledger tests cut.
var clickAndType = []testAction{
	{kind: "click",
		run: func(ctx context.Context, r *Runner, page, key string) error {
			in := clickOn(page, localapi.Target{Role: "button", Name: "Do it"})
			in.IdempotencyKey = key
			_, err := runAct(ctx, r, op.Click, in)
			return err
		},
		other: func(ctx context.Context, r *Runner, page, key string) error {
			in := clickOn(page, localapi.Target{Label: "Note"})
			in.IdempotencyKey = key
			_, err := runAct(ctx, r, op.Click, in)
			return err
		}},
	{kind: "type",
		run: func(ctx context.Context, r *Runner, page, key string) error {
			_, err := runAct(ctx, r, op.Type, typeIn(page, key, "x"))
			return err
		},
		other: func(ctx context.Context, r *Runner, page, key string) error {
			_, err := runAct(ctx, r, op.Type, typeIn(page, key, "another text"))
			return err
		}},
}

func typeIn(page, key, text string) op.TypeIn {
	return op.TypeIn{OnPage: op.OnPage{Page: page}, Element: op.Element{Target: &localapi.Target{Label: "Note"}}, Text: text, Keyed: op.Keyed{IdempotencyKey: key}}
}

// runOp runs an operation of the table on r as a client calls it: through
// its route, so admission, the bound, the ledger and the audit apply.
func runOp[In op.Input, Out any](ctx context.Context, r *Runner, o *op.Op[In, Out], in In) (Out, error) {
	return localapi.Of(o).Call(ctx, r.Routes(), in)
}

// readIn reads page.
func readIn(page string) op.ReadIn { return op.ReadIn{OnPage: op.OnPage{Page: page}} }

package runner

import (
	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/cmd/internal/secret"
)

// Secrets (package secret): an operation's input declares the fields that
// may carry placeholders (op.Typed); the Runner judges them against the
// origin it is about to act on before anything happens, and the page
// surface types a value only once it has read the origin of the very
// document the field is in (surface.TypeOptions.Expand). Every answer and
// error of the route table, every audit record and log line pass
// secret.Set.Redact.

// redactor is the route table's redaction, nil without secrets.
func (r *Runner) redactor() localapi.Redactor {
	if r.opts.Secrets.Len() == 0 {
		return nil
	}
	return r.opts.Secrets
}

// checkTyped refuses an input whose placeholders name no secret, or one
// not bound to the origin of the document acted on: before the effect is
// dispatched, so nothing reaches the page.
func (r *Runner) checkTyped(in any, docURL string) error {
	for _, f := range op.Typed(in) {
		if secret.Has(*f) {
			if err := r.opts.Secrets.Check(*f, docURL); err != nil {
				return err
			}
		}
	}
	return nil
}

// typing is the surface's options for text that may hold placeholders:
// the value is put in only for the document the field is in.
func (r *Runner) typing(text string, o surface.TypeOptions) surface.TypeOptions {
	if secret.Has(text) {
		o.Expand = func(docURL string) (string, error) {
			return r.opts.Secrets.Expand(text, docURL)
		}
	}
	return o
}

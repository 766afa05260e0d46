package mcp

import (
	"errors"
	"os"
	"strings"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/cmd/internal/secret"
)

// secretsNote tells the agent, in the description of a tool whose
// operation takes secret placeholders, which secrets it may type; only
// when the owner named some, so the default tool list pays nothing.
func (s *Server) secretsNote(m *op.Meta) string {
	d, ok := op.Lookup(m.Name)
	if len(s.opts.Secrets) == 0 || !ok || len(op.Typed(d.NewInput())) == 0 {
		return ""
	}
	ph := make([]string, len(s.opts.Secrets))
	for i, n := range s.opts.Secrets {
		ph[i] = secret.Placeholder(n)
	}
	return " Text may hold " + strings.Join(ph, ", ") + ": typed, never shown."
}

// secretNames are the placeholders the agent may type (status shows them).
func secretNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, secret.Placeholder(n))
	}
	return out
}

// parseSecrets reads --secret: an embedded Runner's setting (a daemon's
// are its own: webcodex serve --secret).
func parseSecrets(o cmdOptions) (*secret.Set, error) {
	if o.runner && len(o.secrets) > 0 {
		return nil, &cmdutil.UsageError{Err: errors.New("--secret is the daemon's setting with --runner (webcodex serve --secret)")}
	}
	set, err := secret.Parse(o.secrets, os.Getenv)
	if err != nil {
		return nil, &cmdutil.UsageError{Err: err}
	}
	return set, nil
}

package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// Scope is one permission a server grants its agent.
type Scope = op.Scope

// The scopes (op's). Every tool needs one; attaching also needs
// --allow-attach.
const (
	ScopeRead    = op.Read
	ScopeLaunch  = op.Launch
	ScopeControl = op.Control
)

// AllScopes lists the scopes in the order they are shown.
var AllScopes = []Scope{ScopeRead, ScopeLaunch, ScopeControl}

// DefaultScopes is what `webcodex mcp` grants without --scopes.
const DefaultScopes = "browser:read,browser:launch,browser:control"

// Scopes is a set of granted scopes.
type Scopes map[Scope]bool

// ParseScopes parses a comma-separated list. Unknown names are an error;
// an empty list grants nothing.
func ParseScopes(s string) (Scopes, error) {
	out := Scopes{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(AllScopes, Scope(f)) {
			return nil, fmt.Errorf("unknown scope %q (known: browser:read, browser:launch, browser:control)", f)
		}
		out[Scope(f)] = true
	}
	return out, nil
}

// List returns the granted scopes in order.
func (s Scopes) List() []string {
	out := []string{}
	for _, sc := range AllScopes {
		if s[sc] {
			out = append(out, string(sc))
		}
	}
	return out
}

// check refuses a tool the scopes do not cover.
func (s Scopes) check(tool string, need Scope) error {
	if s[need] {
		return nil
	}
	return fsm.Refusef(fsm.ScopeDenied, "%s needs the %s scope; this server grants %s", tool, need, grantedText(s))
}

func grantedText(s Scopes) string {
	l := s.List()
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}

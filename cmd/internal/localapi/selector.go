package localapi

import (
	"regexp"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// MaxSelectorChars bounds a selector string.
const MaxSelectorChars = 1000

// roleSelector is Playwright's role=button[name="Save"].
var roleSelector = regexp.MustCompile(`^role=([a-z]+)(?:\[name=(?:"([^"]*)"|'([^']*)')i?\])?$`)

// SelectorTarget reads a selector string as MCP's target string does
// (Playwright MCP's unique element selector): text=…, data-testid=…,
// role=…[name="…"], else a CSS selector. The element must be unique: more
// than one visible match is refused as ambiguous and none as not found.
func SelectorTarget(sel string) (Target, error) {
	sel = strings.TrimSpace(sel)
	switch {
	case sel == "":
		return Target{}, fsm.Refuse(fsm.InvalidArgument, "the selector is empty")
	case len(sel) > MaxSelectorChars:
		return Target{}, fsm.Refusef(fsm.InvalidArgument, "a selector is at most %d characters", MaxSelectorChars)
	case strings.HasPrefix(sel, "text="):
		return Target{Text: unquote(strings.TrimPrefix(sel, "text="))}, nil
	case strings.HasPrefix(sel, "data-testid="):
		return Target{TestID: unquote(strings.TrimPrefix(sel, "data-testid="))}, nil
	case strings.HasPrefix(sel, "role="):
		m := roleSelector.FindStringSubmatch(sel)
		if m == nil {
			return Target{}, fsm.Refuse(fsm.InvalidArgument, `a role selector reads role=button or role=button[name="Save"]`)
		}
		return Target{Role: m[1], Name: m[2] + m[3]}, nil
	}
	return Target{CSS: sel}, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

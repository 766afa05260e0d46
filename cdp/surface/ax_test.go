package surface

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// axLine is an outline line with a ref: role, name and ref.
var axLine = regexp.MustCompile(`^\s*- (\S+)(?: "((?:[^"\\]|\\.)*)")?.*\[(e\d+)\]$`)

// axAllowed are the differences from Chrome's accessibility tree that the
// outline keeps on purpose, each with why. A rule that no longer matches
// anything fails the test too, so the list stays true.
var axAllowed = []struct {
	match func(role, name, axRole, axName string) bool
	why   string
}{
	{func(role, name, axRole, axName string) bool {
		return role == "generic" && axRole == "generic" && axName == "" && name != ""
	},
		"a generic element made clickable by script (onclick, tabindex, a pointer cursor) has no name in Chrome's tree, " +
			"which forbids naming generics from content; the outline names it by its text so that an agent can tell it apart and target it"},
	{func(role, name, axRole, axName string) bool {
		return role == "textbox" && axRole == "generic" && sameName(name, axName)
	},
		"Chrome's tree leaves a contenteditable region generic (editable) without an ARIA role; the outline calls it a textbox " +
			"because that is what an agent types into"},
	{func(role, name, axRole, axName string) bool {
		return role == "button" && axRole == "DisclosureTriangle" && sameName(name, axName)
	}, "Chrome's tree calls a <summary> DisclosureTriangle, an internal role outside ARIA; the outline says button, what it acts as"},
}

// TestAccessibilityConformance compares the role and name of every
// interactive element of the fixture pages, as the outline shows it, with
// Chrome's own accessibility tree (Accessibility.getPartialAXTree), and
// fails on each difference that is not allowed with a reason above.
func TestAccessibilityConformance(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	p, _ := testPage(t, "")
	ctx := tctx(t)
	pages := []string{fixtures(t).url("/login"), fixtures(t).url("/controls"), fixtures(t).url("/form-small"), fixtures(t).url("/shadow"), effectSite(t).URL + "/aria", effectSite(t).URL + "/fx"}
	var diffs []string
	used := make([]bool, len(axAllowed))
	compared := 0
	for _, u := range pages {
		must(p.Navigate(ctx, u))(t)
		s := must(p.Snapshot(ctx, SnapshotOptions{Interactive: true, Full: true, MaxChars: MaxSnapshotChars}))(t)
		w := must(p.mainWorld(ctx))(t)
		for _, l := range strings.Split(s.Text, "\n") {
			m := axLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			var name string
			if m[2] != "" {
				if err := jsonv2.Unmarshal([]byte(`"`+m[2]+`"`), &name); err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
			}
			el, err := p.invokeObject(ctx, w, jsElementOf, map[string]string{"ref": m[3], "snap": s.ID})
			if err != nil || el == nil || el.ObjectID == "" {
				t.Fatalf("%s: no element for %s: %v", u, m[3], err)
			}
			ax, err := cdproto.Call(ctx, p.sess, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: el.ObjectID, FetchRelatives: new(false)})
			p.release(ctx, w.sess, el.ObjectID)
			if err != nil || len(ax.Nodes) == 0 {
				t.Fatalf("%s %s: no accessibility node: %v", u, m[3], err)
			}
			n := ax.Nodes[0]
			axRole, axName := axString(n.Role), axString(n.Name)
			compared++
			if axRole == m[1] && sameName(name, axName) {
				continue
			}
			allowed := false
			for i, a := range axAllowed {
				if a.match(m[1], name, axRole, axName) {
					allowed, used[i] = true, true
				}
			}
			if !allowed {
				diffs = append(diffs, "ours "+m[1]+" "+quoteJS(name)+", Chrome's "+axRole+" "+quoteJS(axName)+" on "+u[strings.LastIndexByte(u, '/'):])
			}
		}
	}
	t.Logf("%d interactive elements compared", compared)
	if compared < 40 {
		t.Fatalf("only %d elements compared", compared)
	}
	for i, u := range used {
		if !u {
			diffs = append(diffs, "allowed difference that no longer occurs: "+axAllowed[i].why)
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%d differences from Chrome's accessibility tree:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if jsonv2.Unmarshal(v.Value, &s) != nil {
		return ""
	}
	return s
}

// sameName compares names as the outline shows them: white space
// normalized, and the outline's cap (an ellipsis) as a prefix.
func sameName(ours, chrome string) bool {
	chrome = strings.Join(strings.Fields(chrome), " ")
	if strings.HasSuffix(ours, "…") {
		return strings.HasPrefix(chrome, strings.TrimSuffix(ours, "…"))
	}
	return ours == chrome
}

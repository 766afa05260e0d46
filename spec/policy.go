package spec

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/webcodex/webcodex/cdp/policy"
)

func init() { Register("cdp-policy.md", cdpPolicy) }

// cdpPolicy renders the raw CDP command table: both tiers with their
// reasons and parameters, the commands refused by name, and the domains
// refused whole.
func cdpPolicy() []byte {
	cmds := policy.Commands()
	narrowed := 0
	for _, c := range cmds {
		if c.Allowlisted != nil {
			narrowed++
		}
	}
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("# Raw CDP command table\n\n")
	b.WriteString("What `browser_cdp` (raw page CDP) may send. The table below is closed: a command that is " +
		"not in it is refused with `cdp_policy_denied`, including deprecated commands Chrome still serves and anything a " +
		"later Chrome or cdproto adds. A command may take only the parameters listed for it; any other parameter is " +
		"refused, a parameter marked `=false` may only be false, and one marked `=true` may only be true and is sent as true " +
		"when left out. No command takes an execution context id, a frame id " +
		"or a piercing walk: raw CDP acts in the page's main world, never in webcodex's own isolated world or in a frame the " +
		"origin gate hides. Params must be one JSON object with no key twice in any object (`invalid_argument`, before " +
		"anything is sent).\n\n")
	fmt.Fprintf(&b, "**Two tiers.** On the open web (an owned browser launched without `--allow`) the whole table applies: "+
		"%d commands. Under any allowlist (a non-empty `--allow`, and every attached browser) only %d pass, with the "+
		"parameters in their own column. Same-site frames of denied origins share the page's renderer, so the DOM node, "+
		"object, script and context ids the inspector hands out reach them: under an allowlist no command takes or returns "+
		"such an id (`Runtime.evaluate` answers by value only: `returnByValue` is forced true, and the answer is stripped of "+
		"`objectId`, `preview`, `customPreview` and `deepSerializedValue`, a thrown object or function becoming its "+
		"description, a string), and nothing plants code for later documents, serializes the whole page, reveals history, sets state "+
		"that outlives the origin, enumerates the heap, debugs, captures the screen (the screenshot verb masks denied frames) "+
		"or sends raw input (the input verbs are hit-tested against denied frames). Raw CDP is off for an attached browser "+
		"unless the owner passes `--allow-evaluate` for that attachment.\n\n", len(cmds), narrowed)
	b.WriteString("**Session.** Raw commands run on the page's own CDP session, never the page surface's. It is attached at " +
		"the first raw command and reset (detached, which clears every override, extra header, script for new documents, " +
		"breakpoint and enabled domain it holds) whenever the page's main frame commits a new document; the next command " +
		"gets a fresh one. A command's effect on the very next document (a script planted for new documents runs there " +
		"before the reset) is why the allowlist tier withholds such commands whole. A result that carries page data is " +
		"returned only if the page still shows the document authorized before the command; under an allowlist any " +
		"change of document discards it (`browser_binding_stale`), and a page that left the allowlist is refused as every " +
		"verb refuses it.\n\n")

	fmt.Fprintf(&b, "## Under an allowlist (%d commands)\n\n| command | parameters | why it is safe |\n|---|---|---|\n", narrowed)
	for _, c := range cmds {
		if c.Allowlisted != nil {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Method, paramList(c.Allowlisted.Params), cell(c.Allowlisted.Reason))
		}
	}
	fmt.Fprintf(&b, "\n## On the open web (%d commands)\n\n| command | parameters | why | under an allowlist |\n|---|---|---|---|\n", len(cmds))
	for _, c := range cmds {
		under := "passes (see above)"
		if c.Allowlisted == nil {
			under = "withheld: " + c.Withheld
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Method, paramList(c.Open.Params), cell(c.Open.Reason), cell(under))
	}
	b.WriteString("\n## Refused by name\n\nEvery command outside the table is refused; these are the ones a reviewer reaches for first, with why.\n\n| command | why |\n|---|---|\n")
	for _, c := range policy.WithheldCommands() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Method, cell(c.Reason))
	}
	b.WriteString("\n## Domains\n\nThe class of every domain of devtools-protocol r1684464. A domain without a command in the table is refused whole.\n\n| domain | class | commands in the table | why refused |\n|---|---|---|---|\n")
	for _, d := range policy.Domains() {
		in, why := "some", ""
		if !d.Allowed {
			in, why = "none", d.Reason
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.Name, d.Class, in, cell(why))
	}
	return b.Bytes()
}

// paramList renders a parameter list: `name`, or `name=false` (`name=true`)
// when only false (true) is allowed; "none" for none.
func paramList(ps []policy.Param) string {
	if len(ps) == 0 {
		return "none"
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "`" + p.Name + "`"
		if p.OnlyFalse {
			out[i] = "`" + p.Name + "=false`"
		}
		if p.OnlyTrue {
			out[i] = "`" + p.Name + "=true`"
		}
	}
	return strings.Join(out, " ")
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

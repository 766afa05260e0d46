package spec

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/webcodex/webcodex/cdp/policy"
)

func init() { Register("cdp-policy.md", cdpPolicy) }

// cdpPolicy renders the CDP domain policy: every reviewed domain with its
// class and verdict, and the commands withheld inside allowed domains.
func cdpPolicy() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("# CDP domain policy\n\nWhat `browser_cdp` (raw page CDP) and evaluate may send. Page-scoped domains act as the document and " +
		"are bounded by the browser's own same-origin policy; browser-global and cross-origin domains are withheld; a domain " +
		"not on this reviewed list is refused until someone classifies it. Raw page CDP and evaluate are open for owned " +
		"browsers and off for attached ones unless the owner passes `--allow-evaluate` for that attachment.\n\n")
	b.WriteString("## Domains\n\n| domain | class | verdict | why |\n|---|---|---|---|\n")
	for _, d := range policy.Domains() {
		verdict := "withheld"
		if d.Allowed {
			verdict = "passes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.Name, d.Class, verdict, cell(d.Reason))
	}
	b.WriteString("\n## Commands withheld inside allowed domains\n\n| command | why |\n|---|---|\n")
	for _, c := range policy.WithheldCommands() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Method, cell(c.Reason))
	}
	b.WriteString("\n## Raw CDP stays in the page's main document\n\nRaw page CDP never addresses another frame: these parameters are refused, and these frame-wide commands are withheld, because each would read a frame the origin gate hides. The page verbs reach frames one by one, each judged on its own origin.\n\n| parameter or command | why |\n|---|---|\n")
	for _, c := range policy.FrameAddressingParams() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Method, cell(c.Reason))
	}
	for _, c := range policy.FrameWideCommands() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Method, cell(c.Reason))
	}
	b.WriteString("\n## Flagged commands reviewed and left open\n\n| command | why it is safe |\n|---|---|\n")
	for _, c := range policy.ReviewedCommands() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Method, cell(c.Reason))
	}
	return b.Bytes()
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

package mcp

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// Page text is fenced: every piece of text a page wrote (an outline, a
// title, a URL, a console or network entry, a dialog message, an evaluated
// value) reaches the agent inside
//
//	<page origin="https://shop.example" frame="main">
//	…
//	</page>
//
// so a host or a model can tell the page's words from webcodex's own. A
// tool may carry page text only when its declaration says so (op.Meta's
// Reveals, or its toolSpec's for tools outside the table); addTool renders
// the fences, in one place. Inside, anything that looks like the fence's
// tag — any case, full-width or angle-quote brackets, invisible characters
// between the letters — is escaped (its bracket written &lt;), so a page
// cannot close the block and write outside it.

// pageBlock is page-derived text and where it came from: the origin of
// the document that wrote it and its frame ("main", or "child" for a
// frame's).
type pageBlock struct {
	origin, frame, text string
}

// fenceLookalike matches an opening or closing tag of the fence as a page
// might imitate it.
var fenceLookalike = regexp.MustCompile(`(?i)[<＜﹤‹〈⟨❮]\s*/?\s*p[\x{200B}-\x{200D}\x{2060}\x{FEFF}\x{00AD}]*a[\x{200B}-\x{200D}\x{2060}\x{FEFF}\x{00AD}]*g[\x{200B}-\x{200D}\x{2060}\x{FEFF}\x{00AD}]*e`)

// escapeFence writes the bracket of every fence look-alike as &lt;.
func escapeFence(text string) string {
	return fenceLookalike.ReplaceAllStringFunc(text, func(m string) string {
		_, size := utf8.DecodeRuneInString(m)
		return "&lt;" + m[size:]
	})
}

// fenced is the blocks, each fenced.
func fenced(blocks []pageBlock) string {
	var b strings.Builder
	for _, p := range blocks {
		origin := p.origin
		if origin == "" {
			origin = "opaque"
		}
		fmt.Fprintf(&b, "<page origin=%q frame=%q>\n%s\n</page>\n", origin, p.frame, escapeFence(strings.TrimSuffix(p.text, "\n")))
	}
	return b.String()
}

// renderReply is a reply's text: webcodex's words, then the page's,
// fenced. Page text from a tool that does not declare it is refused.
func renderReply(spec toolSpec, r *reply) (string, error) {
	if len(r.page) == 0 {
		return r.text, nil
	}
	if spec.reveals != op.RevealsPageText {
		return "", fmt.Errorf("mcp: %s answered with page text it does not declare", spec.name)
	}
	return r.text + fenced(r.page), nil
}

// originOf is the origin of a URL as the fence names it ("" when it has
// none: about:blank, data:).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// pageOrigin is the origin of page's live URL as the Runner last read it
// ("" when unknown).
func (s *Server) pageOrigin(ctx context.Context, page string) string {
	st, err := call(ctx, s.runner, localapi.GetStatus, struct{}{})
	if err != nil {
		return ""
	}
	for _, b := range st.Browsers {
		for _, p := range b.Pages {
			if p.ID == page {
				return originOf(p.URL)
			}
		}
	}
	return ""
}

// diagBlocks are a log's entries, one line each, fenced by the origin
// that wrote them: "main" when it is the page's own.
func diagBlocks(entries []op.DiagEntry, pageOrigin string) []pageBlock {
	var out []pageBlock
	for _, e := range entries {
		frame := "main"
		if e.Origin != "" && e.Origin != pageOrigin {
			frame = "child"
		}
		line := diagLine(e)
		if n := len(out); n > 0 && out[n-1].origin == e.Origin && out[n-1].frame == frame {
			out[n-1].text += "\n" + line
			continue
		}
		out = append(out, pageBlock{origin: e.Origin, frame: frame, text: line})
	}
	return out
}

// diagLine is one console message or request.
func diagLine(e op.DiagEntry) string {
	switch {
	case e.Method != "" || e.Kind == "network":
		line := strings.TrimSpace(e.Method + " " + capText(e.URL, 500))
		if e.Status != 0 {
			line += fmt.Sprintf(" %d", e.Status)
		}
		if e.Failed != "" {
			line += " failed: " + e.Failed
		}
		return line
	}
	return fmt.Sprintf("[%s] %s", e.Level, capText(strings.ReplaceAll(e.Text, "\n", " "), 2000))
}

// actionBlocks are the page's words an action brought back: the title of
// the document it navigated to, the message of a dialog it opened.
func (s *Server) actionBlocks(ctx context.Context, page string, res localapi.ActResult) []pageBlock {
	var out []pageBlock
	if n := res.Navigation; n != nil && n.Title != "" && !n.Pending && !n.SameDocument {
		out = append(out, pageBlock{origin: originOf(n.URL), frame: "main", text: "title: " + capText(n.Title, 200)})
	}
	if d := res.Dialog; d != nil {
		out = append(out, pageBlock{origin: s.pageOrigin(ctx, page), frame: "main", text: d.Type + " dialog: " + capText(d.Message, 200)})
	}
	return out
}

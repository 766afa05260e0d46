package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// Results are written for the agent that reads them: the text content is
// what a model sees (an outline as plain lines, an action as a line per
// thing it caused), and the structured content carries the machine fields
// (ids, counts, cursors) for a client that reads them. The outline is
// never repeated as an escaped string inside JSON.

// textResult is a success with text for the agent and structured fields,
// bounded like every result.
func textResult(text string, fields map[string]any) *sdk.CallToolResult {
	b, err := json.Marshal(fields)
	if err != nil {
		return errorResult(fmt.Errorf("mcp: encode the result: %w", err))
	}
	if n := len(b) + len(text); n > MaxResultBytes {
		return errorResult(fsm.Refusef(fsm.LimitExceeded, "the result is %d bytes; results are bounded at %d: ask for less (maxChars, a cursor, a narrower scope)", n, MaxResultBytes))
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// snapshotView is a snapshot as the agent reads it.
type snapshotView struct {
	origin string         // the origin of the page's document
	text   string         // url, title, then the outline
	fields map[string]any // every machine field of the snapshot, not its text
	id     string         // its snapshotId, remembered for bare refs
}

// viewSnapshot splits a snapshot result into its outline and its fields:
// the structured content is the snapshot's own fields, so those the
// surface adds later pass through, without its text.
func viewSnapshot(snap localapi.SnapshotResult) (snapshotView, error) {
	raw, err := json.Marshal(snap.Snapshot) // the result names its page once, at the top
	if err != nil {
		return snapshotView{}, fmt.Errorf("mcp: encode the snapshot: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return snapshotView{}, fmt.Errorf("mcp: encode the snapshot: %w", err)
	}
	delete(m, "text")
	outline := snap.Text
	var b strings.Builder
	if snap.URL != "" {
		fmt.Fprintf(&b, "url: %s\n", snap.URL)
	}
	if snap.Title != "" {
		fmt.Fprintf(&b, "title: %s\n", snap.Title)
	}
	switch {
	case snap.Unchanged:
		b.WriteString("unchanged since the snapshot given as since\n")
	case snap.Incremental:
		b.WriteString("changes since the snapshot given as since (+ added, - removed):\n")
	}
	b.WriteString(outline)
	if outline != "" && !strings.HasSuffix(outline, "\n") {
		b.WriteByte('\n')
	}
	return snapshotView{origin: originOf(snap.URL), text: b.String(), fields: m, id: snap.ID}, nil
}

// actionText is what the action m did, a line each: what was acted on (in
// the words m declares), then only what it caused.
func actionText(m *op.Meta, f localapi.ActResult) string {
	lines := []string{m.Said(f.ActionResult)}
	if f.NoOp {
		lines = append(lines, "it was already in that state: nothing changed")
	}
	if f.Rebound {
		lines = append(lines, "the ref's element had been re-rendered: acted on its one equivalent replacement")
	}
	if f.Scroll != nil {
		at := ""
		switch {
		case f.Scroll.AtBottom:
			at = " (at the bottom)"
		case f.Scroll.AtTop:
			at = " (at the top)"
		}
		lines = append(lines, fmt.Sprintf("scroll position %d of %d%s", f.Scroll.Y, f.Scroll.Height, at))
	}
	if n := f.Navigation; n != nil {
		switch {
		case n.Pending:
			lines = append(lines, "it started a navigation"+to(n.URL)+" that had not committed yet")
		case n.SameDocument:
			lines = append(lines, "it moved within the document"+to(n.URL)+" (refs stay valid)")
		default:
			lines = append(lines, "it navigated"+to(n.URL)+"; refs from before are stale: take a browser_snapshot")
		}
	}
	if f.NewTab != nil {
		lines = append(lines, "it opened a new tab"+to(f.NewTab.URL)+" (browser_tabs lists it)")
	}
	if f.Download != nil {
		name := f.Download.SuggestedFilename
		if name == "" {
			name = "a file"
		}
		lines = append(lines, fmt.Sprintf("it started a download: %s", capText(name, 200)))
	}
	if f.Dialog != nil {
		lines = append(lines, fmt.Sprintf("a %s dialog opened (its message below); the page waits until browser_handle_dialog answers it", f.Dialog.Type))
	}
	return strings.Join(lines, "\n") + "\n"
}

func to(url string) string {
	if url == "" {
		return ""
	}
	return " to " + capText(url, 500)
}

// dialogText says what browser_handle_dialog found or did; the message,
// the page's words, is fenced after it (dialogBlock).
func dialogText(f localapi.DialogResult) string {
	if f.Dialog == nil {
		return "no dialog is open\n"
	}
	switch {
	case f.Accepted == nil:
		return fmt.Sprintf("a %s dialog is open; answer it with accept true or false. Its message:\n", f.Dialog.Type)
	case *f.Accepted:
		return fmt.Sprintf("accepted the %s dialog. Its message:\n", f.Dialog.Type)
	}
	return fmt.Sprintf("dismissed the %s dialog. Its message:\n", f.Dialog.Type)
}

// errorText is a refusal as the agent reads it.
func errorText(ref *fsm.Refusal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "refused: %s", ref.Code)
	if ref.Detail != "" {
		b.WriteString(": " + ref.Detail)
	}
	if ref.Next != "" {
		b.WriteString("\nnext: " + ref.Next)
	}
	return b.String()
}

// forAgent rewords a refusal for an MCP client: the next step names tools
// and their arguments (a CLI command or flag means nothing to an agent),
// and a flag the detail names becomes the argument that plays its part. The
// code never changes.
func forAgent(ref *fsm.Refusal) *fsm.Refusal {
	out := *ref
	if next, ok := agentNext[ref.Code]; ok && (ref.Next == "" || ref.Next == ref.Code.NextStep()) {
		out.Next = next
	}
	out.Detail = flagWords.Replace(out.Detail)
	out.Next = flagWords.Replace(out.Next)
	return &out
}

// agentNext is each code's next step in MCP terms, where the CLI's differs.
var agentNext = map[fsm.Code]string{
	fsm.BindingStale:       "take a new browser_snapshot and use its refs (page ids: browser_tabs)",
	fsm.WrongTargetRefused: "use the page the ref or id was minted for",
	fsm.RouteUnavailable:   "browser_status lists what this machine supports",
	fsm.ReconnectExhausted: "check the browser is running, then browser_attach or browser_launch again",
	fsm.InputIncomplete:    "read the field back (browser_snapshot), then browser_type the remainder with clear false",
	fsm.ElementNotFound:    "take a browser_snapshot and use a ref it lists",
	fsm.ElementHidden:      "browser_wait_for the element to be visible, or scroll or open its container first",
	fsm.ElementDisabled:    "browser_wait_for the element with condition enabled, then retry",
	fsm.ElementAmbiguous:   "use a ref from browser_snapshot, narrow target (role with name), or add target.index",
	fsm.ElementObscured:    "close or dismiss the overlay first (browser_snapshot shows it)",
	fsm.PageClosed:         "browser_tabs lists the open tabs",
	fsm.NavigationFailed:   "check the url and that its server answers",
	fsm.InvalidArgument:    "fix the argument the detail names",
	fsm.NotFound:           "browser_status lists browsers, browser_tabs their tabs",
	fsm.ScopeDenied:        "this session's scopes do not include it; the person who started the server decides",
	fsm.PolicyDenied:       "use the tool made for it (browser_navigate, browser_file_upload, browser_tabs, …)",
	fsm.ApprovalInvalid:    "call browser_attach again for a fresh approval request",
	fsm.OriginDenied:       "that site is outside the owner's allowed origins; no tool argument changes that",
	fsm.OutcomeUnknown:     "look at the page (browser_snapshot) to learn whether it happened; it is never replayed",
	fsm.AttachmentLost:     "browser_reconnect, or browser_attach or browser_launch again",
	fsm.UploadDenied:       "only files in the owner's upload directory can be sent; ask the person to put the file there",
	fsm.LimitExceeded:      "ask for less: maxChars, a cursor, a narrower scope or an element",
	fsm.DialogOpen:         "answer it with browser_handle_dialog (accept true or false)",
	fsm.Timeout:            "look at the page (browser_snapshot), then wait again or longer (timeout, in seconds)",
	fsm.LeaseHeld:          "another session holds it: close that one, or wait",
}

// flagWords turns the CLI's flags, where a shared detail names them, into
// the MCP argument or the owner's setting that plays their part.
var flagWords = strings.NewReplacer(
	"--allow-evaluate", "the owner's evaluate setting",
	"--allow-attach", "the owner's attach setting",
	"can allow it with --allow ", "can add it to the allowed origins: ",
	"can authorize origins with --allow ORIGIN", "can allow origins when starting the server",
	"--allow", "the owner's allowed origins",
	"--index", "target.index",
	"--headless", "headless true",
	"--profile-dir", "profileDir",
	"--endpoint", "endpoint",
	"--offer", "offer",
	"--upload-dir", "the owner's upload directory",
	"`wait --enabled`", "browser_wait_for with condition enabled",
)

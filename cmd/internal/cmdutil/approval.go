package cmdutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// RunApproval is the person's side of an approval at a terminal, for
// `webcodex approve` and `webcodex mcp approve`: it asks the Runner on c to
// check this terminal and show the one-time code (when there is a desktop),
// shows the summary, reads the person's answer from in, and sends it.
// next is printed after an approval.
func RunApproval(ctx context.Context, in io.Reader, out io.Writer, c localapi.Invoker, id string, deny bool, next string) error {
	info, err := localapi.Approval.Call(ctx, c, localapi.ApprovalRequest{ID: id, Challenge: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s\n\nThis request expires at %s.\n", info.Summary, info.Expires.Local().Format(time.TimeOnly))
	answer := localapi.ApprovalRequest{ID: id}
	lines := bufio.NewReader(io.LimitReader(in, 256))
	switch {
	case info.SecondFactor == localapi.SecondFactorDesktop:
		fmt.Fprintln(out, "A one-time code is shown in your desktop's notifications. A program can type into a terminal; it cannot read your screen.")
		verb := "approve"
		if deny {
			verb = "deny"
		}
		fmt.Fprintf(out, "Type the 6-digit code to %s, anything else to cancel: ", verb)
		line, _ := lines.ReadString('\n')
		answer.Code = strings.TrimSpace(line)
		if len(answer.Code) != 6 || strings.Trim(answer.Code, "0123456789") != "" {
			fmt.Fprintln(out, "cancelled.")
			return fsm.Refuse(fsm.ApprovalInvalid, "the person did not confirm")
		}
	case deny:
	default:
		fmt.Fprintln(out, "This session has no desktop, so no one-time code can be shown: this terminal's confirmation is the whole approval.")
		fmt.Fprint(out, "Type \"allow\" to approve, anything else to cancel: ")
		line, _ := lines.ReadString('\n')
		if strings.TrimSpace(line) != "allow" {
			fmt.Fprintln(out, "not approved.")
			return fsm.Refuse(fsm.ApprovalInvalid, "the person did not confirm")
		}
	}
	if deny {
		if _, err := localapi.Deny.Call(ctx, c, answer); err != nil {
			return err
		}
		fmt.Fprintln(out, "denied.")
		return nil
	}
	if _, err := localapi.Approve.Call(ctx, c, answer); err != nil {
		return err
	}
	fmt.Fprintln(out, "approved. "+next)
	return nil
}

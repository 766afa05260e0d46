package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// RunApproval is the person's side of an approval at a terminal, for
// `webcodex approve` and `webcodex mcp approve`: it asks the Runner on c to
// check this terminal and choose the factor, shows the summary, reads the
// person's answer — their login password from the controlling terminal
// with the echo off, or the one-time code or "allow" from in — and sends
// it. next is printed after an approval.
func RunApproval(ctx context.Context, in io.Reader, out io.Writer, c localapi.Invoker, id string, deny bool, next string) error {
	info, err := localapi.Approval.Call(ctx, c, localapi.ApprovalRequest{ID: id, Challenge: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s\n\nThis request expires at %s.\n", info.Summary, info.Expires.Local().Format(time.TimeOnly))
	answer := localapi.ApprovalRequest{ID: id}
	lines := bufio.NewReader(io.LimitReader(in, 256))
	verb := "approve"
	if deny {
		verb = "deny"
	}
	switch {
	case info.SecondFactor == localapi.SecondFactorPassword:
		fmt.Fprintln(out, passwordNotice)
		password, err := readPassword(fmt.Sprintf("Type the login password of %s to %s (it is not shown; Enter alone cancels): ", info.Account, verb))
		fmt.Fprintln(out)
		if err != nil {
			return err
		}
		if len(password) == 0 {
			fmt.Fprintln(out, "cancelled.")
			return fsm.Refuse(fsm.ApprovalInvalid, "the person did not confirm")
		}
		answer.Password = string(password)
		clear(password)
	case info.SecondFactor == localapi.SecondFactorDesktop:
		fmt.Fprintln(out, noPassword(info)+desktopNotice)
		fmt.Fprintf(out, "Type the 6-digit code to %s, anything else to cancel: ", verb)
		line, _ := lines.ReadString('\n')
		answer.Code = strings.TrimSpace(line)
		if len(answer.Code) != 6 || strings.Trim(answer.Code, "0123456789") != "" {
			fmt.Fprintln(out, "cancelled.")
			return fsm.Refuse(fsm.ApprovalInvalid, "the person did not confirm")
		}
	case deny:
	default:
		fmt.Fprintln(out, noPassword(info)+terminalNotice)
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

// What each approval mode proves, as spec/threat-model.md says it: never a
// claim that a program of this user can break.
const (
	passwordNotice = "Your login password shows that someone who knows it answered: a program that can only type into a terminal cannot. " +
		"It is checked by the system's pam_unix helper, as sudo checks it, and never stored. " +
		"It does not protect against a program of yours that reads this terminal or your keyboard (ptrace, a keylogger, " +
		"a fake webcodex earlier on your PATH): type it only in a terminal you opened, for an attach you expect."
	desktopNotice = "A one-time code is shown in your desktop's notifications. It stops a program that can only type into a terminal; " +
		"a program of yours that watches your session bus or your screen can read it too."
	terminalNotice = "This session has no desktop, so no one-time code can be shown: typing \"allow\" on this terminal is the whole approval, " +
		"and a program of yours that opens a terminal can type it too."
)

// noPassword says why the login password is not asked, when the Runner said.
func noPassword(info localapi.ApprovalSummary) string {
	if info.NoPassword == "" {
		return ""
	}
	return "Your login password cannot be asked: " + info.NoPassword + ". "
}

// readPassword shows prompt on the controlling terminal and reads the
// password from it with its echo off; the Runner has checked that this process's input and output are
// that terminal.
func readPassword(prompt string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the login password is read from the controlling terminal, and this process has none").WithCause(err)
	}
	defer tty.Close()
	password, err := readPasswordFrom(tty, prompt)
	if errors.Is(err, errCancelled) {
		return nil, nil
	}
	return password, err
}

// MCPApprovalDir is where each embedded `webcodex mcp` server's approval
// socket lives, under the state root (one directory per server).
const MCPApprovalDir = "mcp"

// maxMCPApprovalSockets bounds the sockets MCPHasApproval asks.
const maxMCPApprovalSockets = 64

// MCPHasApproval reports whether a running `webcodex mcp` server (not the
// Runner daemon) holds the pending approval request id, asking each
// server's approval socket for at most 2 s.
func MCPHasApproval(ctx context.Context, id string) bool {
	dir, err := stateDir()
	if err != nil {
		return false
	}
	entries, _ := os.ReadDir(filepath.Join(dir, MCPApprovalDir))
	for i, e := range entries {
		if i >= maxMCPApprovalSockets || !e.IsDir() {
			continue
		}
		c := localapi.NewClient(filepath.Join(dir, MCPApprovalDir, e.Name()))
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := localapi.Approval.Call(cctx, c, localapi.ApprovalRequest{ID: id})
		cancel()
		if err == nil {
			return true
		}
	}
	return false
}

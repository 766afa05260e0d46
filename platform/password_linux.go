package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// The system's own password tools, by absolute path only: the Runner keeps
// the environment of whoever started it, and a PATH chosen by a program
// must not pick the program that judges a password.
var (
	passwdPaths = []string{"/usr/bin/passwd", "/bin/passwd"}
	// unix_chkpwd is pam_unix's helper: setgid shadow (Debian, Ubuntu) or
	// setuid root (Fedora, Arch), it checks the password of the calling
	// user (any user, when called by root) against the shadow hash, with
	// the same code pam_unix runs for sudo and login.
	chkpwdPaths = []string{"/usr/sbin/unix_chkpwd", "/sbin/unix_chkpwd", "/usr/bin/unix_chkpwd"}
)

// passwordToolBound bounds one run of passwd -S or unix_chkpwd.
const passwordToolBound = 10 * time.Second

// systemTool returns the first of paths that is a regular file owned by
// root and writable by no one else, or "".
func systemTool(paths []string) string {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
			return p
		}
	}
	return ""
}

// toolEnv is the whole environment the password tools run with.
var toolEnv = []string{"LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}

// LoginPasswordOf asks the system (`passwd -S`, which root may ask about
// any login and a user about their own) whether account has a password
// unix_chkpwd can check. A tool that is missing, or that answers with a
// failure or words it does not know, gives PasswordUnknown with the reason;
// a tool that cannot be run at all (or does not finish) is an error, so a
// program that exhausts this user's processes cannot make the Runner fall
// back to a weaker approval.
func LoginPasswordOf(ctx context.Context, account string) (LoginPassword, error) {
	lp := LoginPassword{Account: account, State: PasswordUnknown}
	if account == "" {
		lp.Reason = "this process's login name is unknown"
		return lp, nil
	}
	passwd, chkpwd := systemTool(passwdPaths), systemTool(chkpwdPaths)
	if passwd == "" || chkpwd == "" {
		lp.Reason = "this system has no root-owned passwd and unix_chkpwd (pam_unix's helper) to check a password with"
		return lp, nil
	}
	ctx, cancel := context.WithTimeout(ctx, passwordToolBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, passwd, "-S", account)
	cmd.Env = toolEnv
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return lp, fmt.Errorf("platform: run passwd -S: %w", err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		return lp, fmt.Errorf("platform: passwd -S did not answer: %w", ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		lp.Reason = "the system would not say whether this login has a password (passwd -S refused)"
		return lp, nil
	} else if err != nil {
		return lp, fmt.Errorf("platform: run passwd -S: %w", err)
	}
	fields := strings.Fields(out.String())
	if len(fields) < 2 || fields[0] != account {
		lp.Reason = "passwd -S answered in a form webcodex does not know"
		return lp, nil
	}
	switch fields[1] {
	case "P", "PS":
		lp.State, lp.Reason = PasswordUsable, ""
	case "L", "LK":
		lp.State, lp.Reason = PasswordLocked, "this login's password is locked (no password opens it)"
	case "NP":
		lp.State, lp.Reason = PasswordEmpty, "this login has no password"
	default:
		lp.Reason = "passwd -S answered in a form webcodex does not know"
	}
	return lp, nil
}

// pamAuthErr is unix_chkpwd's exit status for a password that does not
// match (PAM_AUTH_ERR).
const pamAuthErr = 7

// CheckLoginPassword reports whether password is account's login password,
// as pam_unix checks it for sudo: unix_chkpwd reads it NUL-terminated from
// a pipe (it refuses a terminal) and exits 0 on a match. An empty or
// oversized password, or one holding a NUL, never matches. Any exit other
// than match or mismatch is an error, never a mismatch.
func CheckLoginPassword(ctx context.Context, account string, password []byte) (bool, error) {
	if len(password) == 0 || len(password) > MaxPasswordBytes || bytes.IndexByte(password, 0) >= 0 {
		return false, nil
	}
	chkpwd := systemTool(chkpwdPaths)
	if chkpwd == "" {
		return false, errors.New("platform: no root-owned unix_chkpwd to check a password with")
	}
	ctx, cancel := context.WithTimeout(ctx, passwordToolBound)
	defer cancel()
	// nonull: an empty password never matches, whatever the hash.
	cmd := exec.CommandContext(ctx, chkpwd, account, "nonull")
	cmd.Env = toolEnv
	in := make([]byte, 0, len(password)+1)
	in = append(append(in, password...), 0)
	cmd.Stdin = bytes.NewReader(in)
	err := cmd.Run()
	clear(in)
	if ctx.Err() != nil {
		return false, fmt.Errorf("platform: unix_chkpwd did not answer: %w", ctx.Err())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == pamAuthErr:
		return false, nil
	case errors.As(err, &exit):
		return false, fmt.Errorf("platform: unix_chkpwd failed (status %d)", exit.ExitCode())
	default:
		return false, fmt.Errorf("platform: run unix_chkpwd: %w", err)
	}
}

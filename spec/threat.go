package spec

import (
	"bytes"
	"fmt"

	"github.com/webcodex/webcodex/consent"
)

func init() { Register("threat-model.md", threatModel) }

// threatModel renders what an approval to attach to the person's own
// browser proves, what it cannot, and what each mitigation adds. The
// numbers come from the code that enforces them.
func threatModel() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, `# Threat model: what an approval proves

Attaching webcodex to the person's own running browser needs their approval: `+"`webcodex approve ID`"+` at a
terminal (or `+"`webcodex mcp approve ID`"+` for an embedded MCP server), or their answer to the MCP host's question
(elicitation). This page says exactly what that approval proves and what it does not. Everything else an
attachment may do is bounded by the grant the approval mints (spec/grant.md) and by the origin gate.

## What the person approves

An approval request is bound to the SHA-256 digest of its scope, and the person is shown every field of it in
words before answering (the terminal text and the elicitation message are the same summary):

| field | shown as | where it comes from |
|---|---|---|
| Runner instance | (implicit: this Runner) | random per Runner start; a restart discards every request and grant |
| session | "Asked by: …" with the asking processes | the Runner, never the request: an embedded MCP server's own session id (with its client process); for a local API caller, its terminal session read from SO_PEERCRED and /proc |
| browser process and endpoint | product and process id | the process that owns the listening socket, with its start time and executable |
| allowlist | the canonical entries, e.g. `+"`example.com, https://shop.example:443`"+` | the caller's `+"`--allow`"+`, canonicalized as the origin gate reads it (dropped entries authorize nothing and are not shown) |
| evaluate | "Raw JavaScript evaluation: yes/no" | `+"`--allow-evaluate`"+` |
| scopes | "Scopes: …" | an MCP server's `+"`--scopes`"+`; the CLI has every scope |
| reconnect budget | "Reconnects: at most N" | the Runner |
| pressing the prompt | "Press Chrome's own \"Allow remote debugging?\" prompt for you: yes/no" | `+"`--press-prompt`"+`; only such a grant lets the Runner press it (Linux: over AT-SPI, once per connection, at least a second after it appears, only a prompt proven to be this browser process's) |

A grant serves a later attach only when that attach asks for the same or less: the same Runner, session, browser
process and endpoint; allowlist entries each covered by an approved entry; evaluate only if approved; scopes a
subset; pressing the prompt only if approved. Anything wider — another origin, evaluate on, another scope,
pressing the prompt, another caller — needs a new approval. An
attach whose scope does not match a request it names is refused and leaves that request as it was: a mismatched
attach never consumes another request's approval. A request lives %d minutes and is used once; a grant lives in
memory only (%d minutes idle, %d hours in all).

## What an approval stops

| attacker | why the approval holds |
|---|---|
| another local user | the Runner's socket is 0600 in a private directory and every connection's SO_PEERCRED uid is checked; the one-time code goes to this user's own session bus |
| a web page (remote or local) | the local API is a unix socket; requests carrying Origin or Referer, or without its fixed Host, are refused; no page can reach the approval routes |
| an agent without a terminal | approve and deny refuse unless the caller's standard input and output are its controlling terminal, read by the Runner from /proc (tty_nr of /proc/PID/stat against the device of fds 0 and 1), never from what the caller says; no MCP tool argument can approve (only the host's answer, with a one-time state token) |
| a program that drives a terminal of its own outside the asking program's tree (double fork, `+"`setsid`"+`, a pty) | where the login has a usable password, the answer needs it (below): typing "allow" or anything else that is not the password is refused and counted, and %d such answers deny the request |
| a replayed or mismatched approval | the request id is 80 random bits, single use, expires; its digest binds everything above; a use with another digest is refused and consumes nothing; the host's answer must come back with the state token and the same arguments |
| a caller reusing someone else's grant | the grant's session comes from who is calling, not from a request field (the local API refuses unknown fields) |

## Which factor an answer needs, and what each proves

`+"`webcodex approve`"+` asks the Runner which factor the answer needs; the Runner decides, never the answering program,
and an answer that skipped the question is held to the same factor.

| mode | when | what it proves | what it does not |
|---|---|---|---|
| login password (`+"`login_password`"+`) | the default where the person's login has a password: `+"`passwd -S`"+` (root-owned, run by absolute path with a fixed environment) reports a usable hash (P) and pam_unix's helper `+"`unix_chkpwd`"+` is present | someone who knows the person's login password typed it: `+"`webcodex approve`"+` reads it from the controlling terminal with the echo off and the Runner checks it with `+"`unix_chkpwd LOGIN nonull`"+` (the code pam_unix runs for sudo, against the shadow hash; never stored, logged or audited). A program that can only type into a terminal — the double-forked, `+"`setsid`"+` daemon on a pty of its own — cannot. Once asked, the request stays bound to the password; %d wrong passwords deny it | that a person answered rather than a program that has the password: a program of this user that reads the terminal or the keyboard (ptrace of the terminal emulator or the shell, a keylogger, X11 input capture), or that stands in for webcodex (a fake `+"`webcodex`"+` earlier on PATH, a shell alias, a process that stops the Runner and listens on its socket), sees the password as it is typed and can answer with it later — exactly as it could capture a sudo password. Only the local password database is checked (not LDAP or SSSD, nor the rest of the PAM stack: no faillock counting); `+"`unix_chkpwd`"+` is open to every program of the user, so the Runner adds no way to guess it |
| desktop one-time code (`+"`desktop_notification`"+`) | the login has no usable password and a desktop notification service answers | whoever answered could read this session's notifications | a program of this user that monitors the session bus or the screen |
| terminal alone (`+"`none`"+`) | no usable password and no desktop | some process of this user answered on its controlling terminal | anything about a person: a same-user program that opens a pty outside the asking program's tree can type "allow" |

"The person has a password" means `+"`passwd -S`"+` says P (usable hash). A locked login (L: a hash starting with
"!" or "*"), one without a password (NP), an answer the Runner cannot read (a non-root `+"`passwd -S`"+` refused, as
on Fedora; a login not in the local database), or a system without root-owned `+"`passwd`"+` and `+"`unix_chkpwd`"+` falls
back to the code or the terminal alone, and the approval screen says why before it asks. A `+"`passwd -S`"+` or
`+"`unix_chkpwd`"+` that cannot be started or does not finish fails the answer instead of falling back, so a program
that exhausts this user's processes cannot push an answer to a weaker factor.

## What an approval cannot stop

A pseudo-terminal proves a terminal, not a person. Without the login password or the desktop code, an approval
proves only that some process of this user answered on a terminal that was its controlling terminal.

- **A same-user program that drives a pty** — `+"`script`"+`, `+"`expect`"+`, a pty library, `+"`tmux send-keys`"+` — can run
  `+"`webcodex approve`"+` on a terminal it holds and type the answer. The descendant check below catches a program that
  does this under itself; one that starts the terminal outside its own process tree (a double fork, `+"`setsid -f`"+`,
  `+"`systemd-run --user`"+`, a tmux server) is not caught, and is only visible in the audit.
- **The same user's programs can read and disturb the desktop session.** On a session bus any process of the user
  may monitor messages (and so read the code), stop or replace the notification service (the Runner then sees no
  desktop and falls back to the terminal alone, and the audit says so), or, under X11, read the screen and inject
  input.
- **root**, and anything that can ptrace this user's processes, can do all of the above, read the Runner's memory,
  and change what it decides; same-user code that can replace webcodex (its binary, PATH, the Runner's socket) can
  collect the login password when the person types it. The password mode stops a program that types; it does not
  stop one that already owns the person's session.
- **A compromised desktop session** (a malicious notification daemon, a keylogger, injected input) sees and answers
  what the person would.
- **The MCP host's answer** proves only what the MCP client reports: a host that lies can answer "allow". Use
  `+"`--allow-attach`"+` only with a host you trust, or leave elicitation out and approve at a terminal.

## What each mitigation adds

| mitigation | what it adds | what it does not |
|---|---|---|
| the digest over everything shown | an approval covers exactly what the person read; wider needs a new one | nothing about who answered |
| the session from the server | another caller cannot ride on a grant by naming a session | a process in the same terminal session (local API) or the same MCP server shares it, by design |
| controlling-terminal check | an agent with pipes, or with a terminal it opened by path, cannot answer | a program that creates its own pty |
| login password | where the login has a usable password: a secret a program that types into terminals does not have; checked by the system's own pam_unix helper; %d wrong passwords deny the request; an answer without one is refused and not counted | a program that reads the terminal, the keyboard or the Runner, or that stands in for webcodex when the password is typed |
| desktop one-time code | where the login has no usable password, when DBUS_SESSION_BUS_ADDRESS is set and org.freedesktop.Notifications is owned there, the Runner draws %d digits from crypto/rand, shows them in a desktop notification, and approve and deny both require them: a program that drives a terminal must now also read the screen or the bus. %d wrong codes deny the request; the code is shown at most %d times per request; without a desktop, the audit records `+"`second_factor: none`"+` | a program of the same user that monitors the session bus or the screen |
| descendant check | the answering terminal is refused when a process driving it — a holder of the pty's master side, or the parent of the terminal's session leader — is the client that asked for the attach or a descendant of it or of the process that started it (the MCP host for an MCP server); the refusal says why | a terminal started outside the asking program's process tree |
| audit of the answer | each challenge, approve and deny records the request, the provider, the second factor, the terminal's device name (never its contents), its session leader, the approving process and each driver with up to 8 ancestors (pid and command name), and the processes that asked | it records, it does not prevent: a `+"`script`"+` or an interpreter in a driver chain is the sign of a forged answer |
| deny has the same checks | a program that cannot approve cannot deny the person's request either | — |

## What the person does

Run `+"`webcodex approve ID`"+` in a terminal window you opened yourself, read the "Asked by" line and the allowlist,
type your login password only for an attach you expect (as you would for sudo), and with a desktop code type the
code only from the notification. The audit trail (audit.jsonl in the state
directory) has one `+"`approval`"+` record per answer.
`, int(consent.RequestTTL.Minutes()), int(consent.IdleExpiry.Minutes()), int(consent.AbsoluteExpiry.Hours()),
		consent.MaxCodeAttempts, consent.MaxCodeAttempts, consent.MaxCodeAttempts,
		consent.CodeDigits, consent.MaxCodeAttempts, consent.MaxCodeShows)
	return b.Bytes()
}

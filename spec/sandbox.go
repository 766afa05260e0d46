package spec

import "bytes"

func init() { Register("sandbox.md", sandbox) }

// sandbox renders when owned browsers run with Chromium's sandbox and what
// running without it costs.
func sandbox() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString(`# Chromium's sandbox in owned browsers

A browser webcodex launches (owned_ephemeral, owned_managed_persistent) runs with Chromium's sandbox
whenever it can. The sandbox confines each renderer, the process that parses a page and runs its scripts:
seccomp-bpf filters its system calls and it lives in its own user, PID and network namespaces, so a page
that takes over its renderer through a browser bug still cannot open the user's files, start programs or
reach the network except through the browser process.

## When it is off

webcodex passes ` + "`--no-sandbox`" + ` only where the sandbox cannot run, decided once per Runner:

| condition | why | what webcodex does |
|---|---|---|
| the Runner runs as root (uid 0) | Chromium refuses to sandbox a browser run as root | ` + "`--no-sandbox`" + ` |
| this user cannot create user namespaces (probed by starting a program in new user, PID and network namespaces) and no setuid-root ` + "`chrome-sandbox`" + ` sits beside the browser | the namespace sandbox needs them | ` + "`--no-sandbox`" + ` |
| Chromium itself prints "No usable sandbox!" at start (an AppArmor rule, a container's seccomp filter) | the probe could not see it | the launch is retried once with ` + "`--no-sandbox`" + `, and later launches skip the sandbox |
| otherwise | | the sandbox is on |

Whenever it is off, the Runner logs the reason once, the CLI says it once on stderr when it starts a
Runner, and ` + "`webcodex status`" + ` (` + "`runner.sandbox`" + `) and ` + "`webcodex doctor`" + ` show it. Attached
browsers are the person's own and keep their own sandbox.

## What running without it costs

Without the sandbox a renderer runs with the full rights of the user who runs webcodex. A page that
exploits a renderer bug — on the open web, an owned browser with no allowlist may load any page — can
then read and write that user's files (the state directory, managed profiles with their cookies, SSH keys),
start programs and open network connections directly, bypassing the origin gate and the egress proxy,
which judge only what the browser itself requests. The origin gate, the frame boundary and the raw CDP table
still bind the agent; they do not bind code that has escaped into the operating system.

So: run webcodex as a normal user on a system with user namespaces (most desktop Linux distributions),
and keep owned browsers that must run unsandboxed on an allowlist of origins you trust.
`)
	return b.Bytes()
}

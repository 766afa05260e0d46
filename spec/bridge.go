package spec

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/webcodex/webcodex/extension/bridge"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/lease"
)

func init() { Register("bridge-protocol.md", bridgeProtocol) }

// bridgeProtocol renders the extension bridge's wire protocol from the
// constants and tables the code enforces.
func bridgeProtocol() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "# Extension bridge: wire protocol version %d\n\n", wire.Version)
	b.WriteString("The MV3 extension (extension/) talks to its Native Messaging host (`webcodex-bridge-host`) over Chrome's stdio; the host relays each frame, unchanged, to the Runner's loopback-only TCP listener and back. A connection whose client socket another user owns (the kernel's socket table, /proc/net/tcp, names the owner: loopback TCP has no peer credentials) is closed at accept, before it holds a peer slot, as the local API closes another uid's connection. The host holds no policy: what a frame may say is judged by the Runner (package extension/bridge) and, for what it forwards, by the extension.\n\n")
	b.WriteString("## Frames\n\n")
	b.WriteString("A frame is a 32-bit length and a body: **native-endian** on Chrome's stdio, **little-endian** on the Runner's TCP. The length is checked against the frame's limit from its header alone, before the body is allocated. A socket read timeout keeps the partial header or body: a truncated body is never read as a new header. A length of zero, a length above the limit, a body that is not strict I-JSON or not a message of this protocol fails closed: the peer is closed.\n\n")
	b.WriteString("A body is strict I-JSON (RFC 7493), each rule checked explicitly because Go's encoding/json accepts its violation: UTF-8 only, no byte order mark; no duplicate member names, nor names equal under case folding; no lone surrogate escapes; every number finite as a double; ids integers within 2^53-1; nesting at most " + fmt.Sprint(wire.MaxDepth) + "; unknown members refused. Member names are compared exactly as this page spells them (encoding/json alone matches them case-insensitively): a handshake with `\"T\"` or `\"Token\"` is refused.\n\n")
	b.WriteString("## Limits\n\n| what | bound |\n|---|---|\n")
	rows := [][2]string{
		{"command or control (Runner to extension)", kib(wire.MaxCommand)},
		{"response (extension to Runner)", kib(wire.MaxResponse) + "; a response-sized frame is admitted only while a command of that peer awaits one, else the event limit applies"},
		{"event, share, revoke, detach, handshake", kib(wire.MaxEvent) + "; the extension replaces a larger event by `" + wire.DiscardedMethod + "`"},
		{"peers (connections, unverified handshakes included)", fmt.Sprint(wire.MaxPeers) + "; a newcomer takes the slot of the oldest unfinished handshake (its handshake is refused), so a client of the same user holding every slot with unfinished handshakes cannot keep the host out; with every slot verified it is closed at once"},
		{"handshake", wire.HandshakeTimeout.String() + " from accept to an authenticated first frame"},
		{"live offers", fmt.Sprintf("%d, each for %s", lease.MaxLiveOffers, lease.OfferTTL)},
		{"routes (attached tabs)", fmt.Sprint(wire.MaxChannels)},
		{"commands in flight per peer", fmt.Sprint(wire.MaxQueuedCommands) + "; the next one closes the peer and invalidates its leases"},
		{"queued response and event bytes, all peers", kib(wire.MaxQueuedBytes) + "; a response past it closes its peer, an event past it makes only its route lossy"},
		{"queued events per route", fmt.Sprint(bridge.DefaultRouteEvents) + "; past it the route is lossy: one loss marker, events discarded until drained"},
		{"token", fmt.Sprintf("%d bits from crypto/rand, in a 0600 record under browser/extension in the state root; never sent to the extension, logged or returned", wire.TokenBytes*8)},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	b.WriteString("\n## Messages\n\nThe member `t` names the kind; which side may send it is fixed.\n\n| kind | from | carries |\n|---|---|---|\n")
	for _, k := range []struct{ kind, from, what string }{
		{string(wire.KindAuth), "native host (first frame on TCP)", "v, token, instance, origin; checked in constant time against the rendezvous record; never relayed"},
		{string(wire.KindReady), "Runner", "v: the peer is authenticated (relayed to the extension)"},
		{string(wire.KindShare), "extension", "tab, target, url, title: the person pressed Share"},
		{string(wire.KindOffered), "Runner", "tab, offer: the offer id minted for it"},
		{string(wire.KindEnded), "Runner", "tab, reason offer_expired (with the offer) or offer_refused (16 offers wait)"},
		{string(wire.KindControl), "Runner", "id, op, ch (and offer, tab for attach)"},
		{string(wire.KindCommand), "Runner", "id, ch, method, params: a page command of the table below"},
		{string(wire.KindResponse), "extension", "id and exactly one of result and error"},
		{string(wire.KindEvent), "extension", "ch, method, params: a forwarded event, projected"},
		{string(wire.KindRevoke), "extension", "tab: the person pressed Revoke (or closed an offered tab)"},
		{string(wire.KindDetached), "extension", "tab, ch, reason: one of the fixed codes below"},
	} {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.kind, k.from, k.what)
	}
	b.WriteString("\nThe closed bridge controls: ")
	var ops []string
	for _, o := range wire.Ops {
		ops = append(ops, "`"+string(o)+"`")
	}
	b.WriteString(strings.Join(ops, ", ") + ". There is no control that closes the browser, and `Browser.close` is never forwarded. An attach of an offer whose tab the caller's allowlist does not cover is refused (`origin_denied`) without naming the tab's origin, as discover lists such an offer by its id alone.\n\n")
	b.WriteString("Detach reasons (no reason permits reattaching; an unknown Chrome reason is `" + wire.ReasonDetached + "`): ")
	b.WriteString("`" + strings.Join(wire.Reasons, "`, `") + "`.\n\n")
	b.WriteString("## Forwarded events\n\nThe extension forwards only these, each projected onto the fields the Runner reads; bodies, headers, cookies, object previews and stacks never leave the browser.\n\n")
	b.WriteString("- diagnostic (seven): `" + strings.Join(wire.DiagnosticEvents, "`, `") + "`\n")
	b.WriteString("- page state the fences need: `" + strings.Join(wire.StateEvents, "`, `") + "`\n\n")
	b.WriteString("## Page commands\n\nA shared tab's session may send only these (the raw CDP table's shape, narrower: no Browser, Target, Storage, Fetch or cookie command). A parameter marked =false may only be false. Browser-level commands (Target.getTargets, attachToTarget, createTarget, closeTarget) are answered by the Runner from the controls above. Cross-site iframes are never attached through the bridge, so their content is out of reach.\n\n| method | parameters | why |\n|---|---|---|\n")
	for _, c := range bridge.CommandTable() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Method, strings.Join(c.Params, " "), c.Why)
	}
	return b.Bytes()
}

func kib(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

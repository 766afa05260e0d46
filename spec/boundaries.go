package spec

import (
	"bytes"

	"github.com/webcodex/webcodex/cdp"
)

func init() { Register("boundaries.md", boundaries) }

// boundaries renders what each boundary enforces and what it does not
// cover. It is prose, kept beside the code it describes so a change to a
// boundary changes this page in the same commit.
func boundaries() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString(boundariesText)
	return b.Bytes()
}

var boundariesText = `# Boundaries

What an agent driving a browser through webcodex cannot do, boundary by boundary, and what each
boundary does not cover. Every boundary has tests that perform the attack against real Chromium
with three origins served by the test: one allowed (` + "`http://127.0.0.1:A`" + `), one denied on the same
site (` + "`http://127.0.0.1:B`" + `, another port) and one denied cross-site (` + "`http://localhost:C`" + `); each
denied page holds a secret the tests assert never reaches the agent. Approvals of an attach have
their own page: [threat-model.md](threat-model.md).

## The origin gate: what "allowed" means

An allowlist entry is ` + "`[scheme://]host[:port]`" + `; it covers its host and subdomains at a dot boundary,
IP entries match exactly, the scheme must match (no scheme: http and https). An owned browser with
no allowlist is the open web (http, https); an attached browser with no allowlist shows nothing.
The gate judges the URL acted on — a navigation's destination, otherwise the live URL read from the
page — and every frame on its own origin. A refusal names the requested origin, never the list.

**Cookies do not separate by port.** Two origins on one host (` + "`127.0.0.1:A`" + ` and ` + "`127.0.0.1:B`" + `) share
that host's cookies (RFC 6265 ignores ports). The gate keeps the agent from reading or acting on the
denied port's pages, and an owned browser never sends them a request (below), but a cookie set by
the allowed page is a cookie of the whole host, as it is in any browser.

## Frames of denied origins are absent for every verb

- Snapshots and refs: a frame whose origin the gate denies is not entered (its isolated world is never
  created), so it has no outline and no refs.
- Screenshots: the boxes of denied frames are painted over before the image leaves the Runner; the
  frame set is read again after the capture and a capture during which it changed is discarded; a
  view transition's snapshot, which can show frames already removed, is waited out or refused (below).
- Keys: a key press without a target is refused when focus is inside a denied frame.
- Pointer input: every mouse dispatch is hit-tested at its point; a point that lands in a denied frame
  is refused. The coordinate tools (browser_mouse_*_xy, down, up, wheel) are judged the same way at
  every point they touch, before anything is sent: a drag at its start and its end, a press, release
  or wheel where the pointer rests, judged again on the page as it is now.
- PDF (browser_pdf_save): a page that holds any frame of a denied origin is refused, not printed with
  the frame blank. A PDF cannot be masked afterwards as a screenshot is (its text and links would
  carry what the frame shows), and print styles can show a frame that is hidden or zero-sized on
  screen, so every frame the browser knows counts, visible or not, and so does every frame an allowed
  document shows that cannot be named. A frame attached or detached while it printed discards the
  PDF. Only a browser webcodex launched prints; the file goes into the session's output directory.
- Dialogs: a JavaScript dialog opened by a denied document is reported by its type only, never its
  text, and is never answered (that would be input to it).
- Raw CDP: under any allowlist the stricter tier of [cdp-policy.md](cdp-policy.md) applies — no
  command takes a node, object or context id, nothing plants code for later documents, nothing
  serializes the page with its frames, and raw ` + "`Input.*`" + ` is withheld.

## No painted copy of a denied frame

A screenshot masks the boxes where denied frames are. A renderer can also copy what a frame painted
and show the copy elsewhere, or after the frame is gone. Every such path found in Chromium 156, and
how each is closed (for owned and attached browsers alike unless said):

- **View transitions** — ` + "`document.startViewTransition`" + ` (same document), ` + "`element.startViewTransition`" + `
  (scoped, shipped in 156) and ` + "`@view-transition { navigation: auto }`" + ` (cross-document, same-origin
  navigations) draw a snapshot of the old rendering, frames included, after the frames are removed.
  No switch turns them off: ` + "`--disable-blink-features=ViewTransition`" + ` leaves both
  ` + "`startViewTransition`" + ` functions defined (measured), and 156 has no runtime feature for scoped or
  cross-document ones. So every capture detects them, in every allowed document (same-origin frames
  and allowed cross-origin frames included): an element matching ` + "`:active-view-transition`" + ` (the
  root for a document transition, the scope for a scoped one) in the document, its open shadow roots
  and its closed ones (found through ` + "`DOM.describeNode`" + ` with pierce and handed to the surface's world),
  or an animation of a ` + "`::view-transition`" + ` pseudo-element. A check runs in each sample and at every
  animation frame between the two samples of a capture, so one that starts and ends during the capture is seen.
  A transition found before the capture is waited out for at most 3 s, then the screenshot is refused
  (` + "`origin_denied`" + `); one seen during the capture discards it (retried, then refused). A full-page
  capture resizes the viewport, which makes Chromium skip a running transition (measured). Tested:
  page-driven and agent-driven (evaluate) transitions of the document, of a scope, of a scope in an
  open and in a closed shadow root, and a cross-document one, each holding the snapshot for a minute
  (the browser's own capture shows the denied pages; every screenshot is refused or shows none of
  them), and a short one waited out. Not covered: closed shadow roots inside same-origin child
  frames' documents (only the frame document the surface's world lives in is described); a document
  too large to describe in one CDP message (its closed roots go unchecked); a document with more than
  256 closed shadow roots is taken to show a transition (refused); a transition without animations
  in a same-origin child frame's closed shadow root without animations, begun and ended within one capture.
- **Backdrop filters, CSS filters, reflections** — an element with ` + "`backdrop-filter`" + ` over a masked frame
  is masked too; ` + "`filter`" + ` lengths widen a mask; an SVG filter or ` + "`-webkit-box-reflect`" + ` on a denied frame
  or its ancestors refuses the screenshot (tested in the mask's own attack tests).
- **` + "`element()`" + ` / ` + "`-moz-element()`" + `** (paint an element as an image): not in Chromium 156
  (` + "`CSS.supports('background-image: element(#a)')`" + ` is false, measured).
- **Canvas** — ` + "`drawImage`" + ` takes no frame; a cross-origin image or video taints the canvas. HTML-in-canvas
  (` + "`drawElementImage`" + `, ` + "`layoutsubtree`" + `) is not in Chromium 156 (measured undefined).
- **Screen and tab capture** (` + "`getDisplayMedia`" + `, Region and Element Capture, ` + "`captureStream`" + ` of a
  tab) needs the person's choice in a picker; raw ` + "`Page.startScreencast`" + ` and ` + "`Page.captureScreenshot`" + ` are
  withheld under an allowlist. Not tested here.
- **Picture-in-picture and document picture-in-picture** draw in a window of their own, which the
  page's screenshot does not capture; a frame moved there is gone from the page. Not tested here.
- **Print and PDF**: raw ` + "`Page.printToPDF`" + ` and ` + "`Page.captureSnapshot`" + ` are withheld under an allowlist; the
  PDF route refuses a page holding any denied frame, and waits out or refuses a view transition as a
  screenshot does (tested).
- **Paint holding and the back/forward cache**: a restored page's frames are sampled like any
  frame. Whether a capture taken while a navigation holds the old page's last frame on screen can
  copy that frame is not tested.

## Diagnostics carry their origin

Every console message, exception, log entry and network request is tagged with the origin of the
document that produced it (a request also with its own URL's origin). Entries of denied origins are
judged when they are read, so they are never returned — not while framed, not after the page
navigates away and back, not through ` + "`probe`" + `. A ` + "`wait`" + ` or ` + "`probe`" + ` on a page that leaves the
allowlist ends at once with the same refusal and no page data, whether or not the denied page holds
what was waited for.

## No time-of-check/time-of-use

` + "`read`" + `, ` + "`eval`" + `, ` + "`snapshot`" + `, ` + "`screenshot`" + ` and every action run against the document that was
authorized (its execution context and document nonce) and check after the call that it is still that
document, still allowed; otherwise the result is discarded and the call refused. Evaluate runs in the
authorized document's context, so it cannot run in a document that replaced it.

## Owned browsers have no open door

A browser webcodex launches speaks CDP over ` + "`--remote-debugging-pipe`" + ` (file descriptors 3 and 4 of
the browser process): it listens on no TCP port, writes no ` + "`DevToolsActivePort`" + `, and no other
process — of this user or another — finds a listener to connect to. Not covered: a process of the
same user that may ptrace the browser can open the pipe's ends under ` + "`/proc/PID/fd`" + ` and speak on it;
that is the same power as reading and writing the browser's memory, which no transport can take
away from it. Attaching to a person's browser uses its own endpoint, after proving who owns it.

## Denied origins are unreachable in owned browsers

With an allowlist, an owned browser is denied a way out in three layers, each judged by the same
gate:

1. Request interception on the browser target pauses every request of every page, frame, popup
   and worker before it leaves the browser and fails those whose URL the gate denies: navigations,
   each redirect hop, form posts, fetch/XHR, subresources and iframes.
2. The browser's only route out is the Runner's SOCKS5 egress proxy (` + "`--proxy-server`" + `, with loopback
   no longer bypassed): every connection it opens — WebSocket handshakes too, which request
   interception never sees — is judged on its destination host and port before it is dialed, and a
   denied one is refused without a packet reaching it. Names are resolved by the proxy, after the
   verdict: a denied name is never looked up.
3. **The browser runs in a network namespace of its own** whose only interface is its own loopback,
   and whose one way out is the proxy's listener inside it (the Runner holds that socket; the
   browser's first process is webcodex itself, which brings the loopback up, binds the listener,
   hands it over and becomes the browser). This does not depend on Chromium honouring any switch:
   no packet of any protocol — WebRTC's STUN, TURN over UDP or TCP, ICE checks to host candidates a
   page names, QUIC, HTTP/3, WebTransport (which sends QUIC even with ` + "`--disable-quic`" + `), DNS queries
   whose names carry data — can reach another host, this host's own loopback or any resolver. As
   root the namespace is made alone; as another user it comes with a user namespace that maps only
   that user's uid and gid to themselves, and Chromium's own sandbox runs nested inside it.
   ` + "`webcodex doctor`" + ` says whether this containment is in force ("network containment").

Where the system refuses namespaces (no unprivileged user namespaces, a seccomp filter), layer 3 is
absent and doctor warns: the browser is then held to the proxy by switches only
(` + "`--force-webrtc-ip-handling-policy=disable_non_proxied_udp`" + `, ` + "`--disable-quic`" + `). The attacks of the
test above found nothing leaving in that mode, but an independent attack saw WebRTC's STUN and TURN
datagrams (with a TURN ` + "`USERNAME`" + ` the page chose) reach a denied port despite the switches (Chromium
156): in that mode what holds is only what Chromium honours. The proxy then listens on a loopback port, but carries
connections only to allowed destinations, so another local process gains nothing by using it.

A denied origin is therefore unreachable, not only invisible: its server sees nothing, by TCP or
UDP. Tested in real Chromium against denied listeners that log every accept and every datagram,
with an open-web browser as a control that does reach them.

In an attached browser nothing is blocked and nothing is contained: the person's own browsing is
theirs, with their browser's own network. Its pages can reach any host by any protocol, as they
could before webcodex attached. What the agent does there is bounded by the frame rules above —
nothing it types or clicks is delivered to a denied document or frame, and nothing a denied
document holds is returned — but a page the agent is allowed to drive can still send what it has
to wherever it likes.

## A shared Runner keeps each browser's creator's boundaries

A client of the Runner daemon that declares a boundary (` + "`webcodex mcp --runner`" + ` declares its
canonical ` + "`--allow`" + ` list, its ` + "`--allow-evaluate`" + ` switch and its scopes on every call) sees only the
browsers created under exactly the same boundary; every other browser and its pages are refused as
unknown ids and are not listed. A narrower client therefore cannot use a wider browser, and a wider
client cannot widen a narrower one. The person at a terminal (the CLI, which declares no boundary)
sees every browser, each still under its own allowlist and evaluate switch. Decision: "invisible"
rather than "intersection on every call", because an intersection would have to be applied by every
verb, frame rule and diagnostic read, and one missed site would widen a boundary; invisibility is
enforced at one admission point before any operation runs.

## MCP sessions own their browsers

Finer than the creator boundary and applied with it: an MCP session (an embedded server, or a
` + "`webcodex mcp --runner`" + ` server, which names its session on every call) sees and acts only on the
browsers it launched or attached, or one it adopted by id (` + "`browser_adopt`" + `: only a browser no session
owns, kept by a session that ended, under the same creator boundary). Nothing falls back to another
session's browser or page; another session's ids are refused as unknown ones. A session id is bound to
the process that first used it (PID and start time), so another process of the same user cannot speak
for it. When the session ends (its server says so, or the Runner sees its process gone) the browsers it
launched are closed, unless it asked to keep them, and those it attached are detached. The audit trail
names the session and the tool of every call, in both modes. The person at a terminal sees every
browser.

## What a hostile or slow page can cost

Only itself. A message from the browser above the ` + kib(cdp.DefaultMaxMessageSize) + ` limit (a page logging a longer string, an
evaluation returning one) is read as a stream and discarded, never closing the one connection to the
browser: the command whose answer it was is refused with ` + "`limit_exceeded`" + `, an event becomes a
` + "`diagnostic_events_discarded`" + ` marker. Every call is bounded below its client's deadline and ends in a
typed refusal (` + "`timeout`" + `, or ` + "`outcome_unknown`" + ` for an effect that may have happened). A script that
does not yield is terminated (` + "`Runtime.terminateExecution`" + `) only when its browser answers and its page
does not, so the tab works again and a stopped browser's next script is never hit.

## The local API

The Runner's unix socket is 0600 in a 0700 state root. A connection from another uid is closed at
accept, before a byte of it is read. At most 64 connections are held; a newcomer beyond that evicts
the oldest connection that is not running a call (still sending its request, or idle), so connections
that trickle their bodies cannot lock callers out, and a running call is never cut for a newcomer. A
request must arrive whole within 15 seconds; an idle keep-alive connection is closed after 60.

## Uploads

Files come only from the one directory the owner named, after lexical and real-path confinement. A
file with more than one hard link, or on another device than that directory, is refused: a hard link
or a bind mount is how a file from elsewhere appears inside the directory. Only a regular file is
sent: a FIFO, a socket, a device, a ` + "`/proc`" + ` or ` + "`/sys`" + ` file (by path or through a link) is refused at
once, and the file is opened without following a link and without blocking, so nothing swapped in
can hold the Runner. The browser never reads the path that was checked: the open file, if it is still
the very file that was checked, is copied (at most 1 GiB) into a private staging directory of the
page, and the browser is given the copy. Replacing the name afterwards, or between the check and the
copy, changes nothing the page can read. The copies go when the page's surface closes.

## Downloads

An owned browser saves downloads only into its jail, a private directory of its own, under the
name of the browser's id for each; the name a site suggests is shown only in the listing, after
normalization: no directory part, slash and backslash look-alikes (` + "`∕ ／ ⁄ ⧸ ＼ ∖`" + ` …) turned into
` + "`_`" + `, control and format characters (bidirectional overrides and isolates, zero-width marks) removed,
no leading dot, at most 200 bytes. The same name is used when a download is saved.

Bounds (one download: 256 MiB unless configured; the jail: four times that). Chromium writes the
file itself, so webcodex enforces them by watching the browser's progress reports and cancelling:

- A download is admitted only while a whole bound for every download in progress, plus what the
  completed ones hold, still fits the jail's bound: at most four are written at once. One that does
  not fit is cancelled as it starts (` + "`jail_full`" + `).
- An admitted download is cancelled (` + "`over_cap`" + `) at the first progress report past its bound, or as
  soon as its file is seen past it (the jail's files are measured every 2 ms while a download is
  written), and its partial file removed; while the files together are past the jail's bound, the
  largest download in progress is cancelled (` + "`jail_full`" + `).

What holds on disk is therefore not "never more than the bound": between the report that passes the
bound and the cancel, Chromium keeps writing, and a download cancelled at its start may have written
before its cancel lands. Measured with eight parallel endless downloads from a local server under a
4 MiB bound (TestParallelDownloadsAreBounded logs it), the largest file seen was 1.2× its bound
and the jail 0.4× its bound (one run; 2.3× and 1.8× before the files were measured). Every partial
file is removed when its cancel lands, and the whole jail when the browser closes. An attached
browser's downloads are the person's own: neither redirected, listed nor bounded.
`

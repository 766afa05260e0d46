// Command mutate is the mutation check: it applies seeded bugs to the
// machines and their owners one at a time, in a temporary copy of the
// repository (never the working tree), runs the tests of the packages the
// bug lives in, and reports which test kills each bug and the kill rate.
//
//	go run ./scripts/mutate                 # every mutation, on HEAD
//	go run ./scripts/mutate -only ledger    # the mutations whose name matches
//	go run ./scripts/mutate -worktree       # on the working tree instead of HEAD
//	go run ./scripts/mutate -runs 3         # each mutation three times (rapid is random)
//	go run ./scripts/mutate -since HEAD~1   # only the mutations in directories changed since HEAD~1 (CI)
//
// It exits 1 unless every chosen mutation is killed (a stale one, whose
// text is gone, fails too: the seeded bugs must follow the code).
//
// A mutation whose text is no longer in its file is reported as stale, not
// as survived, and left out of the rate. spec/ drift is not counted as a
// kill (TestSpecMatchesCode fails on any change to a declaration).
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// patch replaces Old, which must occur exactly once, with New.
type patch struct{ Old, New string }

type mutation struct {
	Name    string
	Class   string // the seeded-bug class it stands for
	File    string
	Patches []patch
	Pkgs    []string // the packages whose tests must kill it
}

// Declaration mutations also run ./spec: its edge coverage test fails
// when a declared edge a real test took (or one it explains) is gone.
// spec/ drift alone is not a kill (see driftOnly).
var (
	consentPkgs   = []string{"./consent", "./spec"}
	reconnectPkgs = []string{"./reconnect", "./spec"}
	leasePkgs     = []string{"./lease", "./spec"}
	// The MCP session's declaration: the server's own package builds the
	// whole binary for its tests, so the table beside the declaration kills.
	mcpsessionPkgs = []string{"./mcpsession", "./spec"}
	// The download machine: its table beside the declaration kills (the
	// jail's real-browser tests are the Runner's, minutes long).
	netguardPkgs = []string{"./netguard", "./spec"}
	// The checker's own bugs: its self-tests (seeded declarations at every
	// step, the pinned toy exploration) must kill them without the machines.
	fsmPkgs = []string{"./fsm"}
	// The operation table's own test judges every declaration.
	opPkgs = []string{"./cmd/internal/op"}
	// The bridge's machines (bridge_peer, bridge_route) and the offers it
	// consumes (extension_offer): the fake extension's tests must kill them.
	bridgePkgs = []string{"./extension/bridge", "./spec"}
	offerPkgs  = []string{"./lease", "./extension/bridge", "./spec"}
)

// driftOnly are the tests that fail on any change to a declaration because
// spec/ is generated from it: a reviewer would see the diff, but they say
// nothing about the bug, so a mutation they alone fail survives.
var driftOnly = []string{"TestSpecMatchesCode", "TestDriftIsDetected"}

var mutations = []mutation{
	{"runner: a stopped Runner still registers browsers", "lifecycle answered beside the machine", "cmd/internal/runner/runner.go",
		[]patch{{"func (r *Runner) serving() bool { return r.life.State() == lifetime.RunnerServing }", "func (r *Runner) serving() bool { return true }"}},
		[]string{"-run", "TestRunnerMachine", "./cmd/internal/runner"}},
	{"runner machine: idle exit edge removed", "removed transition (not in the seed)", "lifetime/runner.go",
		[]patch{{"\t\t{From: RunnerServing, On: RunnerIdle, To: RunnerDraining, Effect: EffectCloseBrowsers},\n", ""}}, []string{"./lifetime", "./spec"}},
	{"consent: seed transition pressed -> socket_ready removed", "removed seed transition", "consent/spec.go",
		[]patch{{"\t\t{From: ConsentPressed, On: HandshakeComplete, To: SocketReady, Effect: EffectReprove, Count: \"connections\"},\n", ""}}, consentPkgs},
	{"reconnect: seed transition connecting -> prompt observed removed", "removed seed transition", "reconnect/spec.go",
		[]patch{{"\t\t{From: ConnectingPending, On: PromptObserved, To: PromptObservedState, Guard: exactCandidate},\n", ""},
			{"{From: ConnectingPending, On: PromptObserved, To: Ambiguous, Guard: fsm.Not(exactCandidate)}", "{From: ConnectingPending, On: PromptObserved, To: Ambiguous}"}}, reconnectPkgs},
	{"consent: dismissal while pressed removed", "removed transition (not in the seed)", "consent/spec.go",
		[]patch{{"\t\t{From: ConsentPressed, On: Dismissed, To: ConsentDismissed},\n", ""}}, consentPkgs},
	{"reconnect: unclear prompt after observing removed", "removed transition (not in the seed)", "reconnect/spec.go",
		[]patch{{"\t\t{From: PromptObservedState, On: PromptUnclear, To: Ambiguous},\n", ""}}, reconnectPkgs},
	{"consent: approve without the expiry guard", "removed guard", "consent/spec.go",
		[]patch{{"{From: ApprovalRequired, On: Approve, To: GrantActive, Guard: unexpired, Effect: EffectMintGrant},\n\t\t{From: ApprovalRequired, On: Approve, To: Refused, Guard: fsm.Not(unexpired)},",
			"{From: ApprovalRequired, On: Approve, To: GrantActive, Effect: EffectMintGrant},"}}, consentPkgs},
	{"consent: re-proof on the live socket unguarded", "removed guard", "consent/spec.go",
		[]patch{{"{From: SocketReady, On: Reprove, To: EndpointReproved, Guard: ownerMatches},", "{From: SocketReady, On: Reprove, To: EndpointReproved},"}}, consentPkgs},
	{"external attachment: teardown kills under a new name", "forbidden effect under a new name", "lease/attachment.go",
		[]patch{{"{From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: EffectDetachDebugger},", "{From: AttachReady, On: AttachClose, To: AttachReleasing, Effect: \"terminate_browser\"},"}}, leasePkgs},
	{"owned attachment: closing a lost browser releases nothing", "teardown outside the machine (never run)", "lease/attachment.go",
		[]patch{{"{From: AttachLost, On: AttachClose, To: AttachClosed, Effect: EffectRelease},", "{From: AttachLost, On: AttachClose, To: AttachClosed},"}}, leasePkgs},
	{"attachment: teardown stops in releasing", "teardown outside the machine (never run)", "lease/attachment.go",
		[]patch{{"AttachLost: AttachClose, AttachReleasing: AttachRelease,\n\t}\n\t// DetachTeardown", "AttachLost: AttachClose,\n\t}\n\t// DetachTeardown"}}, leasePkgs},
	{"attachment: a torn-down attachment is torn down again", "teardown fired again after its end", "lease/attachment.go",
		[]patch{{"AttachLost: AttachClose, AttachReleasing: AttachRelease,\n\t}\n\t// DetachTeardown", "AttachLost: AttachClose, AttachReleasing: AttachRelease, AttachClosed: AttachRelease,\n\t}\n\t// DetachTeardown"}}, leasePkgs},
	{"grant: idle expiry x60", "TTL x60", "consent/grant.go",
		[]patch{{"IdleExpiry     = 30 * time.Minute", "IdleExpiry     = 30 * time.Hour"}}, consentPkgs},
	{"approval request: lifetime x60", "TTL x60", "consent/approval.go",
		[]patch{{"const RequestTTL = 5 * time.Minute", "const RequestTTL = 5 * time.Hour"}}, consentPkgs},
	{"offer: lifetime x60", "TTL x60", "lease/offer.go",
		[]patch{{"OfferTTL      = 10 * time.Minute", "OfferTTL      = 10 * time.Hour"}}, leasePkgs},
	{"consent: press delay x60", "TTL x60", "consent/ui.go",
		[]patch{{"const MinPressDelay = time.Second", "const MinPressDelay = time.Minute"}}, consentPkgs},
	{"scope: press_prompt left out of the digest", "scope field left out of a digest", "consent/approval.go",
		[]patch{{"b, _ := json.Marshal(s.Canonical())", "c := s.Canonical()\n\tc.PressPrompt = false\n\tb, _ := json.Marshal(c)"}}, consentPkgs},
	{"grant: usable at its absolute expiry", "grant usable at its absolute expiry", "consent/grant.go",
		[]patch{{"AbsoluteLeft: now.Before(g.absolute)", "AbsoluteLeft: !now.After(g.absolute)"}}, consentPkgs},
	{"grant: usable at its idle expiry", "grant usable at its absolute expiry", "consent/grant.go",
		[]patch{{"IdleLeft: now.Before(g.lastUsed.Add(IdleExpiry))", "IdleLeft: !now.After(g.lastUsed.Add(IdleExpiry))"}}, consentPkgs},
	{"broker: newer grant leaves the older live", "newer grant not revoking the older", "consent/approval.go",
		[]patch{{"\t\told.Revoke()\n", "\t\t_ = old\n"}}, consentPkgs},
	{"gates: reopen forgets a draining gate (two holders)", "two holders through reopen-while-draining", "lease/gate.go",
		[]patch{{"\t\tif k.Browser == browser && gt.owner.State() == GateClosed {\n\t\t\tgt.fire(GateReopen)\n\t\t}",
			"\t\tif k.Browser == browser && gt.owner.State() == GateClosed {\n\t\t\tgt.fire(GateReopen)\n\t\t} else if k.Browser == browser {\n\t\t\tdelete(g.gates, k)\n\t\t}"}}, leasePkgs},
	{"gates: a ticket from before the reconnect still dispatches", "two holders through reopen-while-draining", "lease/gate.go",
		[]patch{{" || t.gt.owner.Counter(gateGeneration) != t.gen {", " {"}}, leasePkgs},
	{"reconnect: the flight dies with the leader's context", "joiners aborted on leader cancel", "reconnect/machine.go",
		[]patch{{"context.WithCancelCause(context.WithoutCancel(ctx))", "context.WithCancelCause(ctx)"}}, reconnectPkgs},
	{"ledger: trim forgets outcome_unknown", "ledger trim forgetting outcome_unknown", "lease/ledger.go",
		[]patch{{"case EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled:", "case EffectAcked, EffectFailed, EffectReconciledYes, EffectReconciledNo, EffectCancelled, EffectUnknown:"}}, leasePkgs},
	{"reconnect: invalidation dropped from the declaration", "dropped invalidation", "reconnect/spec.go",
		[]patch{{"{From: GenerationIncremented, On: Invalidate, To: CapabilitiesInvalid, Effect: EffectInvalidate},", "{From: GenerationIncremented, On: Invalidate, To: CapabilitiesInvalid},"},
			{"\n\t\tEffectInvalidate, EffectReopenGates, EffectRevokeGrant},", "\n\t\tEffectReopenGates, EffectRevokeGrant},"}}, reconnectPkgs},
	{"reconnect: invalidation dropped by the owner", "dropped invalidation", "reconnect/machine.go",
		[]patch{{"\tc.Hooks.Invalidate(c.Gens.Advance())\n\treturn ReopenGates, nil", "\tc.Gens.Advance()\n\treturn ReopenGates, nil"}}, reconnectPkgs},
	{"reconnect: retry dial enabled at its budget", "unguarded retry edge", "reconnect/spec.go",
		[]patch{{`fsm.Below[Facts]("attempts", MaxAttempts), Effect: EffectDial`, `fsm.Below[Facts]("attempts", MaxAttempts+1), Effect: EffectDial`},
			{`fsm.AtLeast[Facts]("attempts", MaxAttempts)}`, `fsm.AtLeast[Facts]("attempts", MaxAttempts+1)}`}}, reconnectPkgs},
	{"reconnect: a failed attempt retries at once, around the budgeted dial", "unguarded retry edge", "reconnect/spec.go",
		[]patch{{"edge{From: s, On: DialFailed, To: Revalidated, Effect: EffectRetry, Count: \"retries\"},", "edge{From: s, On: DialFailed, To: ConnectingPending, Effect: EffectRetry, Count: \"retries\"},"}}, reconnectPkgs},
	{"reconnect: budget raised", "unguarded retry edge", "reconnect/states.go",
		[]patch{{"const MaxAttempts = 3", "const MaxAttempts = 4"}}, reconnectPkgs},
	{"reconnect: an unclear press dials again", "effect fired twice on two edges", "reconnect/spec.go",
		[]patch{{"{From: Pressed, On: PromptUnclear, To: Ambiguous},", "{From: Pressed, On: PromptUnclear, To: Ambiguous, Effect: EffectDial},"}}, reconnectPkgs},
	// The property checker itself, each placed where the self-tests before
	// issue 27 (one seeded bug one step before it is caught) passed it.
	{"fsm: bounded looks one transition too late", "unbounded loop", "fsm/properties.go",
		[]patch{{"next.transient > s.MaxTransient {", "next.transient > s.MaxTransient+1 {"}}, fsmPkgs},
	{"fsm: a budget checked one unit too late", "budget one too large", "fsm/properties.go",
		[]patch{{"next.counters[name] > budget {", "next.counters[name] > budget+1 {"}}, fsmPkgs},
	{"fsm: single flight counts from the third leader", "second leader", "fsm/properties.go",
		[]patch{{"next.flights > 1 {", "next.flights > 2 {"}}, fsmPkgs},
	{"fsm: a pause in the flight forgets its leader", "second leader", "fsm/properties.go",
		[]patch{{"\tif s.IsStable(want.To) {\n\t\tnext.flights = 0", "\tif step.Effect != s.Flight {\n\t\tnext.flights = 0"}}, fsmPkgs},
	{"fsm: an arrival on an uncounted connection passes", "missing invalidation", "fsm/properties.go",
		[]patch{{"if gen <= at.liveGen {", "if gen < at.liveGen {"}}, fsmPkgs},
	{"fsm: revocation remembered one step only", "re-armed revocation", "fsm/properties.go",
		[]patch{{"} else if at.revoked {", "} else if slices.Contains(s.Revoked, at.model) {"}}, fsmPkgs},
	{"fsm: no replay remembers only the latest effect", "duplicate effect (replay)", "fsm/properties.go",
		[]patch{{"\t\tfor id := range at.dispatched {\n\t\t\tnext.dispatched[id] = true\n\t\t}\n", ""}}, fsmPkgs},
	{"fsm: exploration one level too shallow", "exploration depth", "fsm/explore.go",
		[]patch{{"if n.depth >= res.Depth {", "if n.depth >= res.Depth-1 {"}}, fsmPkgs},
	{"fsm: exploration key forgets the transient run", "exploration key", "fsm/properties.go",
		[]patch{{`"%s|%s|%d|%d|%d|%t|%d|", at.model, at.flight, at.transient,`, `"%s|%s|%d|%d|%t|%d|", at.model, at.flight,`}}, fsmPkgs},
	{"fsm: exploration key forgets the flight's leaders", "exploration key", "fsm/properties.go",
		[]patch{{`at.revoked, at.flights)`, `at.revoked, 0)`}}, fsmPkgs},
	{"fsm: validate misses duplicates of effectless edges", "duplicate edge", "fsm/validate.go",
		[]patch{{"\t\tseen[k] = true\n", "\t\tseen[k] = e.Effect != NoEffect\n"}}, fsmPkgs},
	{"fsm: validate skips the allowlist on the initial state's edges", "effect outside the allowlist", "fsm/validate.go",
		[]patch{{"if e.Effect != NoEffect && !slices.Contains(s.Effects, e.Effect) {", "if e.Effect != NoEffect && e.From != s.Initial && !slices.Contains(s.Effects, e.Effect) {"}}, fsmPkgs},
	{"fsm owner: an effect's error ignored beside a next trigger", "owner path", "fsm/owner.go",
		[]patch{{"next, err := o.effects[step.Effect](ctx, step)\n\t\tif err != nil {", "next, err := o.effects[step.Effect](ctx, step)\n\t\tif err != nil && next == \"\" {"}}, fsmPkgs},
	{"fsm owner: a refused chained trigger loses the step that ran", "owner path", "fsm/owner.go",
		[]patch{{"\t\tif err != nil {\n\t\t\treturn last, err\n\t\t}", "\t\tif err != nil {\n\t\t\treturn Step[S, T]{}, err\n\t\t}"}}, fsmPkgs},
	{"fsm owner: the chain bound doubled", "owner path", "fsm/owner.go",
		[]patch{{"for range len(o.m.spec.Edges) + 1 {", "for range 2*len(o.m.spec.Edges) + 1 {"}}, fsmPkgs},
	{"fsm owner: Run ignores an ended context", "owner run loop", "fsm/owner.go",
		[]patch{{"\t\tif ctx.Err() != nil {\n\t\t\tif it := interrupt(", "\t\tif false {\n\t\t\tif it := interrupt("}}, fsmPkgs},
	{"fsm owner: Run fires an interrupt the resting state does not take", "owner run loop", "fsm/owner.go",
		[]patch{{"; o.m.Permitted(it) {", "; it != \"\" {"}}, fsmPkgs},
	{"fsm owner: Run goes on past a refusal", "owner run loop", "fsm/owner.go",
		[]patch{{"\t\tif ferr != nil {\n\t\t\treturn last, ferr\n\t\t}", "\t\tif ferr != nil {\n\t\t\tcontinue\n\t\t}"}}, fsmPkgs},
	{"fsm owner: Fire hands on its caller's input", "owner input", "fsm/owner.go",
		[]patch{{"return o.chain(context.WithValue(ctx, inputKey{}, nil), t)", "return o.chain(ctx, t)"}}, fsmPkgs},
	// Owner paths no test took before issue 27.
	{"reconnect: a deadline shorter than the default ignored", "owner deadline", "reconnect/machine.go",
		[]patch{{"\tif deadline == 0 {\n\t\tdeadline = DefaultDeadline", "\tif deadline >= 0 {\n\t\tdeadline = DefaultDeadline"}}, reconnectPkgs},
	{"reconnect: a reconnect after close starts a flight when none ran", "owner close", "reconnect/machine.go",
		[]patch{{"\t\t\tif c.owner.Permitted(SessionEnded) {", "\t\t\tif false && c.owner.Permitted(SessionEnded) {"}}, reconnectPkgs},
	{"reconnect: invalidation swapped into the adopting transition", "effects swapped between transitions", "reconnect/machine.go",
		[]patch{{"\tc.dialed.Adopt()\n\tc.dialed = Dialed{}\n\treturn Invalidate, nil", "\tc.dialed.Adopt()\n\tc.dialed = Dialed{}\n\tc.Hooks.Invalidate(c.Gens.Advance())\n\treturn Invalidate, nil"},
			{"\tc.Hooks.Invalidate(c.Gens.Advance())\n\treturn ReopenGates, nil", "\treturn ReopenGates, nil"}}, reconnectPkgs},
	{"reconnect: a session end cancels the flight without saying why", "owner close", "reconnect/machine.go",
		[]patch{{"f.cancel(errSessionEnded)", "f.cancel(nil)"}}, reconnectPkgs},
	{"gates: a drained gate reopens mid-reconnect", "drained gate reopening mid-reconnect", "lease/gate.go",
		[]patch{{"if gt.owner.State() == GateClosed && !t.g.reconnectingLocked(t.key.Browser) {", "if gt.owner.State() == GateClosed {"}}, leasePkgs},
	{"gates: a gate first used mid-reconnect starts open", "gate open mid-reconnect", "lease/gate.go",
		[]patch{{"\t\tif g.reconnectingLocked(k.Browser) {\n\t\t\tgt.fire(GateClose)", "\t\tif false {\n\t\t\tgt.fire(GateClose)"}}, leasePkgs},
	{"scope: a grant covers another endpoint", "scope field not varied", "consent/approval.go",
		[]patch{{"\t\ts.Fingerprint != n.Fingerprint, s.Endpoint != n.Endpoint:", "\t\ts.Fingerprint != n.Fingerprint:"}}, consentPkgs},
	{"scope: a grant covers another browser", "scope field not varied", "consent/approval.go",
		[]patch{{"s.Session != n.Session, s.BrowserID != n.BrowserID,", "s.Session != n.Session,"}}, consentPkgs},
	{"ledger: a settlement naming nothing counted as acknowledged", "empty settlement", "lease/ledger.go",
		[]patch{{"settle = EffectAckLost // an answer that says nothing", "settle = EffectAck // an answer that says nothing"}}, leasePkgs},
	{"ledger: an effect observed not done is never retried", "retry after not done", "lease/ledger.go",
		[]patch{{"case EffectCancelled, EffectFailed, EffectReconciledNo:\n\t\t\tl.forgetLocked(key)", "case EffectCancelled, EffectFailed:\n\t\t\tl.forgetLocked(key)"}}, leasePkgs},
	{"ledger: a cancel while the send is in flight recorded as cancelled", "cancel in flight", "lease/ledger.go",
		[]patch{{"EffectCancel)\n\tif ferr != nil {\n\t\treturn ferr", "EffectCancel)\n\tif ferr != nil && !fsm.IsCode(ferr, fsm.TransitionRefused) {\n\t\treturn ferr"}}, leasePkgs},
	{"broker: revalidation trusts the map entry of an ended grant", "final state hidden by bookkeeping", "consent/approval.go",
		[]patch{{"\treturn g.Use(b.now())\n}", "\t_ = g.Use(b.now()) // the map still names it: live\n\treturn nil\n}"}}, consentPkgs},
	// The operation table: TestTable must refuse a declaration missing a part.
	{"op: click admits no page", "an operation missing admission", "cmd/internal/op/actions.go",
		[]patch{{"// ClickIn clicks an element.\n", "func (ClickIn) Addr() Addr { return Addr{} }\n\n// ClickIn clicks an element.\n"}}, opPkgs},
	{"op: hover is an effect without its key", "an effect without its key", "cmd/internal/op/actions.go",
		[]patch{{"type HoverIn struct {\n\tOnPage\n\tElement\n\tKeyed\n}", "type HoverIn struct {\n\tOnPage\n\tElement\n}"}}, opPkgs},
	{"op: the probe cannot pass slowly", "a parameter dropped on the way", "cmd/internal/op/actions.go",
		[]patch{{"\tSlowly bool     `json:\"slowly,omitempty\"`\n\tKeys", "\tKeys"}}, opPkgs},
	{"shared tab: an ended share keeps its pages", "dropped effect", "lease/sharedtab.go",
		[]patch{{"{From: AttachReady, On: AttachSocketLost, To: AttachLost, Effect: EffectRetirePages},", "{From: AttachReady, On: AttachSocketLost, To: AttachLost},"},
			{"Effects:      []fsm.Effect{EffectRetirePages, EffectDetachDebugger, EffectRelease},", "Effects:      []fsm.Effect{EffectDetachDebugger, EffectRelease},"}}, leasePkgs},
	{"mcp session: the client goes and the session's end never runs", "dropped effect", "mcpsession/spec.go",
		[]patch{{"{From: Serving, On: End, To: Closing, Effect: EffectEndSession},", "{From: Serving, On: End, To: Closing},"}}, mcpsessionPkgs},
	{"download: one finished past its bound keeps its file in the jail", "dropped effect", "netguard/downloadspec.go",
		[]patch{{"To: DownloadCanceled, Guard: fsm.Not(withinBound), Effect: EffectRemoveFile},", "To: DownloadCanceled, Guard: fsm.Not(withinBound)},"}}, netguardPkgs},
	// The extension bridge's machines and their owners.
	{"bridge peer: a closing verified peer keeps its offers, leases and routes", "dropped invalidation", "extension/bridge/peer.go",
		[]patch{{"\tp.s.removePeer(p)\n\tp.s.logf(\"bridge: a peer closed", "\tp.s.logf(\"bridge: a peer closed"}}, bridgePkgs},
	{"bridge peer: a 33rd command in flight is sent", "bound one too large", "extension/bridge/peer.go",
		[]patch{{"if len(p.pending) >= wire.MaxQueuedCommands {", "if len(p.pending) > wire.MaxQueuedCommands {"}}, bridgePkgs},
	{"bridge peer: a call cancelled in flight keeps its command slot", "cancel in flight", "extension/bridge/peer.go",
		[]patch{{"\tcase <-ctx.Done():\n\t\tp.mu.Lock()\n\t\tdelete(p.pending, m.ID)\n\t\tp.mu.Unlock()\n\t\treturn nil, ctx.Err()", "\tcase <-ctx.Done():\n\t\treturn nil, ctx.Err()"}}, bridgePkgs},
	{"bridge peer: the handshake skips the extension's origin", "handshake check dropped", "extension/bridge/peer.go",
		[]patch{{"if !tokenOK || m.Instance != rec.Instance || (origin != \"\" && m.Origin != origin) {", "if !tokenOK || m.Instance != rec.Instance {"}}, bridgePkgs},
	{"bridge route: a drained lossy route stays lossy", "removed transition (not in the seed)", "extension/bridge/machines.go",
		[]patch{{"{From: RouteLossy, On: RouteDrained, To: RouteOpen},", "{From: RouteLossy, On: RouteDrained, To: RouteLossy},"}}, bridgePkgs},
	{"bridge route: an overflow queues no loss marker", "effect not run", "extension/bridge/socket.go",
		[]patch{{"\trt.sock.queueMarkerLocked(rt, rt.lost)\n\treturn \"\", nil", "\treturn \"\", nil"}}, bridgePkgs},
	{"bridge route: one event more than the route's bound queued", "bound one too large", "extension/bridge/socket.go",
		[]patch{{"if rt.queued >= s.s.opts.MaxRouteEvents ||", "if rt.queued > s.s.opts.MaxRouteEvents ||"}}, bridgePkgs},
	{"offer: consumed at its expiry (the guard dropped)", "removed guard", "lease/offer.go",
		[]patch{{"{From: OfferOffered, On: OfferConsume, To: OfferConsumed, Guard: offerUnexpired, Effect: EffectAttachDebugger},\n\t\t{From: OfferOffered, On: OfferConsume, To: OfferExpired, Guard: fsm.Not(offerUnexpired)},",
			"{From: OfferOffered, On: OfferConsume, To: OfferConsumed, Effect: EffectAttachDebugger},"}}, offerPkgs},
	{"offer: a 17th live offer", "bound one too large", "lease/offer.go",
		[]patch{{"if len(o.offers) >= MaxLiveOffers {", "if len(o.offers) > MaxLiveOffers {"}}, offerPkgs},
}

type result struct {
	mutation
	Verdict string   // killed, survived, stale, error
	Killers []string // failing tests (or the build or init failure)
	Runs    int      // runs that killed it, of -runs
}

func main() {
	only := flag.String("only", "", "run only the mutations whose name matches this regexp")
	worktree := flag.Bool("worktree", false, "mutate a copy of the working tree instead of HEAD")
	runs := flag.Int("runs", 1, "runs per mutation; a kill must happen in every run")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on one mutation's test run")
	out := flag.String("o", "", "also write the report (markdown) to this file")
	since := flag.String("since", "", "run only the mutations whose file's directory changed since this revision")
	flag.Parse()
	if err := run(*only, *since, *worktree, *runs, *timeout, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// changedSince reports whether a file lives in a directory changed since
// the commit since (the work tree's changes too, with worktree); every
// file when since is empty.
func changedSince(root, since string, worktree bool) (func(file string) bool, error) {
	if since == "" {
		return func(string) bool { return true }, nil
	}
	args := []string{"diff", "--name-only", since}
	if !worktree {
		args = append(args, "HEAD")
	}
	list, err := gitOutput(root, args...)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, f := range strings.Split(list, "\n") {
		dirs[filepath.Dir(f)] = true
	}
	return func(file string) bool { return dirs[filepath.Dir(file)] }, nil
}

func run(only, since string, worktree bool, runs int, timeout time.Duration, out string) error {
	sel, err := regexp.Compile(only)
	if err != nil {
		return err
	}
	root, err := gitOutput("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "webcodex-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyRepo(root, tmp, worktree); err != nil {
		return err
	}

	changed, err := changedSince(root, since, worktree)
	if err != nil {
		return err
	}
	var chosen []mutation
	for _, m := range mutations {
		if sel.MatchString(m.Name) && changed(m.File) {
			chosen = append(chosen, m)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintln(os.Stderr, "mutate: no mutation lives in what changed")
		return nil
	}
	// Baseline: the unmutated packages must pass, or a kill means nothing.
	var all []string
	for _, m := range chosen {
		for _, p := range m.Pkgs {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "baseline: %s\n", strings.Join(all, " "))
	if failed, outText := goTest(tmp, all, timeout); len(failed) > 0 {
		return fmt.Errorf("the unmutated packages fail (%v); fix them first:\n%s", failed, tail(outText, 40))
	}

	var results []result
	for i, m := range chosen {
		fmt.Fprintf(os.Stderr, "[%d/%d] %s\n", i+1, len(chosen), m.Name)
		results = append(results, apply(tmp, m, runs, timeout))
		r := results[len(results)-1]
		fmt.Fprintf(os.Stderr, "        %s %s\n", r.Verdict, strings.Join(r.Killers, ", "))
	}
	report := render(results, runs, worktree)
	fmt.Print(report)
	if out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			return err
		}
	}
	var alive []string
	for _, r := range results {
		if r.Verdict != "killed" {
			alive = append(alive, r.Name+" ("+r.Verdict+")")
		}
	}
	if len(alive) > 0 {
		return fmt.Errorf("%d of %d seeded bugs not killed: %s", len(alive), len(results), strings.Join(alive, "; "))
	}
	return nil
}

// apply patches one file of the copy, runs the tests and puts the file back.
func apply(dir string, m mutation, runs int, timeout time.Duration) result {
	r := result{mutation: m}
	path := filepath.Join(dir, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		r.Verdict, r.Killers = "stale", []string{err.Error()}
		return r
	}
	defer os.WriteFile(path, orig, 0o644)
	text := string(orig)
	for _, p := range m.Patches {
		if n := strings.Count(text, p.Old); n != 1 {
			r.Verdict, r.Killers = "stale", []string{fmt.Sprintf("%q occurs %d times", firstLine(p.Old), n)}
			return r
		}
		text = strings.Replace(text, p.Old, p.New, 1)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		r.Verdict, r.Killers = "error", []string{err.Error()}
		return r
	}
	for range runs {
		failed, _ := goTest(dir, m.Pkgs, timeout)
		failed = slices.DeleteFunc(failed, func(f string) bool { return slices.Contains(driftOnly, f) })
		if len(failed) > 0 {
			r.Runs++
			for _, f := range failed {
				if !slices.Contains(r.Killers, f) {
					r.Killers = append(r.Killers, f)
				}
			}
		}
	}
	switch {
	case r.Runs == runs:
		r.Verdict = "killed"
	case r.Runs > 0:
		r.Verdict = fmt.Sprintf("flaky (%d of %d runs)", r.Runs, runs)
	default:
		r.Verdict = "survived"
	}
	return r
}

var (
	failLine  = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	panicLine = regexp.MustCompile(`^panic: (.*)`)
	buildFail = regexp.MustCompile(`^FAIL\s+(\S+) \[(build failed|setup failed)\]`)
	pkgFail   = regexp.MustCompile(`^FAIL\s+(\S+)\s+[0-9.]+s$`)
	traceFail = regexp.MustCompile(`^trace conformance: (.*)`)
)

// goTest runs the packages' tests and names what failed: tests, a build,
// a panic at init (an invalid declaration panics in MustValidate), trace
// conformance, or a package that failed with no test named.
func goTest(dir string, pkgs []string, timeout time.Duration) (failed []string, output string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"test", "-count=1", "-timeout", timeout.String()}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	output = buf.String()
	named := false
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case failLine.MatchString(line):
			name := failLine.FindStringSubmatch(line)[1]
			if top, _, _ := strings.Cut(name, "/"); !slices.Contains(failed, top) && !slices.Contains(failed, name) {
				failed = append(failed, name)
			}
			named = true
		case panicLine.MatchString(line):
			failed = append(failed, "panic: "+clip(panicLine.FindStringSubmatch(line)[1], 140))
			named = true
		case traceFail.MatchString(line):
			failed = append(failed, "trace conformance")
			named = true
		case buildFail.MatchString(line):
			failed = append(failed, "build of "+buildFail.FindStringSubmatch(line)[1])
			named = true
		case pkgFail.MatchString(line) && !named:
			failed = append(failed, "package "+pkgFail.FindStringSubmatch(line)[1])
		}
	}
	if err != nil && len(failed) == 0 {
		var exit *exec.ExitError
		if errors.As(err, &exit) || ctx.Err() != nil {
			failed = append(failed, "go test: "+err.Error())
		}
	}
	return failed, output
}

func render(results []result, runs int, worktree bool) string {
	var b strings.Builder
	src := "HEAD"
	if worktree {
		src = "the working tree"
	}
	killed, counted := 0, 0
	for _, r := range results {
		if r.Verdict == "stale" || r.Verdict == "error" {
			continue
		}
		counted++
		if r.Verdict == "killed" {
			killed++
		}
	}
	fmt.Fprintf(&b, "# Mutation check (%s, %d run(s) per mutation)\n\n", src, runs)
	fmt.Fprintf(&b, "Kill rate: %d of %d", killed, counted)
	if counted > 0 {
		fmt.Fprintf(&b, " (%.0f%%)", 100*float64(killed)/float64(counted))
	}
	if stale := len(results) - counted; stale > 0 {
		fmt.Fprintf(&b, "; %d stale (their text is no longer in the code)", stale)
	}
	b.WriteString(".\n\n| mutation | class | verdict | killed by |\n|---|---|---|---|\n")
	for _, r := range results {
		killers := r.Killers
		if len(killers) > 4 {
			killers = append(slices.Clone(killers[:4]), fmt.Sprintf("and %d more", len(r.Killers)-4))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Name, r.Class, r.Verdict, strings.ReplaceAll(strings.Join(killers, "; "), "|", "\\|"))
	}
	return b.String()
}

// copyRepo puts HEAD (or the working tree's tracked and new files) in dst.
func copyRepo(root, dst string, worktree bool) error {
	if !worktree {
		archive := exec.Command("git", "archive", "HEAD")
		archive.Dir = root
		untar := exec.Command("tar", "-x", "-C", dst)
		pipe, err := archive.StdoutPipe()
		if err != nil {
			return err
		}
		untar.Stdin = pipe
		if err := untar.Start(); err != nil {
			return err
		}
		if err := archive.Run(); err != nil {
			return fmt.Errorf("git archive: %w", err)
		}
		return untar.Wait()
	}
	list, err := gitOutput(root, "ls-files", "-co", "--exclude-standard")
	if err != nil {
		return err
	}
	for _, rel := range strings.Split(list, "\n") {
		if rel == "" {
			continue
		}
		if err := copyFile(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

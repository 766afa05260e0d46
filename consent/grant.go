package consent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// GrantState is a state of a grant's lifetime.
type GrantState string

// Grant states. Their exits are rendered from the declared edges (spec/).
const (
	GrantLive             GrantState = "active"           // usable.
	GrantIdleExpired      GrantState = "idle_expired"     // unused for longer than the idle expiry.
	GrantAbsoluteExpired  GrantState = "absolute_expired" // older than the absolute expiry.
	GrantRevokedState     GrantState = "revoked"          // revoked by the person or the owner.
	GrantDiscardedRestart GrantState = "discarded"        // the Runner stopped.
)

// GrantTrigger is an event in a grant's lifetime.
type GrantTrigger string

// Grant triggers.
const (
	GrantUse      GrantTrigger = "use"
	GrantRevoke   GrantTrigger = "revoke"
	GrantDiscard  GrantTrigger = "runner_restart"
	GrantIdleTick GrantTrigger = "idle_timeout"
	GrantAbsTick  GrantTrigger = "absolute_timeout"
)

// GrantFacts are read by the grant's guards.
type GrantFacts struct {
	IdleLeft     bool // the idle expiry has not passed
	AbsoluteLeft bool // the absolute expiry has not passed
}

var (
	grantInTime      = &fsm.Guard[GrantFacts]{Name: "in_time", OK: func(e fsm.Env[GrantFacts]) bool { return e.Facts.IdleLeft && e.Facts.AbsoluteLeft }}
	grantAbsExpired  = &fsm.Guard[GrantFacts]{Name: "absolute_passed", OK: func(e fsm.Env[GrantFacts]) bool { return !e.Facts.AbsoluteLeft }}
	grantIdleExpired = &fsm.Guard[GrantFacts]{Name: "idle_passed && absolute_left", OK: func(e fsm.Env[GrantFacts]) bool { return !e.Facts.IdleLeft && e.Facts.AbsoluteLeft }}
)

// GrantSpec is a grant's lifetime: in memory only, idle and absolute
// expiry, revocation final, discarded when the Runner stops.
var GrantSpec = (&fsm.Spec[GrantState, GrantTrigger, GrantFacts]{
	Name:  "grant",
	Title: "Grant",
	Guards: "What a person's approval mints: permission to attach to one browser process (fingerprint), for one Runner " +
		"instance and session, with a reconnect budget, and for no more than the allowlist, evaluate switch, scopes and " +
		"permission to press the browser's own prompt the person was shown: an attach asking for the same or less reuses it, anything wider needs a new approval. It lives in " +
		"memory only, expires after " + fsm.HumanDuration(IdleExpiry) + " idle or " + fsm.HumanDuration(AbsoluteExpiry) + " in all, and once revoked or expired nothing re-arms it.",
	Initial: GrantLive,
	States: []fsm.StateDoc[GrantState]{
		fsm.Doc(GrantLive, "Usable: within its idle and absolute expiry, not revoked."),
		fsm.Doc(GrantIdleExpired, "Unused for longer than the idle expiry."),
		fsm.Doc(GrantAbsoluteExpired, "Older than the absolute expiry."),
		fsm.Doc(GrantRevokedState, "Revoked by the person (prompt dismissed) or by the owner."),
		fsm.Doc(GrantDiscardedRestart, "The Runner stopped; grants never survive a restart."),
	},
	Triggers: []GrantTrigger{GrantUse, GrantRevoke, GrantDiscard, GrantIdleTick, GrantAbsTick},
	Edges: []fsm.Edge[GrantState, GrantTrigger, GrantFacts]{
		{From: GrantLive, On: GrantUse, To: GrantLive, Guard: grantInTime, Count: "uses"},
		{From: GrantLive, On: GrantUse, To: GrantIdleExpired, Guard: grantIdleExpired},
		{From: GrantLive, On: GrantUse, To: GrantAbsoluteExpired, Guard: grantAbsExpired},
		{From: GrantLive, On: GrantIdleTick, To: GrantIdleExpired},
		{From: GrantLive, On: GrantAbsTick, To: GrantAbsoluteExpired},
		{From: GrantLive, On: GrantRevoke, To: GrantRevokedState, Effect: EffectRevokeGrant},
		{From: GrantLive, On: GrantDiscard, To: GrantDiscardedRestart},
	},
	Effects:      []fsm.Effect{EffectRevokeGrant},
	Stable:       []GrantState{GrantLive},
	Terminal:     []GrantState{GrantIdleExpired, GrantAbsoluteExpired, GrantRevokedState, GrantDiscardedRestart},
	MaxTransient: 1,
	Revoked:      []GrantState{GrantIdleExpired, GrantAbsoluteExpired, GrantRevokedState, GrantDiscardedRestart},
	Armed:        []GrantState{GrantLive},
	DrawFacts: func(d fsm.Drawer) GrantFacts {
		return GrantFacts{IdleLeft: d.Bool("idle_left"), AbsoluteLeft: d.Bool("absolute_left")}
	},
}).MustValidate()

// Grant expiries.
const (
	IdleExpiry     = 30 * time.Minute
	AbsoluteExpiry = 8 * time.Hour
)

// Grant is permission to attach to one browser process. Safe for concurrent
// use.
type Grant struct {
	scope    Scope
	absolute time.Time

	mu       sync.Mutex // mu guards the fields that follow and serializes firing
	lastUsed time.Time
	owner    *fsm.Owner[GrantState, GrantTrigger, GrantFacts]
}

func newGrant(scope Scope, now time.Time) *Grant {
	g := &Grant{scope: scope, absolute: now.Add(AbsoluteExpiry), lastUsed: now}
	g.owner = fsm.NewOwner(GrantSpec, fsm.Effects[GrantState, GrantTrigger]{
		EffectRevokeGrant: g.revoke,
	})
	return g
}

// revoke is revoke_grant: the grant is revoked for good, which its
// machine's state (revoked, terminal) answers; nothing re-arms it.
func (g *Grant) revoke(context.Context, fsm.Step[GrantState, GrantTrigger]) (GrantTrigger, error) {
	return "", nil
}

// Use checks the grant at now and touches its idle timer. It is usable
// strictly before its idle and its absolute expiry, never at either.
func (g *Grant) Use(now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owner.SetFacts(func(f *GrantFacts) {
		*f = GrantFacts{IdleLeft: now.Before(g.lastUsed.Add(IdleExpiry)), AbsoluteLeft: now.Before(g.absolute)}
	})
	if _, err := g.owner.Fire(context.Background(), GrantUse); err != nil {
		return g.refusalLocked().WithCause(err) // ended already
	}
	if g.owner.State() != GrantLive {
		return g.refusalLocked() // this use found it expired
	}
	g.lastUsed = now
	return nil
}

func (g *Grant) refusalLocked() *fsm.Refusal {
	if g.owner.State() == GrantRevokedState {
		return fsm.Refuse(fsm.ConsentRevoked, "the grant for this browser was revoked")
	}
	return fsm.Refusef(fsm.ConsentRequired, "the grant for this browser is %s; a new approval is needed", g.owner.State())
}

// Revoke ends the grant for good. A grant that ended already (expired,
// revoked, discarded) stays as it ended.
func (g *Grant) Revoke() { g.end(GrantRevoke) }

// end fires an ending trigger unless the grant has ended already: every
// ending is accepted from the one live state.
func (g *Grant) end(t GrantTrigger) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owner.State() != GrantLive {
		return
	}
	if _, err := g.owner.Fire(context.Background(), t); err != nil {
		panic(fmt.Sprintf("consent: grant: %v", err)) // the live state takes every ending
	}
}

// State returns the grant's lifetime state.
func (g *Grant) State() GrantState { return g.owner.State() }

// Expiry returns when the grant ends if used no more: the earlier of the
// idle and the absolute expiry.
func (g *Grant) Expiry() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	idle := g.lastUsed.Add(IdleExpiry)
	if idle.Before(g.absolute) {
		return idle
	}
	return g.absolute
}

// Scope returns what the grant covers: what the person approved.
func (g *Grant) Scope() Scope { return g.scope }

// ReconnectBudget returns the number of reconnect attempts the grant allows
// per loss.
func (g *Grant) ReconnectBudget() int { return g.scope.ReconnectBudget }

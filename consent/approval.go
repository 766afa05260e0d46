package consent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// RequestState is a state of an approval request's lifetime.
type RequestState string

// Approval request states. Each doc lists the state's exits.
const (
	RequestPending    RequestState = "pending"           // moves to approved, denied, expired or consumed_mismatch.
	RequestApproved   RequestState = "approved"          // moves to consumed, consumed_mismatch or expired.
	RequestConsumed   RequestState = "consumed"          // terminal: it minted one grant.
	RequestMismatched RequestState = "consumed_mismatch" // terminal: a use that did not match consumed it.
	RequestDenied     RequestState = "denied"            // terminal.
	RequestExpired    RequestState = "expired"           // terminal.
)

// RequestTrigger is an event in an approval request's lifetime.
type RequestTrigger string

// Approval request triggers.
const (
	RequestApprove RequestTrigger = "approve" // a person confirmed the summary
	RequestDeny    RequestTrigger = "deny"    // a person declined
	RequestUse     RequestTrigger = "use"     // an attach presented the request
	RequestExpire  RequestTrigger = "expire"  // its lifetime ended
)

// RequestFacts are read by the request's guards.
type RequestFacts struct {
	Matches   bool // the use's scope digest equals the request's
	Unexpired bool
}

var (
	reqMatchesUnexpired = &fsm.Guard[RequestFacts]{Name: "matches && unexpired", OK: func(e fsm.Env[RequestFacts]) bool { return e.Facts.Matches && e.Facts.Unexpired }}
	reqMismatch         = &fsm.Guard[RequestFacts]{Name: "!matches", OK: func(e fsm.Env[RequestFacts]) bool { return !e.Facts.Matches }}
	reqMatchesExpired   = &fsm.Guard[RequestFacts]{Name: "matches && expired", OK: func(e fsm.Env[RequestFacts]) bool { return e.Facts.Matches && !e.Facts.Unexpired }}
	reqUnexpired        = &fsm.Guard[RequestFacts]{Name: "unexpired", OK: func(e fsm.Env[RequestFacts]) bool { return e.Facts.Unexpired }}
)

// RequestSpec is the approval request lifetime: single use, short-lived, and
// consumed by a use that does not match its digest.
var RequestSpec = (&fsm.Spec[RequestState, RequestTrigger, RequestFacts]{
	Name:  "approval_request",
	Title: "Approval request",
	Guards: "The out-of-band artifact a person approves. It is bound to a digest of (Runner instance, session, browser identity, " +
		"process fingerprint, endpoint, side effects); it is single-use, it expires, and a use that does not match the digest " +
		"consumes it so it cannot be probed.",
	Initial: RequestPending,
	States: []fsm.StateDoc[RequestState]{
		fsm.Doc(RequestPending, "Shown to the person. Moves to approved, denied, expired or consumed_mismatch (a non-matching use); a matching use waits."),
		fsm.Doc(RequestApproved, "The person confirmed. Moves to consumed (matching use in time), consumed_mismatch or expired."),
		fsm.Doc(RequestConsumed, "Terminal. It minted exactly one grant."),
		fsm.Doc(RequestMismatched, "Terminal. A use with another digest consumed it."),
		fsm.Doc(RequestDenied, "Terminal. The person declined."),
		fsm.Doc(RequestExpired, "Terminal. Its lifetime ended."),
	},
	Triggers: []RequestTrigger{RequestApprove, RequestDeny, RequestUse, RequestExpire},
	Edges: []fsm.Edge[RequestState, RequestTrigger, RequestFacts]{
		{From: RequestPending, On: RequestApprove, To: RequestApproved, Guard: reqUnexpired},
		{From: RequestPending, On: RequestApprove, To: RequestExpired, Guard: fsm.Not(reqUnexpired)},
		{From: RequestPending, On: RequestDeny, To: RequestDenied},
		{From: RequestPending, On: RequestExpire, To: RequestExpired},
		{From: RequestPending, On: RequestUse, To: RequestMismatched, Guard: reqMismatch},
		{From: RequestApproved, On: RequestUse, To: RequestConsumed, Guard: reqMatchesUnexpired, Effect: EffectMintGrant},
		{From: RequestApproved, On: RequestUse, To: RequestMismatched, Guard: reqMismatch},
		{From: RequestApproved, On: RequestUse, To: RequestExpired, Guard: reqMatchesExpired},
		{From: RequestApproved, On: RequestExpire, To: RequestExpired},
	},
	Stable:       []RequestState{RequestPending, RequestApproved},
	Terminal:     []RequestState{RequestConsumed, RequestMismatched, RequestDenied, RequestExpired},
	MaxTransient: 1,
	Revoked:      []RequestState{RequestMismatched, RequestDenied, RequestExpired},
	Armed:        []RequestState{RequestApproved, RequestConsumed},
	DrawFacts: func(d fsm.Drawer) RequestFacts {
		return RequestFacts{Matches: d.Bool("matches"), Unexpired: d.Bool("unexpired")}
	},
}).MustValidate()

// RequestTTL is how long an approval request may wait for a person.
const RequestTTL = 5 * time.Minute

// Scope is what a grant covers. Every field is internal: the digest binds
// them, and none is shown to an agent.
type Scope struct {
	RunnerInstance  string   `json:"runner"`
	Session         string   `json:"session"`
	BrowserID       string   `json:"browser"`
	Fingerprint     string   `json:"fingerprint"` // (PID, start time, executable) of the browser process
	Endpoint        string   `json:"endpoint"`
	SideEffects     []string `json:"side_effects"`
	ReconnectBudget int      `json:"reconnect_budget"`
}

// Digest is the canonical SHA-256 of the scope.
func (s Scope) Digest() [32]byte {
	b, _ := json.Marshal(s) // struct of strings and ints: cannot fail
	return sha256.Sum256(b)
}

// Request is one approval request. Its ID correlates a person's action; it
// grants nothing by itself.
type Request struct {
	ID      string
	Summary string // for the person: what would be granted
	Expires time.Time

	digest [32]byte
	scope  Scope
	m      *fsm.Machine[RequestState, RequestTrigger, RequestFacts]
	facts  RequestFacts
}

// State returns the request's lifetime state.
func (r *Request) State() RequestState { return r.m.State() }

// Broker holds approval requests and grants for one Runner instance, in
// memory only: a Runner restart discards every grant. Safe for concurrent use.
type Broker struct {
	Instance string           // random per Runner start, part of every scope
	Now      func() time.Time // clock; nil means time.Now

	mu       sync.Mutex // mu guards the fields that follow
	requests map[string]*Request
	grants   map[string]*Grant // by browser id
}

// NewBroker returns a broker with a fresh random instance id.
func NewBroker() *Broker {
	return &Broker{Instance: randomID(), requests: map[string]*Request{}, grants: map[string]*Grant{}}
}

func (b *Broker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// maxPendingRequests bounds how many approval requests may wait at once.
const maxPendingRequests = 16

// NewRequest creates an approval request for scope.
func (b *Broker) NewRequest(scope Scope, summary string) (*Request, error) {
	scope.RunnerInstance = b.Instance
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	if len(b.requests) >= maxPendingRequests {
		return nil, fsm.Refusef(fsm.LimitExceeded, "at most %d approval requests may wait at once", maxPendingRequests)
	}
	r := &Request{ID: randomID(), Summary: summary, Expires: b.now().Add(RequestTTL), digest: scope.Digest(), scope: scope}
	r.m = RequestSpec.Build(func() RequestFacts { return r.facts })
	b.requests[r.ID] = r
	return r, nil
}

// Pending returns the summary of a waiting request, for `webcodex approve`.
func (b *Broker) Pending(id string) (summary string, expires time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	r, ok := b.requests[id]
	if !ok || r.m.State() != RequestPending {
		return "", time.Time{}, fsm.Refuse(fsm.ApprovalInvalid, "no such pending approval request")
	}
	return r.Summary, r.Expires, nil
}

// Approve records a person's approval. Only approval providers (the
// interactive CLI, the MCP host's elicitation) call it.
func (b *Broker) Approve(id string) error { return b.decide(id, RequestApprove) }

// Deny records a person's refusal.
func (b *Broker) Deny(id string) error { return b.decide(id, RequestDeny) }

func (b *Broker) decide(id string, t RequestTrigger) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	r, ok := b.requests[id]
	if !ok {
		return fsm.Refuse(fsm.ApprovalInvalid, "no such pending approval request")
	}
	r.facts = RequestFacts{Matches: true, Unexpired: b.now().Before(r.Expires)}
	if _, err := r.m.Fire(context.Background(), t); err != nil {
		return fsm.Refuse(fsm.ApprovalInvalid, "the approval request is no longer pending").WithCause(err)
	}
	if r.m.State() != RequestApproved && r.m.State() != RequestDenied {
		delete(b.requests, id)
		return fsm.Refuse(fsm.ApprovalInvalid, "the approval request expired")
	}
	return nil
}

// Use presents request id with the scope of the attach that wants it. A
// matching, approved, unexpired request mints a grant and is consumed; a
// mismatching use consumes it without a grant; a matching use of a pending
// request returns ConsentRequired and leaves it waiting.
func (b *Broker) Use(id string, scope Scope) (*Grant, error) {
	scope.RunnerInstance = b.Instance
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	r, ok := b.requests[id]
	if !ok {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "no such approval request (unknown, used or expired)")
	}
	d := scope.Digest()
	r.facts = RequestFacts{Matches: subtle.ConstantTimeCompare(d[:], r.digest[:]) == 1, Unexpired: b.now().Before(r.Expires)}
	if r.m.State() == RequestPending && r.facts.Matches {
		return nil, fsm.Refuse(fsm.ConsentRequired, "the approval request is still waiting for a person")
	}
	step, err := r.m.Fire(context.Background(), RequestUse)
	if err != nil {
		delete(b.requests, id)
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the approval request cannot be used").WithCause(err)
	}
	delete(b.requests, id) // every other outcome is terminal
	if step.Effect != EffectMintGrant {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the approval request does not match this attach, or expired; it is now consumed")
	}
	g := newGrant(scope, b.now())
	if old := b.grants[scope.BrowserID]; old != nil {
		old.Revoke()
	}
	b.grants[scope.BrowserID] = g
	return g, nil
}

// Grant returns the live grant for browserID whose scope still matches
// (same fingerprint, session and endpoint), touching its idle timer. A
// browser restart (new fingerprint) finds none.
func (b *Broker) Grant(browserID string, scope Scope) (*Grant, error) {
	scope.RunnerInstance = b.Instance
	b.mu.Lock()
	g := b.grants[browserID]
	b.mu.Unlock()
	if g == nil {
		return nil, fsm.Refuse(fsm.ConsentRequired, "no live grant for this browser")
	}
	if g.scope.Digest() != scope.Digest() {
		return nil, fsm.Refuse(fsm.ConsentRequired, "the browser or session changed since approval; a new approval is needed")
	}
	if err := g.Use(b.now()); err != nil {
		return nil, err
	}
	return g, nil
}

// RevokeBrowser revokes the grant for browserID, if any.
func (b *Broker) RevokeBrowser(browserID string) {
	b.mu.Lock()
	g := b.grants[browserID]
	delete(b.grants, browserID)
	b.mu.Unlock()
	if g != nil {
		g.Revoke()
	}
}

// Discard ends every grant: the Runner calls it when it stops, so a restart
// never inherits one.
func (b *Broker) Discard() {
	b.mu.Lock()
	grants := b.grants
	b.grants = map[string]*Grant{}
	b.requests = map[string]*Request{}
	b.mu.Unlock()
	for _, g := range grants {
		g.fire(GrantDiscard)
	}
}

func (b *Broker) expireLocked() {
	now := b.now()
	for id, r := range b.requests {
		if !now.Before(r.Expires) {
			r.m.Fire(context.Background(), RequestExpire)
			delete(b.requests, id)
		}
	}
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// randomID returns 80 random bits as 16 lowercase base32 characters.
func randomID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Errorf("consent: crypto/rand: %w", err))
	}
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// Match returns the live request whose digest equals scope's, if any, so an
// attach repeated with the same arguments finds the request a person
// approved (or is still looking at) instead of minting another.
func (b *Broker) Match(scope Scope) (id string, state RequestState, ok bool) {
	scope.RunnerInstance = b.Instance
	d := scope.Digest()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	for id, r := range b.requests {
		if subtle.ConstantTimeCompare(d[:], r.digest[:]) == 1 {
			return id, r.m.State(), true
		}
	}
	return "", "", false
}

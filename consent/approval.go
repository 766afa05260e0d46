package consent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
)

// RequestState is a state of an approval request's lifetime.
type RequestState string

// Approval request states. Their exits are rendered from the declared edges (spec/).
const (
	RequestPending  RequestState = "pending"  // shown to the person.
	RequestApproved RequestState = "approved" // the person confirmed.
	RequestConsumed RequestState = "consumed" // it minted one grant.
	RequestDenied   RequestState = "denied"   // declined, or too many wrong codes.
	RequestExpired  RequestState = "expired"  // its lifetime ended.
)

// RequestTrigger is an event in an approval request's lifetime.
type RequestTrigger string

// Approval request triggers.
const (
	RequestApprove   RequestTrigger = "approve"    // a person confirmed the summary (with the code, when one was shown)
	RequestDeny      RequestTrigger = "deny"       // a person declined
	RequestWrongCode RequestTrigger = "wrong_code" // an answer came with a one-time code or login password that does not match
	RequestUse       RequestTrigger = "use"        // an attach presented the request
	RequestExpire    RequestTrigger = "expire"     // its lifetime ended
)

// MaxCodeAttempts bounds the wrong one-time codes or login passwords a
// request takes: the last one denies it, so a program cannot guess either
// through one request.
const MaxCodeAttempts = 3

// counterWrongCodes counts the wrong codes a request has taken.
const counterWrongCodes = "wrong_codes"

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
	reqCodesLeft        = fsm.Below[RequestFacts](counterWrongCodes, MaxCodeAttempts-1)
	reqCodesSpent       = fsm.AtLeast[RequestFacts](counterWrongCodes, MaxCodeAttempts-1)
)

// RequestSpec is the approval request lifetime: single use, short-lived,
// bound to the digest of exactly what the person was shown. A use that does
// not match is refused and leaves the request as it was, so no caller can
// spend another's approval.
var RequestSpec = (&fsm.Spec[RequestState, RequestTrigger, RequestFacts]{
	Name:  "approval_request",
	Title: "Approval request",
	Guards: "The out-of-band artifact a person approves. It is bound to a digest of (Runner instance, session, browser identity, " +
		"process fingerprint, endpoint, canonical allowlist, evaluate switch, scopes, reconnect budget) — everything the person is " +
		"shown; it is single-use and it expires. A use whose digest differs is refused and changes nothing, so a mismatched " +
		"attach never consumes another request's approval. When the Runner showed a one-time code, or asked for the person's login " +
		fmt.Sprintf("password, an answer with a wrong one counts (wrong_code), and %d wrong answers deny the request.", MaxCodeAttempts),
	Initial: RequestPending,
	States: []fsm.StateDoc[RequestState]{
		fsm.Doc(RequestPending, "Shown to the person, who may approve or deny it; a use waits for the approval, and a wrong one-time code or password under the bound is only counted."),
		fsm.Doc(RequestApproved, "The person confirmed; only a matching use in time consumes it."),
		fsm.Doc(RequestConsumed, "It minted exactly one grant."),
		fsm.Doc(RequestDenied, fmt.Sprintf("The person declined, or %d wrong one-time codes or passwords were typed.", MaxCodeAttempts)),
		fsm.Doc(RequestExpired, "Its lifetime ended."),
	},
	Triggers: []RequestTrigger{RequestApprove, RequestDeny, RequestWrongCode, RequestUse, RequestExpire},
	Edges: []fsm.Edge[RequestState, RequestTrigger, RequestFacts]{
		{From: RequestPending, On: RequestApprove, To: RequestApproved, Guard: reqUnexpired},
		{From: RequestPending, On: RequestApprove, To: RequestExpired, Guard: fsm.Not(reqUnexpired)},
		{From: RequestPending, On: RequestDeny, To: RequestDenied},
		{From: RequestPending, On: RequestWrongCode, To: RequestPending, Guard: reqCodesLeft, Count: counterWrongCodes},
		{From: RequestPending, On: RequestWrongCode, To: RequestDenied, Guard: reqCodesSpent},
		{From: RequestPending, On: RequestExpire, To: RequestExpired},
		{From: RequestPending, On: RequestUse, To: RequestPending},
		{From: RequestApproved, On: RequestUse, To: RequestConsumed, Guard: reqMatchesUnexpired, Effect: EffectMintGrant},
		{From: RequestApproved, On: RequestUse, To: RequestApproved, Guard: reqMismatch},
		{From: RequestApproved, On: RequestUse, To: RequestExpired, Guard: reqMatchesExpired},
		{From: RequestApproved, On: RequestExpire, To: RequestExpired},
	},
	Effects:      []fsm.Effect{EffectMintGrant},
	Stable:       []RequestState{RequestPending, RequestApproved},
	Terminal:     []RequestState{RequestConsumed, RequestDenied, RequestExpired},
	MaxTransient: 1,
	Revoked:      []RequestState{RequestDenied, RequestExpired},
	Armed:        []RequestState{RequestApproved, RequestConsumed},
	DrawFacts: func(d fsm.Drawer) RequestFacts {
		return RequestFacts{Matches: d.Bool("matches"), Unexpired: d.Bool("unexpired")}
	},
}).MustValidate()

// RequestTTL is how long an approval request may wait for a person.
const RequestTTL = 5 * time.Minute

// The scopes an attach can carry: an MCP server's --scopes; the CLI has
// them all.
var AllScopes = []string{"browser:read", "browser:launch", "browser:control"}

// CanonicalScopes returns scopes in the order of AllScopes without
// duplicates; nil means every scope (the CLI). An unknown scope is
// invalid_argument.
func CanonicalScopes(scopes []string) ([]string, error) {
	if scopes == nil {
		return slices.Clone(AllScopes), nil
	}
	for _, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			return nil, fsm.Refusef(fsm.InvalidArgument, "unknown scope %q (known: %s)", s, strings.Join(AllScopes, ", "))
		}
	}
	out := []string{}
	for _, s := range AllScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Scope is what a grant covers: who asked, which browser process, and
// exactly what the person was shown. None of it is shown to an agent.
type Scope struct {
	RunnerInstance  string   `json:"runner"`
	Session         string   `json:"session"` // derived by the Runner from who called, never from the request
	BrowserID       string   `json:"browser"`
	Fingerprint     string   `json:"fingerprint"` // (PID, start time, executable) of the browser process
	Endpoint        string   `json:"endpoint"`
	Allow           []string `json:"allow"`    // canonical allowlist (origin.Canonical); empty authorizes nothing
	Evaluate        bool     `json:"evaluate"` // JavaScript evaluation and raw page CDP
	Scopes          []string `json:"scopes"`   // canonical (CanonicalScopes)
	ReconnectBudget int      `json:"reconnect_budget"`
	// PressPrompt: webcodex may press the browser's own "Allow remote
	// debugging?" prompt for the person (a ConsentUI adapter), once per
	// connection. Omitted when false, so digests without it are unchanged.
	PressPrompt bool `json:"press_prompt,omitempty"`
}

// Canonical returns s with its allowlist and scopes in canonical form, so
// two scopes that authorize the same things have the same digest.
func (s Scope) Canonical() Scope {
	s.Allow = origin.Canonical(s.Allow)
	scopes := []string{}
	for _, sc := range AllScopes {
		if slices.Contains(s.Scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	s.Scopes = scopes
	return s
}

// Digest is the SHA-256 of the canonical scope.
func (s Scope) Digest() [32]byte {
	b, _ := json.Marshal(s.Canonical()) // strings, bools and ints: cannot fail
	return sha256.Sum256(b)
}

// Covers reports whether an attach asking for n may use a grant of s: the
// same Runner, session, browser process and endpoint, and nothing wider —
// its allowlist covered entry by entry, evaluate only if s has it, its
// scopes a subset, its reconnect budget no larger, pressing the prompt
// only if s has it.
func (s Scope) Covers(n Scope) bool {
	s, n = s.Canonical(), n.Canonical()
	switch {
	case s.RunnerInstance != n.RunnerInstance, s.Session != n.Session, s.BrowserID != n.BrowserID,
		s.Fingerprint != n.Fingerprint, s.Endpoint != n.Endpoint:
		return false
	case n.Evaluate && !s.Evaluate, n.ReconnectBudget > s.ReconnectBudget, n.PressPrompt && !s.PressPrompt:
		return false
	}
	for _, sc := range n.Scopes {
		if !slices.Contains(s.Scopes, sc) {
			return false
		}
	}
	return origin.Covers(s.Allow, n.Allow)
}

// Process names one process as the Runner read it from /proc: its PID and
// start time (a reused PID is another process) and its command name.
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Comm  string `json:"comm"`
}

// Same reports whether p and q are the same process.
func (p Process) Same(q Process) bool { return p.PID == q.PID && p.Start == q.Start }

// Request is one approval request. Its ID correlates a person's action; it
// grants nothing by itself.
type Request struct {
	ID      string
	Summary string // for the person: what would be granted
	Expires time.Time
	// Requester is the client that asked for the attach and the process
	// that started it, as the Runner observed them (never as the caller
	// said): an approving terminal they drive is refused.
	Requester []Process

	digest    [32]byte
	scope     Scope
	owner     *fsm.Owner[RequestState, RequestTrigger, RequestFacts]
	code      string // the one-time code shown through the desktop, once issued
	codeShown int    // how many times it was shown
	password  bool   // an answer must come with the person's login password, checked by the Runner
}

// minting is one Use's input to mint_grant: when the use came, and the
// grant it minted, if the machine ran mint_grant.
type minting struct {
	at    time.Time
	grant *Grant
}

// State returns the request's lifetime state.
func (r *Request) State() RequestState { return r.owner.State() }

// mintGrant is mint_grant: the one grant a consumed request makes.
func (r *Request) mintGrant(_ context.Context, _ fsm.Step[RequestState, RequestTrigger], m *minting) (RequestTrigger, error) {
	m.grant = newGrant(r.scope, m.at)
	return "", nil
}

// RequestInfo is a copy of what a waiting request holds for the approval
// providers: never its code.
type RequestInfo struct {
	ID        string
	Summary   string
	Expires   time.Time
	Requester []Process
	// CodeIssued reports that a one-time code was shown for this request:
	// every answer must carry it.
	CodeIssued bool
	// PasswordBound reports that the person was asked for their login
	// password for this request: every answer must carry it.
	PasswordBound bool
	AttemptsLeft  int // wrong codes or passwords it still takes before it is denied
}

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

// NewRequest creates an approval request for scope on behalf of requester.
func (b *Broker) NewRequest(scope Scope, summary string, requester ...Process) (*Request, error) {
	scope.RunnerInstance = b.Instance
	scope = scope.Canonical()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	if len(b.requests) >= maxPendingRequests {
		return nil, fsm.Refusef(fsm.LimitExceeded, "at most %d approval requests may wait at once", maxPendingRequests)
	}
	r := &Request{ID: randomID(), Summary: summary, Expires: b.now().Add(RequestTTL), Requester: slices.Clone(requester), digest: scope.Digest(), scope: scope}
	r.owner = fsm.NewOwner(RequestSpec, fsm.Effects[RequestState, RequestTrigger]{
		EffectMintGrant: fsm.Takes(r.mintGrant),
	})
	b.requests[r.ID] = r
	return r, nil
}

// errNoPending is the one refusal for an id that names no waiting request,
// whatever the reason, so ids cannot be probed.
func errNoPending() error {
	return fsm.Refuse(fsm.ApprovalInvalid, "no such pending approval request (unknown, answered or expired)")
}

// pendingLocked returns the waiting request id, or errNoPending.
func (b *Broker) pendingLocked(id string) (*Request, error) {
	b.expireLocked()
	r, ok := b.requests[id]
	if !ok || r.owner.State() != RequestPending {
		return nil, errNoPending()
	}
	return r, nil
}

// Info returns what a waiting request holds, for the approval providers.
func (b *Broker) Info(id string) (RequestInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.pendingLocked(id)
	if err != nil {
		return RequestInfo{}, err
	}
	return r.infoLocked(), nil
}

func (r *Request) infoLocked() RequestInfo {
	return RequestInfo{ID: r.ID, Summary: r.Summary, Expires: r.Expires, Requester: slices.Clone(r.Requester),
		CodeIssued: r.code != "", PasswordBound: r.password, AttemptsLeft: MaxCodeAttempts - r.owner.Counter(counterWrongCodes)}
}

// Pending returns the summary of a waiting request.
func (b *Broker) Pending(id string) (summary string, expires time.Time, err error) {
	info, err := b.Info(id)
	return info.Summary, info.Expires, err
}

// MaxCodeShows bounds how often one request's code is shown, so a program
// cannot flood the desktop with notifications.
const MaxCodeShows = 3

// IssueCode returns the one-time code of a waiting request, drawing it on
// first use: six decimal digits from crypto/rand. Every later answer to
// the request must carry it. It refuses once the code was shown
// MaxCodeShows times.
func (b *Broker) IssueCode(id string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.pendingLocked(id)
	if err != nil {
		return "", err
	}
	if r.codeShown >= MaxCodeShows {
		return "", fsm.Refusef(fsm.LimitExceeded, "the code for this request was already shown %d times; type the code you were shown, or let the agent attach again for a new request", MaxCodeShows)
	}
	if r.code == "" {
		r.code = randomCode()
	}
	r.codeShown++
	return r.code, nil
}

// Approve records a person's approval through a provider that shows no
// code and asks no password (the MCP host's elicitation). A request whose
// code was shown, or for which the person's password was asked, cannot be
// approved without it.
func (b *Broker) Approve(id string) error { return b.Answer(id, true, "") }

// Deny records a person's refusal without a code.
func (b *Broker) Deny(id string) error { return b.Answer(id, false, "") }

// Answer records a person's answer. When a one-time code was shown for the
// request, code must equal it (compared in constant time): a wrong code is
// counted and refused, and the MaxCodeAttempts-th denies the request. A
// request bound to the login password is refused here: its answers come
// through AnswerWithPassword.
func (b *Broker) Answer(id string, approve bool, code string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.pendingLocked(id)
	if err != nil {
		return err
	}
	if r.password {
		return fsm.Refuse(fsm.ApprovalInvalid, "this request asked for the login password; the answer must carry it (run `webcodex approve "+id+"` at a terminal)")
	}
	return b.answerLocked(r, approve, code)
}

// RequirePassword binds a waiting request to the person's login password:
// from now on every answer must carry it, even if the Runner would later
// choose another factor, so no one can wait for a weaker approval.
func (b *Broker) RequirePassword(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.pendingLocked(id)
	if err != nil {
		return err
	}
	r.password = true
	return nil
}

// AnswerWithPassword records an answer that came with the person's login
// password, which the caller checked (matched): it binds the request to
// the password, counts a mismatch like a wrong code (the MaxCodeAttempts-th
// denies the request), and otherwise records the answer as Answer does.
func (b *Broker) AnswerWithPassword(id string, approve bool, code string, matched bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.pendingLocked(id)
	if err != nil {
		return err
	}
	r.password = true
	if !matched {
		return b.wrongLocked(r, "login password", "does not match the login password")
	}
	return b.answerLocked(r, approve, code)
}

// wrongLocked counts a wrong code or password; the last one denies r.
func (b *Broker) wrongLocked(r *Request, what, mismatch string) error {
	r.owner.SetFacts(func(f *RequestFacts) { *f = RequestFacts{Matches: true, Unexpired: b.now().Before(r.Expires)} })
	if _, err := r.owner.Fire(context.Background(), RequestWrongCode); err != nil {
		return fsm.Refuse(fsm.ApprovalInvalid, "the approval request is no longer pending").WithCause(err)
	}
	if r.owner.State() == RequestDenied {
		delete(b.requests, r.ID)
		return fsm.Refusef(fsm.ApprovalInvalid, "the %s did not match %d times; the request is denied and a new attach needs a new approval", what, MaxCodeAttempts)
	}
	return fsm.Refusef(fsm.ApprovalInvalid, "the answer %s (%d attempts left)", mismatch, MaxCodeAttempts-r.owner.Counter(counterWrongCodes))
}

func (b *Broker) answerLocked(r *Request, approve bool, code string) error {
	id := r.ID
	r.owner.SetFacts(func(f *RequestFacts) { *f = RequestFacts{Matches: true, Unexpired: b.now().Before(r.Expires)} })
	if r.code != "" {
		if code == "" {
			return fsm.Refuse(fsm.ApprovalInvalid, "this request was shown with a one-time code in a desktop notification; the answer must carry that code")
		}
		if subtle.ConstantTimeCompare([]byte(code), []byte(r.code)) != 1 {
			return b.wrongLocked(r, "one-time code", "does not match the one-time code in the desktop notification")
		}
	}
	t := RequestDeny
	if approve {
		t = RequestApprove
	}
	if _, err := r.owner.Fire(context.Background(), t); err != nil {
		return fsm.Refuse(fsm.ApprovalInvalid, "the approval request is no longer pending").WithCause(err)
	}
	if r.owner.State() != RequestApproved {
		delete(b.requests, id) // denied or expired: nothing can use it
	}
	if r.owner.State() == RequestExpired {
		return fsm.Refuse(fsm.ApprovalInvalid, "the approval request expired")
	}
	return nil
}

// Use presents request id with the scope of the attach that wants it. A
// matching, approved, unexpired request mints a grant and is consumed; a
// matching use of a pending request returns ConsentRequired and leaves it
// waiting; a use whose scope does not match is refused and leaves the
// request as it was, for the attach it was made for.
func (b *Broker) Use(id string, scope Scope) (*Grant, error) {
	scope.RunnerInstance = b.Instance
	scope = scope.Canonical()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expireLocked()
	r, ok := b.requests[id]
	if !ok {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "no such approval request (unknown, used or expired)")
	}
	d := scope.Digest()
	now := b.now()
	matches := subtle.ConstantTimeCompare(d[:], r.digest[:]) == 1
	r.owner.SetFacts(func(f *RequestFacts) { *f = RequestFacts{Matches: matches, Unexpired: now.Before(r.Expires)} })
	m := &minting{at: now}
	if _, err := fsm.FireWith(context.Background(), r.owner, RequestUse, m); err != nil {
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the approval request cannot be used").WithCause(err)
	}
	switch {
	case !matches:
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the approval request was made for another attach (another session, browser, allowlist, evaluate switch or scopes); it is left for that attach")
	case r.owner.State() == RequestPending:
		return nil, fsm.Refuse(fsm.ConsentRequired, "the approval request is still waiting for a person")
	case r.owner.State() != RequestConsumed:
		delete(b.requests, id)
		return nil, fsm.Refuse(fsm.ApprovalInvalid, "the approval request expired")
	}
	delete(b.requests, id)
	g := m.grant
	if old := b.grants[scope.BrowserID]; old != nil {
		old.Revoke()
	}
	b.grants[scope.BrowserID] = g
	return g, nil
}

// Grant returns the live grant for browserID when it covers scope (same
// Runner, session, browser process and endpoint; nothing wider than what
// the person approved), touching its idle timer. A browser restart (new
// fingerprint) or a wider attach finds none.
func (b *Broker) Grant(browserID string, scope Scope) (*Grant, error) {
	scope.RunnerInstance = b.Instance
	b.mu.Lock()
	g := b.grants[browserID]
	b.mu.Unlock()
	if g == nil {
		return nil, fsm.Refuse(fsm.ConsentRequired, "no live grant for this browser")
	}
	if !g.scope.Covers(scope) {
		return nil, fsm.Refuse(fsm.ConsentRequired, "the browser, the session or what is asked (allowlist, evaluate, scopes) changed since the approval; a new approval is needed")
	}
	if err := g.Use(b.now()); err != nil {
		return nil, err
	}
	return g, nil
}

// Revalidate checks that g is still browserID's live grant (none replaced
// or revoked it) and touches its idle timer: a reconnect continues only
// under the grant the attachment was made with.
func (b *Broker) Revalidate(browserID string, g *Grant) error {
	b.mu.Lock()
	cur := b.grants[browserID]
	b.mu.Unlock()
	if cur != g {
		return fsm.Refuse(fsm.ConsentRevoked, "the grant this attachment was made under is gone; a new approval is needed")
	}
	return g.Use(b.now())
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
		g.end(GrantDiscard)
	}
}

func (b *Broker) expireLocked() {
	now := b.now()
	for id, r := range b.requests {
		if !now.Before(r.Expires) {
			delete(b.requests, id)
			// A request in the book is pending or approved, and both expire.
			if _, err := r.owner.Fire(context.Background(), RequestExpire); err != nil {
				panic(fmt.Sprintf("consent: approval request: %v", err))
			}
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

// CodeDigits is the length of a one-time code.
const CodeDigits = 6

// randomCode returns CodeDigits uniformly drawn decimal digits.
func randomCode() string {
	n, err := rand.Int(rand.Reader, new(big.Int).Exp(big.NewInt(10), big.NewInt(CodeDigits), nil))
	if err != nil {
		panic(fmt.Errorf("consent: crypto/rand: %w", err))
	}
	return fmt.Sprintf("%0*d", CodeDigits, n.Int64())
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
			return id, r.owner.State(), true
		}
	}
	return "", "", false
}

package consent

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestAttemptProperties(t *testing.T) { fsmtest.Check(t, AttemptSpec) }
func TestRequestProperties(t *testing.T) { fsmtest.Check(t, RequestSpec) }
func TestGrantProperties(t *testing.T)   { fsmtest.Check(t, GrantSpec) }

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newTestBroker() (*Broker, *clock) {
	c := &clock{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	b := NewBroker()
	b.Now = c.Now
	return b, c
}

func testScope() Scope {
	return Scope{Session: "s1", BrowserID: "b1", Fingerprint: "100:5:/usr/lib/chromium/chromium", Endpoint: "e",
		Allow: []string{"example.com", "https://other.org"}, Scopes: []string{"browser:read", "browser:control"}, ReconnectBudget: 3}
}

func TestApprovedRequestMintsOneGrant(t *testing.T) {
	b, _ := newTestBroker()
	r, err := b.NewRequest(testScope(), "attach")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Use(r.ID, testScope()); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("use before approval = %v, want %s", err, fsm.ConsentRequired)
	}
	if err := b.Approve(r.ID); err != nil {
		t.Fatal(err)
	}
	g, err := b.Use(r.ID, testScope())
	if err != nil || g.State() != GrantLive {
		t.Fatalf("use after approval = %v, %v", g, err)
	}
	if _, err := b.Use(r.ID, testScope()); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("reuse = %v, want %s", err, fsm.ApprovalInvalid)
	}
	if _, err := b.Grant("b1", testScope()); err != nil {
		t.Fatalf("grant lookup: %v", err)
	}
}

// TestMismatchedUseLeavesRequest: an attach with another scope naming a
// request (pending or approved) is refused and does not spend it.
func TestMismatchedUseLeavesRequest(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	other := testScope()
	other.Fingerprint = "101:9:/usr/lib/chromium/chromium"
	if _, err := b.Use(r.ID, other); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("mismatched use of a pending request = %v, want %s", err, fsm.ApprovalInvalid)
	}
	if err := b.Approve(r.ID); err != nil {
		t.Fatalf("approve after a mismatched use: %v", err)
	}
	wider := testScope()
	wider.Evaluate = true
	if _, err := b.Use(r.ID, wider); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("mismatched use of an approved request = %v, want %s", err, fsm.ApprovalInvalid)
	}
	if _, err := b.Use(r.ID, testScope()); err != nil {
		t.Fatalf("the matching use after a mismatch = %v, want its grant", err)
	}
}

// TestDigestCoversEveryScopeField: changing any field of the scope changes
// the digest, and spelling the same allowlist or scopes differently does not.
func TestDigestCoversEveryScopeField(t *testing.T) {
	base := testScope()
	changes := map[string]func(*Scope){
		"runner":      func(s *Scope) { s.RunnerInstance = "other" },
		"session":     func(s *Scope) { s.Session = "s2" },
		"browser":     func(s *Scope) { s.BrowserID = "b2" },
		"fingerprint": func(s *Scope) { s.Fingerprint = "1:1:/x" },
		"endpoint":    func(s *Scope) { s.Endpoint = "e2" },
		"allow":       func(s *Scope) { s.Allow = append(s.Allow, "third.net") },
		"evaluate":    func(s *Scope) { s.Evaluate = true },
		"scopes":      func(s *Scope) { s.Scopes = append(s.Scopes, "browser:launch") },
		"reconnect":   func(s *Scope) { s.ReconnectBudget = 4 },
		"press":       func(s *Scope) { s.PressPrompt = true },
	}
	// Every field of Scope has a change above.
	if n := reflect.TypeOf(Scope{}).NumField(); n != len(changes) {
		t.Fatalf("Scope has %d fields, the test changes %d", n, len(changes))
	}
	for name, change := range changes {
		s := testScope()
		change(&s)
		if s.Digest() == base.Digest() {
			t.Errorf("changing %s leaves the digest", name)
		}
	}
	same := testScope()
	same.Allow = []string{"https://OTHER.org", "Example.com", "example.com", "*.dropped.com"}
	same.Scopes = []string{"browser:control", "browser:read", "browser:read"}
	if same.Digest() != base.Digest() {
		t.Errorf("the same allowlist and scopes spelled differently change the digest")
	}
}

// TestGrantCoversOnlyNarrower: a live grant serves an attach asking for the
// same or less, and nothing wider.
func TestGrantCoversOnlyNarrower(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	if _, err := b.Use(r.ID, testScope()); err != nil {
		t.Fatal(err)
	}
	narrower := map[string]func(*Scope){
		"same":             func(*Scope) {},
		"fewer origins":    func(s *Scope) { s.Allow = []string{"example.com"} },
		"a subdomain":      func(s *Scope) { s.Allow = []string{"www.example.com:8080"} },
		"no origins":       func(s *Scope) { s.Allow = nil },
		"fewer scopes":     func(s *Scope) { s.Scopes = []string{"browser:read"} },
		"fewer reconnects": func(s *Scope) { s.ReconnectBudget = 1 },
	}
	for name, change := range narrower {
		s := testScope()
		change(&s)
		if _, err := b.Grant("b1", s); err != nil {
			t.Errorf("%s: %v, want the grant reused", name, err)
		}
	}
	wider := map[string]func(*Scope){
		"another origin":  func(s *Scope) { s.Allow = append(s.Allow, "third.net") },
		"a wider origin":  func(s *Scope) { s.Allow = []string{"other.org"} },
		"evaluate on":     func(s *Scope) { s.Evaluate = true },
		"another scope":   func(s *Scope) { s.Scopes = append(s.Scopes, "browser:launch") },
		"another session": func(s *Scope) { s.Session = "s2" },
		"another process": func(s *Scope) { s.Fingerprint = "1:1:/x" },
		"more reconnects": func(s *Scope) { s.ReconnectBudget = 9 },
		"pressing prompt": func(s *Scope) { s.PressPrompt = true },
	}
	for name, change := range wider {
		s := testScope()
		change(&s)
		if _, err := b.Grant("b1", s); !fsm.IsCode(err, fsm.ConsentRequired) {
			t.Errorf("%s: %v, want %s", name, err, fsm.ConsentRequired)
		}
	}
}

// TestOneTimeCode: once a code was issued, an answer needs it; wrong codes
// are counted and the bound denies the request; the code is six digits and
// is shown a bounded number of times.
func TestOneTimeCode(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	code, err := b.IssueCode(r.ID)
	if err != nil || len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		t.Fatalf("IssueCode = %q, %v", code, err)
	}
	if again, _ := b.IssueCode(r.ID); again != code {
		t.Fatalf("a second show drew another code")
	}
	if _, err := b.IssueCode(r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.IssueCode(r.ID); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("show %d = %v, want %s", MaxCodeShows+1, err, fsm.LimitExceeded)
	}
	if err := b.Approve(r.ID); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("approve without the code = %v", err)
	}
	if info, _ := b.Info(r.ID); !info.CodeIssued || info.AttemptsLeft != MaxCodeAttempts {
		t.Fatalf("info = %+v (an answer without a code is not an attempt)", info)
	}
	if err := b.Answer(r.ID, true, wrong(code)); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("wrong code = %v", err)
	}
	if err := b.Answer(r.ID, true, code); err != nil {
		t.Fatalf("right code after one wrong = %v", err)
	}
	if _, err := b.Use(r.ID, testScope()); err != nil {
		t.Fatal(err)
	}

	r2, _ := b.NewRequest(testScope(), "attach")
	code2, _ := b.IssueCode(r2.ID)
	for i := 1; i <= MaxCodeAttempts; i++ {
		if err := b.Answer(r2.ID, true, wrong(code2)); !fsm.IsCode(err, fsm.ApprovalInvalid) {
			t.Fatalf("wrong code %d = %v", i, err)
		}
	}
	if err := b.Answer(r2.ID, true, code2); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("the right code after %d wrong ones = %v, want the request denied", MaxCodeAttempts, err)
	}
	if _, err := b.Use(r2.ID, testScope()); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("use of a request denied by wrong codes = %v", err)
	}

	// Deny takes the same code.
	r3, _ := b.NewRequest(testScope(), "attach")
	code3, _ := b.IssueCode(r3.ID)
	if err := b.Deny(r3.ID); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("deny without the code = %v", err)
	}
	if err := b.Answer(r3.ID, false, code3); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Info(r3.ID); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("a denied request is still pending: %v", err)
	}
}

func wrong(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

func TestExpiredRequestRefused(t *testing.T) {
	b, c := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	c.now = c.now.Add(RequestTTL + time.Second)
	if err := b.Approve(r.ID); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("approve after expiry = %v", err)
	}
	r2, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r2.ID)
	c.now = c.now.Add(RequestTTL + time.Second)
	if _, err := b.Use(r2.ID, testScope()); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("use after expiry = %v", err)
	}
}

func TestPendingRequestsAreBounded(t *testing.T) {
	b, _ := newTestBroker()
	for i := 0; i < maxPendingRequests; i++ {
		if _, err := b.NewRequest(testScope(), "x"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if _, err := b.NewRequest(testScope(), "x"); !fsm.IsCode(err, fsm.LimitExceeded) {
		t.Fatalf("request over the bound = %v, want %s", err, fsm.LimitExceeded)
	}
}

func TestGrantExpiry(t *testing.T) {
	b, c := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	g, _ := b.Use(r.ID, testScope())
	// Idle: used every 29 minutes it lives on until the absolute expiry.
	for c.now.Add(IdleExpiry).Before(g.absolute) {
		c.now = c.now.Add(29 * time.Minute)
		if _, err := b.Grant("b1", testScope()); err != nil && c.now.Before(g.absolute) {
			t.Fatalf("grant used in time refused at %v: %v", c.now, err)
		}
	}
	c.now = g.absolute.Add(time.Second)
	if _, err := b.Grant("b1", testScope()); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("after absolute expiry = %v", err)
	}
	if g.State() != GrantAbsoluteExpired {
		t.Fatalf("state %s, want %s", g.State(), GrantAbsoluteExpired)
	}

	r2, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r2.ID)
	g2, _ := b.Use(r2.ID, testScope())
	c.now = c.now.Add(IdleExpiry + time.Second)
	if _, err := b.Grant("b1", testScope()); !fsm.IsCode(err, fsm.ConsentRequired) || g2.State() != GrantIdleExpired {
		t.Fatalf("after idle expiry = %v, state %s", err, g2.State())
	}
}

func TestNewFingerprintNeedsNewApproval(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	b.Use(r.ID, testScope())
	restarted := testScope()
	restarted.Fingerprint = "200:77:/usr/lib/chromium/chromium"
	if _, err := b.Grant("b1", restarted); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("grant for a restarted browser = %v, want %s", err, fsm.ConsentRequired)
	}
}

func TestRevokedGrantStaysRevoked(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	g, _ := b.Use(r.ID, testScope())
	g.Revoke()
	if err := g.Use(time.Now()); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("use after revoke = %v, want %s", err, fsm.ConsentRevoked)
	}
}

func TestRunnerRestartDiscardsGrants(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	g, _ := b.Use(r.ID, testScope())
	b.Discard()
	if g.State() != GrantDiscardedRestart {
		t.Fatalf("state %s after discard", g.State())
	}
	fresh := NewBroker()
	if _, err := fresh.Grant("b1", testScope()); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("new broker found a grant: %v", err)
	}
}

// TestSelectExactFakeAdapterCases covers the adversarial prompt cases with a
// fake adapter's candidates (a desktop prompt cannot be driven here).
func TestSelectExactFakeAdapterCases(t *testing.T) {
	id := Identity{PID: 10, StartTime: 99, Executable: "/usr/lib/chromium/chromium"}
	good := Candidate{ID: "a", OwnerPID: 10, OwnerStart: 99, Executable: id.Executable, Role: "push button", Action: "allow", Modal: true}
	decoy := good
	decoy.OwnerPID, decoy.ID = 11, "decoy"
	reused := good
	reused.OwnerStart, reused.ID = 98, "reused-pid"
	cancel := good
	cancel.Action, cancel.ID = "cancel", "cancel"
	cases := []struct {
		name  string
		cands []Candidate
		want  string
	}{
		{"one exact", []Candidate{good, cancel}, "a"},
		{"decoy from another process", []Candidate{decoy}, ""},
		{"reused pid", []Candidate{reused}, ""},
		{"two matching", []Candidate{good, good}, ""},
		{"none", nil, ""},
	}
	for _, c := range cases {
		got, ok := SelectExact(id, c.cands)
		if (c.want != "") != ok || got.ID != c.want {
			t.Errorf("%s: SelectExact = %q %v, want %q", c.name, got.ID, ok, c.want)
		}
	}
}

func TestMatchFindsTheSameScope(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	id, st, ok := b.Match(testScope())
	if !ok || id != r.ID || st != RequestPending {
		t.Fatalf("Match = %q %s %v", id, st, ok)
	}
	other := testScope()
	other.Session = "s2"
	if _, _, ok := b.Match(other); ok {
		t.Fatal("Match found a request for another session")
	}
}

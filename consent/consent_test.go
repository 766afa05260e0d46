package consent

import (
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

func TestAttemptProperties(t *testing.T) { fsm.Check(t, AttemptSpec) }
func TestRequestProperties(t *testing.T) { fsm.Check(t, RequestSpec) }
func TestGrantProperties(t *testing.T)   { fsm.Check(t, GrantSpec) }

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newTestBroker() (*Broker, *clock) {
	c := &clock{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	b := NewBroker()
	b.Now = c.Now
	return b, c
}

func testScope() Scope {
	return Scope{Session: "s1", BrowserID: "b1", Fingerprint: "100:5:/usr/lib/chromium/chromium", Endpoint: "e", SideEffects: []string{"control"}, ReconnectBudget: 3}
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

func TestMismatchedUseConsumesRequest(t *testing.T) {
	b, _ := newTestBroker()
	r, _ := b.NewRequest(testScope(), "attach")
	b.Approve(r.ID)
	other := testScope()
	other.Fingerprint = "101:9:/usr/lib/chromium/chromium"
	if _, err := b.Use(r.ID, other); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("mismatched use = %v, want %s", err, fsm.ApprovalInvalid)
	}
	if _, err := b.Use(r.ID, testScope()); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("matching use after a mismatch = %v, want it consumed", err)
	}
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

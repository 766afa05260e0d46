package consent

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// The lifetimes the design gives (spec/threat-model.md): written out here,
// not read from the constants, so a changed constant fails these tests.
const (
	designRequestTTL = 5 * time.Minute
	designIdle       = 30 * time.Minute
	designAbsolute   = 8 * time.Hour
)

// grantAt mints a grant for testScope at the clock's time.
func grantAt(t *testing.T, b *Broker) *Grant {
	t.Helper()
	r, err := b.NewRequest(testScope(), "attach")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Approve(r.ID); err != nil {
		t.Fatal(err)
	}
	g, err := b.Use(r.ID, testScope())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGrantAbsoluteExpiryInstant: used every 29 minutes a grant serves
// until one nanosecond before its absolute expiry, and is refused at
// exactly that instant.
func TestGrantAbsoluteExpiryInstant(t *testing.T) {
	b, c := newTestBroker()
	minted := c.now
	g := grantAt(t, b)
	end := minted.Add(designAbsolute)
	for c.now.Add(29 * time.Minute).Before(end) {
		c.now = c.now.Add(29 * time.Minute)
		if _, err := b.Grant("b1", testScope()); err != nil {
			t.Fatalf("use at +%v refused: %v", c.now.Sub(minted), err)
		}
	}
	c.now = end.Add(-time.Nanosecond)
	if _, err := b.Grant("b1", testScope()); err != nil {
		t.Fatalf("use 1ns before the absolute expiry refused: %v", err)
	}
	c.now = end
	if _, err := b.Grant("b1", testScope()); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("use at the absolute expiry = %v, want %s", err, fsm.ConsentRequired)
	}
	if g.State() != GrantAbsoluteExpired {
		t.Fatalf("state %s, want %s", g.State(), GrantAbsoluteExpired)
	}
	c.now = minted // nothing re-arms it, not even a clock that went back
	if _, err := b.Grant("b1", testScope()); err == nil {
		t.Fatal("an expired grant served again")
	}
}

// TestGrantIdleExpiryInstant: unused, a grant serves one nanosecond before
// its idle expiry (which restarts it) and is refused exactly at it.
func TestGrantIdleExpiryInstant(t *testing.T) {
	b, c := newTestBroker()
	g := grantAt(t, b)
	c.now = c.now.Add(designIdle - time.Nanosecond)
	if _, err := b.Grant("b1", testScope()); err != nil {
		t.Fatalf("use 1ns before the idle expiry refused: %v", err)
	}
	if want := c.now.Add(designIdle); !g.Expiry().Equal(want) {
		t.Fatalf("expiry %v after a use, want the use + %v", g.Expiry(), designIdle)
	}
	c.now = c.now.Add(designIdle)
	if _, err := b.Grant("b1", testScope()); !fsm.IsCode(err, fsm.ConsentRequired) {
		t.Fatalf("use at the idle expiry = %v, want %s", err, fsm.ConsentRequired)
	}
	if g.State() != GrantIdleExpired {
		t.Fatalf("state %s, want %s", g.State(), GrantIdleExpired)
	}
}

// TestRequestExpiryInstant: a request can be approved and used one
// nanosecond before it expires, and neither exactly at it.
func TestRequestExpiryInstant(t *testing.T) {
	b, c := newTestBroker()
	created := c.now
	r, _ := b.NewRequest(testScope(), "attach")
	c.now = created.Add(designRequestTTL - time.Nanosecond)
	if err := b.Approve(r.ID); err != nil {
		t.Fatalf("approve 1ns before expiry: %v", err)
	}
	if _, err := b.Use(r.ID, testScope()); err != nil {
		t.Fatalf("use 1ns before expiry: %v", err)
	}

	created = c.now
	r2, _ := b.NewRequest(testScope(), "attach")
	c.now = created.Add(designRequestTTL)
	if err := b.Approve(r2.ID); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("approve at expiry = %v, want %s", err, fsm.ApprovalInvalid)
	}
	c.now = created
	r3, _ := b.NewRequest(testScope(), "attach")
	if err := b.Approve(r3.ID); err != nil {
		t.Fatal(err)
	}
	c.now = created.Add(designRequestTTL)
	if _, err := b.Use(r3.ID, testScope()); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("use of an approved request at expiry = %v, want %s", err, fsm.ApprovalInvalid)
	}
}

// TestNewerGrantRevokesOlder: a second approval for the same browser
// revokes the first grant for good; only the newer one serves.
func TestNewerGrantRevokesOlder(t *testing.T) {
	b, c := newTestBroker()
	old := grantAt(t, b)
	c.now = c.now.Add(time.Minute)
	newer := grantAt(t, b)
	if old.State() != GrantRevokedState || newer.State() != GrantLive {
		t.Fatalf("older %s, newer %s; want revoked and active", old.State(), newer.State())
	}
	if err := old.Use(c.now); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("use of the older grant = %v, want %s", err, fsm.ConsentRevoked)
	}
	if err := b.Revalidate("b1", old); !fsm.IsCode(err, fsm.ConsentRevoked) {
		t.Fatalf("reconnect under the older grant = %v, want %s", err, fsm.ConsentRevoked)
	}
	if g, err := b.Grant("b1", testScope()); err != nil || g != newer {
		t.Fatalf("lookup = %p, %v; want the newer grant", g, err)
	}
}

// TestDigestChangesWithEveryFieldByReflection changes every field of Scope,
// whatever fields it has, to another value that canonicalization keeps,
// and expects another digest.
func TestDigestChangesWithEveryFieldByReflection(t *testing.T) {
	base := testScope()
	base.RunnerInstance = "r1"
	want := base.Digest()
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		changed := false
		for _, v := range otherValues(reflect.ValueOf(base).Field(i)) {
			s := base
			reflect.ValueOf(&s).Elem().Field(i).Set(v)
			if reflect.DeepEqual(s.Canonical(), base.Canonical()) {
				continue // canonicalization drops this value; try the next
			}
			changed = true
			if s.Digest() == want {
				t.Errorf("field %s changed (%v) but the digest did not", f.Name, v)
			}
		}
		if !changed {
			t.Errorf("field %s: no other value survives canonicalization; the test cannot judge it", f.Name)
		}
	}
}

// otherValues returns values of v's type that differ from v.
func otherValues(v reflect.Value) []reflect.Value {
	switch v.Kind() {
	case reflect.String:
		return []reflect.Value{reflect.ValueOf(v.String() + "-other")}
	case reflect.Bool:
		return []reflect.Value{reflect.ValueOf(!v.Bool())}
	case reflect.Int:
		return []reflect.Value{reflect.ValueOf(int(v.Int()) + 1)}
	case reflect.Slice:
		var out []reflect.Value
		cur := v.Interface().([]string)
		for _, extra := range append(slices.Clone(AllScopes), "https://third.example.net") {
			if !slices.Contains(cur, extra) {
				out = append(out, reflect.ValueOf(append(slices.Clone(cur), extra)))
			}
		}
		return append(out, reflect.ValueOf(cur[:len(cur)-1]))
	}
	panic("consent test: a Scope field of a kind the test does not know: " + v.Kind().String())
}

// TestLimitsPinned: the bounds the design states, as numbers.
func TestLimitsPinned(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"wrong one-time codes", MaxCodeAttempts, 3},
		{"code shows", MaxCodeShows, 3},
		{"pending requests", maxPendingRequests, 16},
		{"code digits", CodeDigits, 6},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, the design says %d", c.name, c.got, c.want)
		}
	}
	if MinPressDelay != time.Second {
		t.Errorf("MinPressDelay %v, the design says one second", MinPressDelay)
	}
	for _, d := range []struct {
		name      string
		got, want time.Duration
	}{
		{"request", RequestTTL, designRequestTTL}, {"idle", IdleExpiry, designIdle}, {"absolute", AbsoluteExpiry, designAbsolute},
	} {
		if d.got != d.want {
			t.Errorf("%s lifetime %v, the design says %v", d.name, d.got, d.want)
		}
	}
}

// TestCoversRefusesEveryScopeFieldWidened varies every field of a grant's
// scope one at a time (by reflection, so a field added later is varied
// too): another identity (runner, session, browser, process, endpoint), an
// origin or a scope more, evaluation or pressing the prompt turned on, one
// reconnect more — each is not covered by the grant's scope.
func TestCoversRefusesEveryScopeFieldWidened(t *testing.T) {
	granted := testScope()
	granted.RunnerInstance = "r1"
	if !granted.Covers(granted) {
		t.Fatal("a scope does not cover itself")
	}
	v := reflect.ValueOf(granted)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		t.Run(f.Name, func(t *testing.T) {
			wider := granted
			fv := reflect.ValueOf(&wider).Elem().Field(i)
			switch fv.Kind() {
			case reflect.String:
				fv.SetString(fv.String() + "-other")
			case reflect.Bool:
				if fv.Bool() {
					t.Fatalf("%s is on in the granted scope: turn it off there so turning it on widens", f.Name)
				}
				fv.SetBool(true)
			case reflect.Int:
				fv.SetInt(fv.Int() + 1)
			case reflect.Slice:
				extra := map[string]string{"Allow": "https://third.net", "Scopes": "browser:launch"}[f.Name]
				if extra == "" {
					t.Fatalf("no wider value for %s", f.Name)
				}
				fv.Set(reflect.Append(reflect.ValueOf(slices.Clone(fv.Interface().([]string))), reflect.ValueOf(extra)))
			default:
				t.Fatalf("no case for %s (%s)", f.Name, fv.Kind())
			}
			if granted.Covers(wider) {
				t.Fatalf("a grant for %+v covers %s widened: %+v", granted, f.Name, wider)
			}
		})
	}
}

// TestRevalidateSeesAnEndedGrantTheBrokerStillHolds: the broker's map still
// names the grant after it ended on its own (idle expiry, or a revoke of
// the grant itself): a reconnect's revalidation is refused from the
// grant's final state, which stays final, not waved through because the
// map entry is the same pointer.
func TestRevalidateSeesAnEndedGrantTheBrokerStillHolds(t *testing.T) {
	for _, c := range []struct {
		name  string
		end   func(*Grant, *clock)
		code  fsm.Code
		state GrantState
	}{
		{"idle expiry", func(_ *Grant, c *clock) { c.now = c.now.Add(IdleExpiry) }, fsm.ConsentRequired, GrantIdleExpired},
		{"revoked", func(g *Grant, _ *clock) { g.Revoke() }, fsm.ConsentRevoked, GrantRevokedState},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, clk := newTestBroker()
			r, _ := b.NewRequest(testScope(), "attach")
			b.Approve(r.ID)
			g, err := b.Use(r.ID, testScope())
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Revalidate("b1", g); err != nil {
				t.Fatalf("revalidate of the live grant: %v", err)
			}
			c.end(g, clk)
			for range 2 { // and again: the final state is not left
				if err := b.Revalidate("b1", g); !fsm.IsCode(err, c.code) {
					t.Fatalf("revalidate after %s = %v, want %s", c.name, err, c.code)
				}
				if g.State() != c.state {
					t.Fatalf("state %s, want %s", g.State(), c.state)
				}
			}
		})
	}
}

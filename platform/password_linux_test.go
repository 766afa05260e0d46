package platform

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/internal/persontty"
)

// TestLoginPasswordAgainstShadow checks a real login's real hash (created
// with useradd and chpasswd): the right password matches, a wrong, empty,
// NUL-carrying or oversized one does not; passwd -S's answer is read as
// usable, locked (usermod -L) and empty (passwd -d); an unknown login is
// unknown, never usable.
func TestLoginPasswordAgainstShadow(t *testing.T) {
	const password = "correct horse 7"
	name := persontty.Login(t, password)
	ctx := context.Background()
	state := func() PasswordState {
		t.Helper()
		lp, err := LoginPasswordOf(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return lp.State
	}
	if s := state(); s != PasswordUsable {
		t.Fatalf("a login with a password is %q, want usable", s)
	}
	check := func(pw string) bool {
		t.Helper()
		ok, err := CheckLoginPassword(ctx, name, []byte(pw))
		if err != nil {
			t.Fatalf("check %q: %v", pw, err)
		}
		return ok
	}
	if !check(password) {
		t.Fatal("the right password did not match")
	}
	for _, wrong := range []string{"allow", "", password + "\x00", "correct horse 8", strings.Repeat("a", MaxPasswordBytes+1)} {
		if check(wrong) {
			t.Fatalf("%q matched", wrong)
		}
	}
	run := func(argv ...string) {
		t.Helper()
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	run("usermod", "-L", name)
	if s := state(); s != PasswordLocked {
		t.Fatalf("a locked login is %q", s)
	}
	if check(password) {
		t.Fatal("a locked login's password matched")
	}
	run("passwd", "-d", name)
	if s := state(); s != PasswordEmpty {
		t.Fatalf("a login without a password is %q", s)
	}
	if check("") {
		t.Fatal("an empty password matched (nonull)")
	}
	lp, err := LoginPasswordOf(ctx, name+"x")
	if err != nil || lp.State != PasswordUnknown || lp.Reason == "" {
		t.Fatalf("an unknown login = %+v, %v", lp, err)
	}
}

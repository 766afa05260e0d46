package persontty

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Login creates a real login with password (useradd, then chpasswd: a real
// hash in /etc/shadow, of the system's default kind) and returns its name;
// the login is removed when the test ends. It needs root, which CI has.
func Login(t testing.TB, password string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("this test creates a login with a known password (useradd, chpasswd) and needs root (CI runs as root)")
	}
	var b [4]byte
	rand.Read(b[:])
	name := "wcxtest" + hex.EncodeToString(b[:])
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd (package passwd): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(name + ":" + password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v\n%s", err, out)
	}
	return name
}

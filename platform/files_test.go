package platform

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTryLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second holder's lock = %v, want ErrLocked", err)
	}
	a.Close()
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}

func TestOpenNoFollowRefusesLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenNoFollow(link); !errors.Is(err, ErrLink) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("OpenNoFollow(link) = %v, want ErrLink", err)
	}
	f, err := OpenNoFollow(target)
	if err != nil {
		t.Fatalf("OpenNoFollow(file) = %v", err)
	}
	defer f.Close()
	if !OwnedByMe(f) {
		t.Error("a file this test made is not owned by its user")
	}
}

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// mkdir creates dir with exactly mode.
func mkdir(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantPrivateRefusal checks err is a ProfileUnsafe refusal whose detail
// names no path and whose cause is a *PrivateDirError.
func wantPrivateRefusal(t *testing.T, name string, err error) {
	t.Helper()
	r, ok := fsm.AsRefusal(err)
	if !ok || r.Code != fsm.ProfileUnsafe {
		t.Errorf("%s: err = %v, want a %s refusal", name, err, fsm.ProfileUnsafe)
		return
	}
	if strings.Contains(r.Detail, "/") || strings.Contains(r.Error(), os.TempDir()) {
		t.Errorf("%s: refusal %q names a path", name, r.Error())
	}
	if _, ok := errors.AsType[*PrivateDirError](err); !ok {
		t.Errorf("%s: cause is not a *PrivateDirError", name)
	}
}

func TestCheckPrivateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ok := mkdir(t, filepath.Join(root, "ok"), 0o700)
	open := mkdir(t, filepath.Join(root, "open"), 0o755)
	sticky := mkdir(t, filepath.Join(root, "sticky"), 0o700|os.ModeSticky)
	real := mkdir(t, filepath.Join(root, "real"), 0o700)
	inner := mkdir(t, filepath.Join(real, "inner"), 0o700)
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	shared := mkdir(t, filepath.Join(root, "shared"), 0o777)
	underShared := mkdir(t, filepath.Join(shared, "p"), 0o700)
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil { // undo any umask
		t.Fatal(err)
	}

	if err := CheckPrivateDir(ok); err != nil {
		t.Errorf("0700 directory: %v, want nil", err)
	}
	if err := CheckPrivateDir(inner); err != nil {
		t.Errorf("0700 inside 0700: %v, want nil", err)
	}
	wantPrivateRefusal(t, "0755", CheckPrivateDir(open))
	wantPrivateRefusal(t, "sticky bit", CheckPrivateDir(sticky))
	// A symlinked ancestor of this user's is followed (a symlinked ~/.local);
	// the directory itself may not be a symlink.
	if err := CheckPrivateDir(filepath.Join(root, "link", "inner")); err != nil {
		t.Errorf("through this user's symlink: %v, want nil", err)
	}
	wantPrivateRefusal(t, "symlink itself", CheckPrivateDir(filepath.Join(root, "link")))
	wantPrivateRefusal(t, "world-writable parent", CheckPrivateDir(underShared))
	wantPrivateRefusal(t, "a file", CheckPrivateDir(file))
	if err := CheckPrivateDir(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist", err)
	}
	if err := CheckPrivateDir(""); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Errorf("empty path: %v, want %s", err, fsm.InvalidArgument)
	}
	if err := CheckPrivateDir("/"); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Errorf("root: %v, want %s", err, fsm.InvalidArgument)
	}
}

func TestCheckPrivateDirOtherOwner(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	root := t.TempDir()
	theirs := mkdir(t, filepath.Join(root, "theirs"), 0o700)
	if err := os.Chown(theirs, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	wantPrivateRefusal(t, "owned by another uid", CheckPrivateDir(theirs))
	parent := mkdir(t, filepath.Join(root, "parent"), 0o755)
	child := mkdir(t, filepath.Join(parent, "child"), 0o700)
	if err := os.Chown(parent, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	wantPrivateRefusal(t, "parent owned by another uid", CheckPrivateDir(child))
	// Another user's symlink in the path is not followed: they could point
	// it elsewhere at any time.
	real := mkdir(t, filepath.Join(root, "real"), 0o700)
	inner := mkdir(t, filepath.Join(real, "inner"), 0o700)
	link := filepath.Join(root, "theirlink")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivateDir(inner); err != nil {
		t.Fatalf("the target itself: %v, want nil", err)
	}
	wantPrivateRefusal(t, "another user's symlink", CheckPrivateDir(filepath.Join(link, "inner")))
}

func TestEnsurePrivateDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := EnsurePrivateDir(deep); err != nil {
		t.Fatalf("EnsurePrivateDir: %v", err)
	}
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), deep} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, mode %v; want 0700", d, err, fi.Mode().Perm())
		}
	}
	if err := EnsurePrivateDir(deep); err != nil {
		t.Errorf("EnsurePrivateDir again: %v", err)
	}
	// Through this user's symlink (relative, as `ln -s` often makes them):
	// created on the other side.
	target := mkdir(t, filepath.Join(root, "target"), 0o700)
	if err := os.Symlink("target", filepath.Join(root, "via")); err != nil {
		t.Fatal(err)
	}
	if err := EnsurePrivateDir(filepath.Join(root, "via", "x", "y")); err != nil {
		t.Errorf("ensure through this user's symlink: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(target, "x", "y")); err != nil || !fi.IsDir() {
		t.Errorf("EnsurePrivateDir did not create the directory behind the symlink (%v)", err)
	}
	// A symlink whose target lies under a directory others may write is
	// checked there, and refused.
	shared := mkdir(t, filepath.Join(root, "shared"), 0o777)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(root, "toshared")); err != nil {
		t.Fatal(err)
	}
	wantPrivateRefusal(t, "symlink into a shared directory", EnsurePrivateDir(filepath.Join(root, "toshared", "x")))
	if _, err := os.Lstat(filepath.Join(shared, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("EnsurePrivateDir created a directory under a shared one (%v)", err)
	}
	// A loop of symlinks ends.
	if err := os.Symlink(filepath.Join(root, "loop2"), filepath.Join(root, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "loop1"), filepath.Join(root, "loop2")); err != nil {
		t.Fatal(err)
	}
	wantPrivateRefusal(t, "symlink loop", EnsurePrivateDir(filepath.Join(root, "loop1", "x")))
	// An existing directory with a wrong mode is refused, not re-moded.
	open := mkdir(t, filepath.Join(root, "open"), 0o755)
	err := EnsurePrivateDir(open)
	wantPrivateRefusal(t, "ensure existing 0755", err)
	if r, _ := fsm.AsRefusal(err); r == nil || !strings.Contains(r.Detail, "0755") || !strings.Contains(r.Detail, "chmod 700") {
		t.Errorf("a wrong mode's refusal does not say the mode and the fix: %v", err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o755 {
		t.Errorf("EnsurePrivateDir changed an existing mode to %v", fi.Mode().Perm())
	}
}

package platform

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/slow"
)

// longTempDir makes a directory whose path is at least 100 bytes, as a
// nested CI temporary directory or macOS's /var/folders can be.
func longTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for len(dir) < 110 {
		dir = filepath.Join(dir, "nested-temporary-directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestShortTempDirWithLongTMPDIR: with TMPDIR too long for a socket below
// it, the directory is made where the socket fits, private to this user;
// with a short TMPDIR it is made in TMPDIR.
func TestShortTempDirWithLongTMPDIR(t *testing.T) {
	long := longTempDir(t)
	t.Setenv("TMPDIR", long)
	dir, err := ShortTempDir("webcodex-", TempParentRoom)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if strings.HasPrefix(dir, long) || len(dir)+TempParentRoom > SocketPathMax {
		t.Fatalf("ShortTempDir = %s (%d bytes): want a directory outside TMPDIR with %d bytes to spare", dir, len(dir), TempParentRoom)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(st.Uid) != os.Getuid() {
		t.Fatalf("ShortTempDir made %v owned by %d, want a 0700 directory of uid %d", fi.Mode(), st.Uid, os.Getuid())
	}

	short, err := os.MkdirTemp("/tmp", "w") // short whatever TMPDIR is
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	t.Setenv("TMPDIR", short)
	dir2, err := ShortTempDir("webcodex-", TempParentRoom)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir2) != short {
		t.Fatalf("with a short TMPDIR the directory is %s, want it in %s", dir2, short)
	}
	// Room no path can give: a refusal that says what to do.
	if _, err := ShortTempDir("webcodex-", SocketPathMax); !fsm.IsCode(err, fsm.RequiresSetup) || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("ShortTempDir with no room = %v, want %s naming TMPDIR", err, fsm.RequiresSetup)
	}
}

// TestLaunchWithLongTMPDIR: a TMPDIR of 100+ bytes, which makes Chromium
// itself abort ("Socket path too long", checked first so the test shows
// the danger is real), launches through Launch, loads a page, and leaves
// nothing behind. The browser's own failure is read into one line.
func TestLaunchWithLongTMPDIR(t *testing.T) {
	exe := needChromium(t)
	long := longTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), slow.Scale(60*time.Second))
	defer cancel()

	// Chromium started directly with that TMPDIR aborts, and says why.
	raw := filepath.Join(t.TempDir(), "raw")
	cmd := exec.CommandContext(ctx, exe, chromiumArgs(LaunchOptions{Headless: true, DebuggingPort: true}, raw, false)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+long, "HOME="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("Chromium with a %d-byte TMPDIR started: the premise does not hold on this Chromium", len(long))
	}
	if got := BrowserReason(out); got != "Socket path too long" {
		t.Fatalf("Chromium's own reason = %q, want %q (output %d bytes)", got, "Socket path too long", len(out))
	}

	t.Setenv("TMPDIR", long)
	udd := filepath.Join(t.TempDir(), "eph")
	if err := EnsurePrivateDir(udd); err != nil {
		t.Fatal(err)
	}
	p, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true, RemoveUserDataDir: true})
	if err != nil {
		t.Fatalf("Launch with a %d-byte TMPDIR: %v", len(long), err)
	}
	t.Cleanup(func() { p.Close(context.Background(), nil) })
	if strings.HasPrefix(p.TmpDir(), long) || len(p.TmpDir())+len(chromiumSocketTail) > SocketPathMax {
		t.Fatalf("the browser's TMPDIR %s is not where its sockets fit", p.TmpDir())
	}
	c := pipeConn(t, p)
	assertLoadsPage(t, c)
	fp := p.Fingerprint()
	if err := p.Close(ctx, nil); err != nil {
		t.Fatal(err)
	}
	assertGone(t, p, fp, udd, false)

	// A caller's launch directory too long for the sockets is refused
	// before anything starts.
	udd2 := filepath.Join(t.TempDir(), "eph2")
	if err := EnsurePrivateDir(udd2); err != nil {
		t.Fatal(err)
	}
	if _, err := Launch(ctx, LaunchOptions{Exec: exe, UserDataDir: udd2, Headless: true, TempParent: long}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("Launch in a too long TempParent = %v, want %s", err, fsm.InvalidArgument)
	}
	if left, _ := filepath.Glob(filepath.Join(long, browserTmpPattern+"*")); len(left) != 0 {
		t.Fatalf("the refused launch left %v", left)
	}
}

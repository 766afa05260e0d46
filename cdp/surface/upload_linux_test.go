package surface

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// TestUploadRefusesHardLinksAndOtherDevices: a file in the upload directory
// that is a hard link (to a secret outside it, or to another name inside
// it), or that lives on another device mounted inside the directory, is
// refused as upload_denied before anything reaches the page's real file
// input, with a detail that names no path; a plain file in the same
// directory uploads.
func TestUploadRefusesHardLinksAndOtherDevices(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	jail := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "the secret outside the jail")
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(jail, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(jail, "twin-a.txt"), "twin")
	if err := os.Link(filepath.Join(jail, "twin-a.txt"), filepath.Join(jail, "twin-b.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(jail, "ok.txt"), "plain")
	bad := []string{"linked.txt", "twin-a.txt", "twin-b.txt"}
	if mountOtherDevice(t, filepath.Join(jail, "mnt")) {
		writeFile(t, filepath.Join(jail, "mnt", "elsewhere.txt"), "on another device")
		if sameDevice(t, jail, filepath.Join(jail, "mnt", "elsewhere.txt")) {
			t.Fatal("the mount did not give another device")
		}
		bad = append(bad, filepath.Join("mnt", "elsewhere.txt"), filepath.Join(jail, "mnt", "elsewhere.txt"))
	}

	p, _ := testPage(t, "/controls", Options{UploadDir: jail})
	ctx := tctx(t)
	for _, name := range bad {
		_, err := p.Upload(ctx, Target{Label: "Upload"}, name)
		wantCode(t, err, fsm.UploadDenied)
		r, _ := fsm.AsRefusal(err)
		for _, leak := range []string{"/", jail, outside, "linked", "twin", "mnt", "elsewhere", "secret.txt"} {
			if strings.Contains(r.Detail, leak) {
				t.Fatalf("refusal of %s names a path (%q): %q", name, leak, r.Detail)
			}
		}
		// A refused file beside a good one refuses the whole upload.
		_, err = p.Upload(ctx, Target{Label: "Upload"}, "ok.txt", name)
		wantCode(t, err, fsm.UploadDenied)
	}
	var seen bool
	js(t, p, "window.uploaded !== undefined", &seen)
	if seen {
		t.Fatal("the page's file input received a file from a refused upload")
	}
	r := must(p.Upload(ctx, Target{Label: "Upload"}, "ok.txt"))(t)
	if len(r.Files) != 1 || r.Files[0] != "ok.txt" {
		t.Fatalf("files = %v", r.Files)
	}
	var up []string
	js(t, p, "window.uploaded", &up)
	if len(up) != 1 || up[0] != "ok.txt:5" {
		t.Fatalf("page saw %v", up)
	}
}

// mountOtherDevice mounts a small tmpfs at dir (inside the upload
// directory): the one way a file under the directory, by path and by
// realpath, can live on another device. It needs the privilege to mount
// (root, as in CI); without it the device case is skipped and said so.
func mountOtherDevice(t *testing.T, dir string) bool {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Logf("cannot mount here (%v): the another-device case is not run", err)
			return false
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return true
}

func sameDevice(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	_, da, _ := linksAndDevice(sa)
	_, db, _ := linksAndDevice(sb)
	return da == db
}

// TestUploadRefusesSpecialFilesAndSwaps: a FIFO (which a plain open would
// block on), a unix socket, a device (a node made here where this user may,
// and a link to /dev/null), /proc and /sys files by absolute path and by a
// link inside the upload directory are all refused at once, naming no path.
// The file the page reads is the file that was checked: replacing the
// uploaded name by a link to a secret after the upload leaves the page
// reading what was checked, and a swap inside the window between the check
// and the copy (a link, then a FIFO) is refused, not followed.
func TestUploadRefusesSpecialFilesAndSwaps(t *testing.T) {
	t.Parallel() // its own tab, in a window of its own
	jail := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	writeFile(t, secret, "the secret outside the jail")
	if err := syscall.Mkfifo(filepath.Join(jail, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(jail, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	bad := []string{"fifo", "sock", "/proc/self/environ", "/sys/kernel/mm/transparent_hugepage/enabled", "proc", "sys", "null"}
	symlink(t, "/proc/self/environ", filepath.Join(jail, "proc"))
	symlink(t, "/sys/kernel/mm/transparent_hugepage/enabled", filepath.Join(jail, "sys"))
	symlink(t, "/dev/null", filepath.Join(jail, "null"))
	if syscall.Mknod(filepath.Join(jail, "zero"), syscall.S_IFCHR|0o600, 1<<8|5) == nil { // /dev/zero's numbers
		bad = append(bad, "zero")
	}
	p, _ := testPage(t, "/controls", Options{UploadDir: jail})
	ctx := tctx(t)
	for _, name := range bad {
		_, err := p.Upload(ctx, Target{Label: "Upload"}, name)
		wantCode(t, err, fsm.UploadDenied)
		if r, _ := fsm.AsRefusal(err); strings.Contains(r.Detail, "/") {
			t.Fatalf("refusal of %s names a path: %q", name, r.Detail)
		}
	}

	// After the upload: the name now leads to the secret; the page reads
	// the checked bytes.
	name := filepath.Join(jail, "report.txt")
	writeFile(t, name, "checked")
	r := must(p.Upload(ctx, Target{Label: "Upload"}, "report.txt"))(t)
	if len(r.Files) != 1 || r.Files[0] != "report.txt" {
		t.Fatalf("files = %v", r.Files)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	symlink(t, secret, name)
	if got := jsString(t, p, `document.getElementById("up").files[0].text()`); got != "checked" {
		t.Fatalf("the page read %q after the swap, want the checked bytes", got)
	}

	// Inside the window: checked, then swapped before the copy.
	for _, swap := range []func(){
		func() { os.Remove(name); symlink(t, secret, name) },
		func() { os.Remove(name); syscall.Mkfifo(name, 0o600) },
	} {
		os.Remove(name)
		writeFile(t, name, "checked")
		real, checked, err := confine(jail, "report.txt")
		if err != nil {
			t.Fatal(err)
		}
		swap()
		if _, err := p.stage(real, checked); !fsm.IsCode(err, fsm.UploadDenied) {
			t.Fatalf("a swap between the check and the copy = %v, want %s", err, fsm.UploadDenied)
		}
	}
}

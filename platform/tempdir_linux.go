package platform

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/webcodex/webcodex/fsm"
)

// ShortTempDir creates a fresh directory named pattern plus a random
// suffix, private to this user (mode 0700, owned by this user, not a
// symbolic link), whose path leaves room more bytes within
// [SocketPathMax]: whatever TMPDIR is, a socket the browser binds below it
// can bind. It is made in the first of these whose path is short enough:
// [os.TempDir] (TMPDIR), $XDG_RUNTIME_DIR (a directory of this user's
// only, mode 0700), /tmp. None short enough is a [fsm.RequiresSetup]
// refusal naming the fix.
func ShortTempDir(pattern string, room int) (string, error) {
	var tried []error
	for _, parent := range tempParents() {
		if !fitsSocket(filepath.Join(parent, pattern), room+mkdirTempSuffix) {
			continue
		}
		dir, err := os.MkdirTemp(parent, pattern)
		if err != nil {
			tried = append(tried, err)
			continue
		}
		if err := checkOwnTempDir(dir); err != nil {
			os.Remove(dir)
			tried = append(tried, err)
			continue
		}
		return dir, nil
	}
	r := fsm.Refuse(fsm.RequiresSetup, fmt.Sprintf("no temporary directory is short enough for the browser's sockets (at most %d bytes before what the browser adds); set TMPDIR to a short directory such as /tmp", SocketPathMax-room-mkdirTempSuffix-len(pattern)-1))
	if len(tried) > 0 {
		return "", r.WithCause(fmt.Errorf("platform: temporary directory: %w", tried[len(tried)-1]))
	}
	return "", r
}

// tempParents are the directories ShortTempDir tries, in order.
func tempParents() []string {
	parents := []string{os.TempDir()}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) && ownPrivateDir(rt) {
		parents = append(parents, filepath.Clean(rt))
	}
	return append(parents, "/tmp")
}

// ownPrivateDir reports whether dir is a directory (not a symbolic link)
// of this user's with mode 0700.
func ownPrivateDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm() == 0o700
}

// checkOwnTempDir makes a directory MkdirTemp just created exactly 0700
// (the umask may have narrowed it) and checks it is this user's own
// directory: made in a shared directory such as /tmp, it must be the one
// this call created, not something another user put there.
func checkOwnTempDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("platform: the new temporary directory is not this user's own")
	}
	return os.Chmod(dir, 0o700)
}

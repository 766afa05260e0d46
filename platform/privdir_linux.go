package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/webcodex/webcodex/fsm"
)

// refusePrivate returns the refusal for an unsafe profile path.
func refusePrivate(path, detail string) error {
	return fsm.Refuse(fsm.ProfileUnsafe, detail).WithCause(&PrivateDirError{Path: path, Reason: detail})
}

// CheckPrivateDir verifies that path is a directory only this user can
// reach: every ancestor is a directory owned by root or this user and not
// writable by others (unless sticky, like /tmp; group-writable only for
// this user's own group); path itself is a directory (not a symlink) owned
// by this user with mode exactly 0700. An ancestor that is a symbolic link
// owned by root or this user (a symlinked ~/.local or /home) is followed,
// and its target is checked the same way from the root down; a symlink
// owned by anyone else is refused. A violation is a [fsm.ProfileUnsafe]
// refusal whose detail names no path (the cause is a [*PrivateDirError]).
// A missing component returns an error wrapping [fs.ErrNotExist].
func CheckPrivateDir(path string) error { return walkPrivate(path, false) }

// EnsurePrivateDir creates the missing components of path with mode 0700
// (following the same symlinks [CheckPrivateDir] follows), then checks it
// as [CheckPrivateDir] does. Existing directories are never re-moded.
func EnsurePrivateDir(path string) error { return walkPrivate(path, true) }

// maxSymlinkHops bounds the symlinks followed on one path (Linux allows 40).
const maxSymlinkHops = 40

func walkPrivate(path string, create bool) error {
	if path == "" {
		return fsm.Refuse(fsm.InvalidArgument, "a directory is required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("platform: resolve directory: %w", err)
	}
	if abs == "/" {
		return fsm.Refuse(fsm.InvalidArgument, "the root directory cannot be a private directory")
	}
	for hops := 0; ; hops++ {
		next, err := walkPrivateOnce(abs, create)
		if err != nil || next == "" {
			return err
		}
		if hops == maxSymlinkHops {
			return refusePrivate(abs, "the path has too many symbolic links")
		}
		if abs = next; abs == "/" {
			return fsm.Refuse(fsm.InvalidArgument, "the root directory cannot be a private directory")
		}
	}
}

// walkPrivateOnce checks abs from the root down. At an ancestor that is a
// symlink it may follow, it returns the path with that symlink replaced by
// its target, to be checked again from the root.
func walkPrivateOnce(abs string, create bool) (string, error) {
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			cur = filepath.Join(cur, parts[i])
		}
		last := i == len(parts)-1
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) && create && i >= 0 {
			if err := os.Mkdir(cur, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("platform: create directory: %w", err)
			} else if err == nil {
				// The umask may have narrowed the mode; never widened it,
				// but set it exactly so the check below holds.
				if err := os.Chmod(cur, 0o700); err != nil {
					return "", fmt.Errorf("platform: create directory: %w", err)
				}
			}
			fi, err = os.Lstat(cur)
		}
		if err != nil {
			return "", fmt.Errorf("platform: check directory: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return "", fmt.Errorf("platform: check directory: no owner information")
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if last {
				return "", refusePrivate(cur, "the directory itself is a symbolic link; name its target instead")
			}
			// Only its owner, or whoever may write the directory holding it
			// (checked above: root or this user), can change a symlink.
			if st.Uid != 0 && st.Uid != uid {
				return "", refusePrivate(cur, "a symbolic link in the path is owned by another user")
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", fmt.Errorf("platform: check directory: %w", err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return filepath.Join(append([]string{target}, parts[i+1:]...)...), nil
		}
		if !fi.IsDir() {
			return "", refusePrivate(cur, "a component of the path is not a directory")
		}
		mode := fi.Mode()
		if last {
			if st.Uid != uid {
				return "", refusePrivate(cur, "the directory is owned by another user")
			}
			if perm := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky); perm != 0o700 {
				return "", refusePrivate(cur, fmt.Sprintf("the directory's mode must be exactly 0700, and it is %04o (chmod 700 fixes it)", perm.Perm()|modeBits(perm)))
			}
			continue
		}
		if st.Uid != 0 && st.Uid != uid {
			return "", refusePrivate(cur, "a parent of the directory is owned by another user")
		}
		sticky := mode&fs.ModeSticky != 0
		if !sticky && (mode&0o002 != 0 || (mode&0o020 != 0 && st.Gid != gid)) {
			return "", refusePrivate(cur, "a parent of the directory is writable by other users")
		}
	}
	return "", nil
}

// modeBits returns the setuid, setgid and sticky bits of m in octal form.
func modeBits(m fs.FileMode) fs.FileMode {
	var b fs.FileMode
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

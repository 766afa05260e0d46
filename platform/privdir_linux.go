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
// reach: no component from the root down is a symlink; every ancestor is a
// directory owned by root or this user and not writable by others (unless
// sticky, like /tmp; group-writable only for this user's own group); path
// itself is owned by this user with mode exactly 0700. A violation is a
// [fsm.ProfileUnsafe] refusal whose detail names no path (the cause is a
// [*PrivateDirError]). A missing component returns an error wrapping
// [fs.ErrNotExist].
func CheckPrivateDir(path string) error { return walkPrivate(path, false) }

// EnsurePrivateDir creates the missing components of path with mode 0700,
// refusing to descend through a symlink, then checks it as
// [CheckPrivateDir] does. Existing directories are never re-moded.
func EnsurePrivateDir(path string) error { return walkPrivate(path, true) }

func walkPrivate(path string, create bool) error {
	if path == "" {
		return fsm.Refuse(fsm.InvalidArgument, "a profile directory is required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("platform: resolve directory: %w", err)
	}
	if abs == "/" {
		return fsm.Refuse(fsm.InvalidArgument, "the root directory cannot be a profile directory")
	}
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
				return fmt.Errorf("platform: create directory: %w", err)
			} else if err == nil {
				// The umask may have narrowed the mode; never widened it,
				// but set it exactly so the check below holds.
				if err := os.Chmod(cur, 0o700); err != nil {
					return fmt.Errorf("platform: create directory: %w", err)
				}
			}
			fi, err = os.Lstat(cur)
		}
		if err != nil {
			return fmt.Errorf("platform: check directory: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return refusePrivate(cur, "a component of the profile path is a symbolic link")
		}
		if !fi.IsDir() {
			return refusePrivate(cur, "a component of the profile path is not a directory")
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("platform: check directory: no owner information")
		}
		mode := fi.Mode()
		if last {
			if st.Uid != uid {
				return refusePrivate(cur, "the profile directory is owned by another user")
			}
			if mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0o700 {
				return refusePrivate(cur, "the profile directory's mode must be exactly 0700")
			}
			continue
		}
		if st.Uid != 0 && st.Uid != uid {
			return refusePrivate(cur, "a parent of the profile directory is owned by another user")
		}
		sticky := mode&fs.ModeSticky != 0
		if !sticky && (mode&0o002 != 0 || (mode&0o020 != 0 && st.Gid != gid)) {
			return refusePrivate(cur, "a parent of the profile directory is writable by other users")
		}
	}
	return nil
}

package platform

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// OpenNoFollow opens path for reading without following a reparse point
// (a symbolic link or junction) in its last element: the handle is opened
// on the reparse point itself and refused with [ErrLink] when it is one.
func OpenNoFollow(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, ErrLink
	}
	return os.NewFile(uintptr(h), path), nil
}

// OwnedByMe reports whether the open file f's owner is this process's
// user.
func OwnedByMe(f *os.File) bool {
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return false
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return false
	}
	me, err := currentUserSID()
	return err == nil && owner.Equals(me)
}

// currentUserSID returns the SID of the user this process runs as.
func currentUserSID() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("platform: token user: %w", err)
	}
	return tu.User.Sid, nil
}

// TryLock takes an exclusive lock on f's first byte (LockFileEx) without
// waiting: a lock held through another handle is [ErrLocked]. Closing f
// releases it, as does the holder's death.
func TryLock(f *os.File) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return fmt.Errorf("%w: %w", ErrLocked, err)
	}
	return err
}

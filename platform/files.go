package platform

import "errors"

// ErrLink reports a path whose last element is a symbolic link (on
// Windows, any reparse point), which [OpenNoFollow] refuses to follow.
var ErrLink = errors.New("platform: the path is a link")

// ErrLocked reports that another open file holds the lock [TryLock] asked
// for.
var ErrLocked = errors.New("platform: the file is locked by another holder")

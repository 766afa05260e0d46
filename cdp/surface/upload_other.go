//go:build !unix

package surface

import "os"

// linksAndDevice cannot tell links and devices apart here: uploads are
// refused (fail closed).
func linksAndDevice(fi os.FileInfo) (nlink, dev uint64, ok bool) { return 0, 0, false }

// openNoFollow is not needed here: uploads are refused before it.
func openNoFollow(path string) (*os.File, error) { return nil, os.ErrPermission }

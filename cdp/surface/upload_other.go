//go:build !unix

package surface

import "os"

// linksAndDevice cannot tell links and devices apart here: uploads are
// refused (fail closed).
func linksAndDevice(fi os.FileInfo) (nlink, dev uint64, ok bool) { return 0, 0, false }

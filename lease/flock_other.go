//go:build !unix

package lease

import "os"

func tryFlock(*os.File) (bool, error) { return false, ErrFlockUnsupported }

package chromiumtest

import (
	"fmt"
	"slices"
)

// leadsOwnTree checks that b's job object holds the browser.
func leadsOwnTree(b *Browser) error {
	if m := b.tree.Members(); !slices.Contains(m, b.PID) {
		return fmt.Errorf("the browser's job holds %v, not the browser %d", m, b.PID)
	}
	return nil
}

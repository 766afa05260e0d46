package cmdutil

import (
	"fmt"

	"github.com/webcodex/webcodex/cdp/origin"
)

// AllowForms says what an --allow entry may be, for the refusal of one
// that is not.
const AllowForms = "an entry is [scheme://]host[:port] with scheme http, https, ws or wss and a host of two labels or more, localhost or an IP address (example.com, https://app.example.com:8443, localhost:3000, [::1]:8080)"

// CheckAllow returns an error naming the first allowlist entry that would
// authorize nothing (it does not parse, names another scheme, a path, a
// wildcard, a single label, …), why, and the accepted forms; nil when
// every entry counts. The origin gate's own parser decides, so what passes
// here is exactly what a browser's gate keeps.
func CheckAllow(entries []string) error {
	_, dropped := origin.New(origin.Attached, entries)
	if len(dropped) == 0 {
		return nil
	}
	d := dropped[0]
	return fmt.Errorf("--allow %q: %s; %s", d.Entry, d.Reason, AllowForms)
}

//go:build !linux

package runner

import (
	"context"

	"github.com/webcodex/webcodex/consent"
)

// defaultConsentUI observes nothing here: the person presses the prompt.
func defaultConsentUI() consent.ConsentUI { return consent.NoConsentUI{} }

func promptPressAvailability(context.Context) (bool, string) {
	return false, "not supported on this operating system yet"
}

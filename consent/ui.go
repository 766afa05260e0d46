package consent

import (
	"context"
	"errors"
	"time"
)

// Candidate is one consent prompt a ConsentUI adapter observed, with the
// proof that ties it to the approved browser. A candidate is actionable only
// when every field of proof agrees; localized text alone never is.
type Candidate struct {
	ID          string // adapter-scoped, valid for one observation
	OwnerPID    int    // process that owns the prompt window
	OwnerStart  uint64 // that process's start time: with OwnerPID, its identity
	Executable  string // that process's executable
	Role        string // native role of the action ("push button")
	Action      string // semantic action ("allow", "cancel")
	Modal       bool   // the prompt is modal to a browser window
	Observation uint64 // which observation produced it; a press names it
	// Evidence summarizes the proof for the audit trail: never coordinates
	// or names of other windows.
	Evidence string
}

// ConsentUI observes and presses the browser's own consent prompt. Each
// platform provides one (Linux: AT-SPI, in the Runner); [NoConsentUI]
// observes nothing, so the person answers Chrome's prompt themselves.
type ConsentUI interface {
	// Observe returns the prompt candidates visible now for the browser with
	// the given identity, within ctx's deadline.
	Observe(ctx context.Context, browser Identity) ([]Candidate, error)
	// Press presses exactly the candidate c from observation c.Observation.
	// It fails with ErrStaleCandidate when that observation is no longer
	// current.
	Press(ctx context.Context, c Candidate) error
}

// Identity is the approved browser process: (PID, start time, executable).
type Identity struct {
	PID        int
	StartTime  uint64
	Executable string
}

// ErrStaleCandidate is returned by Press for a candidate whose observation
// is no longer current.
var ErrStaleCandidate = errors.New("consent: candidate is stale")

// ErrUnavailable is returned (wrapped, with the reason) by Observe when the
// adapter cannot see this browser's prompt at all: the person answers it.
var ErrUnavailable = errors.New("consent: the adapter cannot see this browser's prompt")

// ErrPressDropped is returned by Press when the press was made but the
// browser ignored it (the prompt stayed). It still was the attempt's one
// press: nothing presses again.
var ErrPressDropped = errors.New("consent: the browser ignored the press")

// MinPressDelay is the least time between first observing a prompt and
// pressing it. Chromium drops presses that come within about 320 ms of its
// prompt appearing (and reports them as done); a person takes longer to read
// it anyway.
const MinPressDelay = time.Second

// NoConsentUI observes nothing: the person presses the prompt. It is the
// adapter wherever no accessibility route to Chrome's prompt is proven, and
// for every grant that does not let webcodex press it.
type NoConsentUI struct{}

// Observe returns no candidates.
func (NoConsentUI) Observe(context.Context, Identity) ([]Candidate, error) { return nil, nil }

// Press always fails: there is nothing to press.
func (NoConsentUI) Press(context.Context, Candidate) error { return ErrStaleCandidate }

// SelectExact returns the one candidate that proves it belongs to id and is
// an "allow" action, and false when there is none or more than one (an
// ambiguity is never resolved by guessing).
func SelectExact(id Identity, cands []Candidate) (Candidate, bool) {
	var found []Candidate
	for _, c := range cands {
		if c.OwnerPID == id.PID && c.OwnerStart == id.StartTime && c.Executable == id.Executable &&
			c.Modal && c.Action == "allow" && c.Role == "push button" {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		return Candidate{}, false
	}
	return found[0], true
}

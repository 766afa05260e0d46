package runner

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/platform"
)

// unavailableReason is the one-line reason an adapter gave for being
// unavailable, without the sentinel's own words.
func unavailableReason(err error) string {
	s := err.Error()
	for _, prefix := range []string{consent.ErrUnavailable.Error() + ": ", platform.ErrConsentUIUnavailable.Error() + ": "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return s
}

// consentUIFor is the adapter an attempt on b may use: the Runner's only
// when b's grant says the person let webcodex press the prompt, else none
// (the person presses it).
func (r *Runner) consentUIFor(b *Browser) consent.ConsentUI {
	if b.grant == nil || !b.grant.Scope().PressPrompt || r.opts.ConsentUI == nil {
		return nil
	}
	return r.opts.ConsentUI
}

// consentUIEvidence is what the audit records of the adapter's work on one
// attempt: which step, the candidates' evidence summaries (no coordinates,
// no names of other windows), and the outcome.
type consentUIEvidence struct {
	Step       string   `json:"step"` // observed, press, unavailable
	Candidates int      `json:"candidates,omitempty"`
	Exact      bool     `json:"exact,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
	Outcome    string   `json:"outcome,omitempty"` // taken, dropped, stale, failed; or the unavailable reason
	ObservedMs int64    `json:"observed_ms,omitempty"`
}

func (r *Runner) auditConsentUI(ctx context.Context, b *Browser, ev *consentUIEvidence) {
	rec := newRecord(ctx, "consent_prompt")
	rec.Browser, rec.ConsentUI = b.id, ev
	r.appendAudit(rec)
}

func evidenceOf(cands []consent.Candidate) []string {
	out := make([]string, 0, len(cands))
	for _, c := range cands {
		out = append(out, c.Evidence)
	}
	return out
}

// pressOutcome names what a press did, for the audit.
func pressOutcome(err error) string {
	switch {
	case err == nil:
		return "taken"
	case errors.Is(err, consent.ErrPressDropped):
		return "dropped"
	case errors.Is(err, consent.ErrStaleCandidate):
		return "stale"
	}
	return "failed"
}

// staleGrace bounds the wait for the handshake's own answer after a prompt
// went away before it could be pressed: the person answered it.
const staleGrace = time.Second

// promptPressCheckBound bounds Status's look at the desktop session.
const promptPressCheckBound = 2 * time.Second

// promptPressStatus is Status's line on pressing prompts: whether this
// session could support it, and why not.
func promptPressStatus(ctx context.Context) localapi.Availability {
	ctx, cancel := context.WithTimeout(ctx, promptPressCheckBound)
	defer cancel()
	ok, why := promptPressAvailability(ctx)
	return localapi.Availability{Available: ok, Reason: why}
}

// dialPressing dials b's endpoint for one reconnect attempt. Where b's grant
// lets webcodex press the prompt, the new connection's prompt is observed
// and pressed through the reconnect machine (prompt) as on attach: at most
// once per attempt, a second or more after it appeared.
func (r *Runner) dialPressing(ctx context.Context, b *Browser, prompt promptMachine) (cdp.Socket, error) {
	if r.consentUIFor(b) == nil {
		return r.dial(ctx, b.ep)
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sock, _, err := r.dialUnderPrompt(dctx, cancel, b, prompt)
	return sock, err
}

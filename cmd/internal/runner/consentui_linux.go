package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/platform"
)

// atspiConsentUI is the Linux ConsentUI: platform's AT-SPI prompt adapter,
// in consent's terms. The Runner uses it only for a browser whose grant
// lets webcodex press the prompt.
type atspiConsentUI struct{ ui *platform.PromptUI }

// newATSPIConsentUI returns the adapter for the desktop session env.
func newATSPIConsentUI(env platform.DesktopEnv) *atspiConsentUI {
	return &atspiConsentUI{ui: platform.NewPromptUI(env)}
}

// defaultConsentUI is the adapter of this process's desktop session.
func defaultConsentUI() consent.ConsentUI { return newATSPIConsentUI(platform.DesktopEnvFromOS()) }

func fingerprintOf(id consent.Identity) platform.Fingerprint {
	return platform.Fingerprint{PID: id.PID, StartTime: id.StartTime, Exe: id.Executable}
}

// Observe lists the browser's prompts as candidates; an unavailable adapter
// is consent.ErrUnavailable with the platform's reason.
func (a *atspiConsentUI) Observe(ctx context.Context, id consent.Identity) ([]consent.Candidate, error) {
	ps, err := a.ui.Observe(ctx, fingerprintOf(id))
	if errors.Is(err, platform.ErrConsentUIUnavailable) {
		return nil, fmt.Errorf("%w: %s", consent.ErrUnavailable, unavailableReason(err))
	}
	if err != nil {
		return nil, err
	}
	out := make([]consent.Candidate, 0, len(ps))
	for _, p := range ps {
		out = append(out, consent.Candidate{ID: p.Key, OwnerPID: p.Owner.PID, OwnerStart: p.Owner.StartTime, Executable: p.Owner.Exe,
			Role: p.Role, Action: p.Action, Modal: p.Modal, Observation: p.Observation, Evidence: p.Evidence})
	}
	return out, nil
}

// Press presses c once; a stale or already pressed prompt is
// consent.ErrStaleCandidate (nothing pressed), a press the browser ignored
// consent.ErrPressDropped (pressed, and counted).
func (a *atspiConsentUI) Press(ctx context.Context, c consent.Candidate) error {
	fp := platform.Fingerprint{PID: c.OwnerPID, StartTime: c.OwnerStart, Exe: c.Executable}
	_, err := a.ui.Press(ctx, fp, c.ID, c.Observation)
	switch {
	case errors.Is(err, platform.ErrPromptStale), errors.Is(err, platform.ErrPromptPressed):
		return fmt.Errorf("%w: %v", consent.ErrStaleCandidate, err)
	case errors.Is(err, platform.ErrPressDropped):
		return fmt.Errorf("%w: %v", consent.ErrPressDropped, err)
	}
	return err
}

// Close drops the accessibility bus connection.
func (a *atspiConsentUI) Close() error { return a.ui.Close() }

// promptPressAvailability says whether this session could support pressing
// prompts at all, and why not.
func promptPressAvailability(ctx context.Context) (bool, string) {
	if err := platform.DesktopEnvFromOS().Check(ctx); err != nil {
		return false, unavailableReason(err)
	}
	return true, ""
}

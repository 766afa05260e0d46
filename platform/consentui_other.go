//go:build !linux

package platform

import "context"

// PromptUI is not implemented on this operating system yet.
type PromptUI struct{}

// NewPromptUI returns an adapter that sees nothing here.
func NewPromptUI(env DesktopEnv) *PromptUI { return &PromptUI{} }

// Close does nothing.
func (u *PromptUI) Close() error { return nil }

// Observe reports the adapter unavailable.
func (u *PromptUI) Observe(ctx context.Context, browser Fingerprint) ([]Prompt, error) {
	return nil, unavailable("not supported on this operating system yet")
}

// Press presses nothing.
func (u *PromptUI) Press(ctx context.Context, browser Fingerprint, key string, seq uint64) (PressReport, error) {
	return PressReport{}, ErrPromptStale
}

// Check reports the adapter unavailable.
func (e DesktopEnv) Check(ctx context.Context) error {
	return unavailable("not supported on this operating system yet")
}

package platform

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// PromptGuard is the least time a prompt must have been on screen before
// it is pressed. Chromium drops a press that comes within about 320 ms of
// the prompt appearing, while DoAction still returns true (measured here:
// every press after 450 ms was taken); one second leaves room on a loaded
// machine.
const PromptGuard = time.Second

// promptConfirmWait bounds waiting for the prompt to go after a press; an
// accepted press closed it within 50–400 ms in the lab.
const promptConfirmWait = 3 * time.Second

// promptPoll is how often a pressed prompt is checked for having gone.
const promptPoll = 50 * time.Millisecond

// maxPromptNodes bounds the accessible objects read under one alert.
const maxPromptNodes = 256

// maxPromptBrowsers bounds how many browsers' prompt state is kept.
const maxPromptBrowsers = 16

// The English text that corroborates the structure (Chromium 156).
const (
	promptTitle  = "Allow remote debugging?"
	promptAllow  = "Allow"
	promptCancel = "Cancel"
)

// ErrConsentUIUnavailable reports that the adapter cannot see or press a
// prompt here: no X display, a Wayland session, no session or accessibility
// bus, or a browser that is not on that bus. Its message says why in one
// line, without paths or ports.
var ErrConsentUIUnavailable = errors.New("webcodex cannot press the browser's prompt here")

// ErrPromptStale reports a prompt that is no longer the one observed, or is
// gone: nothing was pressed.
var ErrPromptStale = errors.New("platform: the prompt changed since it was observed")

// ErrPromptPressed reports a second press of one prompt: it is never
// pressed twice, even when the first press was dropped.
var ErrPromptPressed = errors.New("platform: this prompt was pressed already")

// ErrPressDropped reports a press after which the prompt stayed: Chromium
// ignored it (its input guard). It counts as the attempt's one press.
var ErrPressDropped = errors.New("platform: the browser ignored the press; the prompt stays")

// DesktopEnv is what the adapter reads of a desktop session.
type DesktopEnv struct {
	SessionBus  string // DBUS_SESSION_BUS_ADDRESS
	Display     string // DISPLAY
	Wayland     string // WAYLAND_DISPLAY
	SessionType string // XDG_SESSION_TYPE
}

// DesktopEnvFromOS reads the session from this process's environment.
func DesktopEnvFromOS() DesktopEnv {
	return DesktopEnv{SessionBus: os.Getenv("DBUS_SESSION_BUS_ADDRESS"), Display: os.Getenv("DISPLAY"),
		Wayland: os.Getenv("WAYLAND_DISPLAY"), SessionType: os.Getenv("XDG_SESSION_TYPE")}
}

// unavailable returns ErrConsentUIUnavailable with its reason.
func unavailable(reason string) error { return fmt.Errorf("%w: %s", ErrConsentUIUnavailable, reason) }

// Prompt is one alert of the browser the adapter observed.
type Prompt struct {
	Key         string // names it in Press, within its observation
	Observation uint64
	Owner       Fingerprint // the process whose connection the alert came on, read at observation
	Proven      bool        // every piece of evidence agrees: it is the consent prompt
	Modal       bool        // its parent is a frame of the same application
	Role        string      // "push button" (the accept action's) when proven, else the alert's role
	Action      string      // "allow" when proven, else "unidentified"
	FirstSeen   time.Time
	// Evidence summarizes the proof for the audit: no coordinates, no
	// names of other windows.
	Evidence string
}

// PressReport is what one press did.
type PressReport struct {
	ObservedFor time.Duration // from first seeing the prompt to pressing
	GoneAfter   time.Duration // from the press to the prompt gone; zero when it stayed
}

package platform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// The consent prompt adapter: it finds Chromium's "Allow remote debugging?"
// prompt on the accessibility bus, proves it belongs to one browser process
// and presses its Allow button, once. What it takes as proof, in order:
//
//   - the application's connection to the accessibility bus was made by the
//     browser's process (the bus daemon's SO_PEERCRED PID), whose start
//     time and executable still match the browser's fingerprint;
//   - the alert is a views dialog (role alert, class RootView, xml-roles
//     alertdialog) whose parent is a frame of the same application;
//   - it holds exactly three push buttons (MdTextButton, set size 3,
//     positions 1–3) and the accept one (position 3) offers action 0
//     "press", enabled and showing;
//   - English text corroborates (the title and the Allow and Cancel
//     labels): text alone is never proof, and a build whose text differs is
//     reported as unidentified, so the attach refuses rather than guesses.

// Check says whether the session could support the adapter at all: an X
// display (Wayland is unproven), a session bus, and an accessibility bus
// running there or startable on demand. It starts nothing. Whether a given
// browser is reachable is known only when it is observed (accessibility
// must have been on when it started). It returns nil or an error wrapping
// ErrConsentUIUnavailable.
func (e DesktopEnv) Check(ctx context.Context) error {
	if err := e.checkDisplay(); err != nil {
		return err
	}
	sess, err := dbus.Connect(e.SessionBus, dbus.WithContext(ctx))
	if err != nil {
		return unavailable("the D-Bus session bus does not answer")
	}
	defer sess.Close()
	var running bool
	var startable []string
	err1 := sess.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, a11yBusName).Store(&running)
	err2 := sess.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&startable)
	if err1 != nil || err2 != nil || !(running || slices.Contains(startable, a11yBusName)) {
		return unavailable("no accessibility bus (install at-spi2-core)")
	}
	return nil
}

func (e DesktopEnv) checkDisplay() error {
	switch {
	case e.Wayland != "" || e.SessionType == "wayland":
		return unavailable("a Wayland session: pressing the prompt is proven on X11 only")
	case e.Display == "":
		return unavailable("no X display")
	case e.SessionBus == "":
		return unavailable("no D-Bus session bus")
	}
	return nil
}

func (e DesktopEnv) dial(ctx context.Context) (*a11yBus, error) {
	b, err := dialA11y(ctx, e.SessionBus)
	if err != nil {
		return nil, unavailable("no accessibility bus (install at-spi2-core)")
	}
	return b, nil
}

// PromptUI observes and presses browsers' consent prompts over AT-SPI. Safe
// for concurrent use; observations of one browser are numbered, and a press
// names the observation it acts on.
type PromptUI struct {
	env   DesktopEnv
	guard time.Duration // PromptGuard; tests of the guard itself lower it

	mu       sync.Mutex // mu guards the fields that follow; held across a press
	bus      *a11yBus
	pids     map[string]int // application bus name -> PID (unique names are never reused)
	woken    map[string]bool
	browsers map[int]*browserPrompts
}

// browserPrompts is the adapter's state for one browser process.
type browserPrompts struct {
	seq     uint64
	used    time.Time
	seen    map[a11yRef]time.Time // alerts of the last observation, and when each was first seen
	prompts map[string]promptRecord
	pressed map[a11yRef]bool
}

type promptRecord struct {
	Prompt
	app, alert, accept a11yRef
}

// NewPromptUI returns an adapter for the session env. It connects on first
// use.
func NewPromptUI(env DesktopEnv) *PromptUI {
	return &PromptUI{env: env, guard: PromptGuard, pids: map[string]int{}, woken: map[string]bool{}, browsers: map[int]*browserPrompts{}}
}

// Close drops the accessibility bus connection.
func (u *PromptUI) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.bus == nil {
		return nil
	}
	err := u.bus.close()
	u.bus = nil
	return err
}

// connLocked returns the live connection, dialing it when needed.
func (u *PromptUI) connLocked(ctx context.Context) (*a11yBus, error) {
	if err := u.env.checkDisplay(); err != nil {
		return nil, err
	}
	if u.bus != nil && u.bus.conn.Connected() {
		return u.bus, nil
	}
	b, err := u.env.dial(ctx)
	if err != nil {
		return nil, err
	}
	u.bus, u.pids, u.woken = b, map[string]int{}, map[string]bool{}
	return b, nil
}

// Observe lists the prompts of the browser process browser now. It returns
// an error wrapping ErrConsentUIUnavailable when the session has no
// accessibility route, or the browser is not on the accessibility bus
// (accessibility was off when it started, or it runs sandboxed and the bus
// sees a proxy's PID). Alerts still being built are left for the next
// observation.
func (u *PromptUI) Observe(ctx context.Context, browser Fingerprint) ([]Prompt, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	b, err := u.connLocked(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := b.applications(ctx)
	if err != nil {
		u.bus.close()
		u.bus = nil
		return nil, fmt.Errorf("platform: accessibility registry: %w", err)
	}
	var mine []a11yRef
	for _, app := range apps {
		if app.null() {
			continue
		}
		pid, ok := u.pids[app.Bus]
		if !ok {
			if pid, err = b.pidOf(ctx, app.Bus); err != nil {
				continue // gone, or a connection without credentials: not provable
			}
			u.pids[app.Bus] = pid
		}
		if pid == browser.PID {
			mine = append(mine, app)
		}
	}
	if len(mine) == 0 {
		if sandboxed(browser.PID) {
			return nil, unavailable("the browser runs sandboxed (Flatpak or Snap): the accessibility bus sees a proxy, not the browser")
		}
		return nil, unavailable("the browser is not on the accessibility bus: accessibility was off when it started (start it with ACCESSIBILITY_ENABLED=1, or with the desktop's accessibility on)")
	}
	owner, err := FingerprintOf(browser.PID)
	if err != nil {
		return nil, fmt.Errorf("platform: the browser process: %w", err)
	}
	st := u.stateLocked(browser.PID)
	st.seq++
	seq := st.seq
	now := time.Now()
	seen := map[a11yRef]time.Time{}
	st.prompts = map[string]promptRecord{}
	var out []Prompt
	for _, app := range mine {
		if !u.woken[app.Bus] {
			u.wake(ctx, b, app)
			u.woken[app.Bus] = true
		}
		kids, err := b.children(ctx, app)
		if err != nil {
			continue
		}
		for _, k := range kids {
			if k.null() {
				continue
			}
			rec, ok := u.examine(ctx, b, app, k, owner)
			if !ok {
				continue
			}
			first, was := st.seen[k]
			if !was {
				first = now
			}
			seen[k] = first
			rec.Key = fmt.Sprintf("%d/%d/%d", browser.PID, seq, len(out))
			rec.Observation, rec.FirstSeen = seq, first
			st.prompts[rec.Key] = rec
			out = append(out, rec.Prompt)
		}
	}
	st.seen = seen
	for a := range st.pressed {
		if _, up := seen[a]; !up {
			delete(st.pressed, a) // gone: it cannot be pressed again anyway
		}
	}
	return out, nil
}

func (u *PromptUI) stateLocked(pid int) *browserPrompts {
	st := u.browsers[pid]
	if st == nil {
		if len(u.browsers) >= maxPromptBrowsers {
			oldest := -1
			for p, s := range u.browsers {
				if oldest < 0 || s.used.Before(u.browsers[oldest].used) {
					oldest = p
				}
			}
			delete(u.browsers, oldest)
		}
		st = &browserPrompts{seen: map[a11yRef]time.Time{}, pressed: map[a11yRef]bool{}}
		u.browsers[pid] = st
	}
	st.used = time.Now()
	return st
}

// wake asks each of the application's windows for its attributes: until a
// client does, Chromium answers null for everything below its windows
// (unless it started with --force-renderer-accessibility).
func (u *PromptUI) wake(ctx context.Context, b *a11yBus, app a11yRef) {
	kids, _ := b.children(ctx, app)
	for _, k := range kids {
		if !k.null() {
			b.attributes(ctx, k)
		}
	}
}

// button is one push button under an alert.
type button struct {
	ref          a11yRef
	class        string
	pos, setSize int
	name, action string
	states       uint64
}

// examine reads the application's child k. It returns false for what is not
// a views dialog, and for a dialog whose tree is not readable yet (no
// buttons, null references or an unreadable node); otherwise the record
// says whether the dialog is proven to be the consent prompt.
func (u *PromptUI) examine(ctx context.Context, b *a11yBus, app, k a11yRef, owner Fingerprint) (promptRecord, bool) {
	role, err := b.role(ctx, k)
	if err != nil || (role != roleAlert && role != roleDialog) {
		return promptRecord{}, false
	}
	attrs, err := b.attributes(ctx, k)
	if err != nil || attrs["class"] != "RootView" || attrs["xml-roles"] != "alertdialog" {
		return promptRecord{}, false
	}
	refs, err := b.descendantsWithRole(ctx, k, rolePushButton)
	if err != nil || len(refs) == 0 || len(refs) > maxPromptNodes {
		return promptRecord{}, false // still being built (or unreadable): look again next time
	}
	var buttons []button
	for _, c := range refs {
		if c.null() || c.Bus != k.Bus {
			return promptRecord{}, false
		}
		bt := button{ref: c}
		a, err1 := b.attributes(ctx, c)
		st, err2 := b.states(ctx, c)
		if err1 != nil || err2 != nil {
			return promptRecord{}, false
		}
		bt.class, bt.states = a["class"], st
		bt.pos, _ = strconv.Atoi(a["posinset"])
		bt.setSize, _ = strconv.Atoi(a["setsize"])
		bt.name, _ = b.name(ctx, c)
		bt.action, _ = b.actionName(ctx, c, 0)
		buttons = append(buttons, bt)
	}
	title, _ := b.name(ctx, k)
	parent, _ := b.parent(ctx, k)
	modal := false
	if parent.Bus == app.Bus && !parent.null() {
		pr, err := b.role(ctx, parent)
		modal = err == nil && pr == roleFrame
	}

	rec := promptRecord{app: app, alert: k}
	rec.Owner, rec.Modal = owner, modal
	var mismatch []string
	if role != roleAlert {
		mismatch = append(mismatch, "role is not alert")
	}
	if !modal {
		mismatch = append(mismatch, "parent is not a frame of the browser")
	}
	byPos := map[int]button{}
	for _, bt := range buttons {
		if bt.class != "MdTextButton" || bt.setSize != 3 {
			mismatch = append(mismatch, "a button is not one of a set of three")
			break
		}
		byPos[bt.pos] = bt
	}
	if len(buttons) != 3 || len(byPos) != 3 {
		mismatch = append(mismatch, fmt.Sprintf("%d push buttons, want three in positions 1-3", len(buttons)))
	}
	accept, hasAccept := byPos[3]
	const wantStates = 1<<stateEnabled | 1<<stateSensitive | 1<<stateShowing | 1<<stateVisible
	if !hasAccept || accept.action != "press" || accept.states&wantStates != wantStates {
		mismatch = append(mismatch, "no enabled, showing accept button with action \"press\"")
	}
	text := title == promptTitle && accept.name == promptAllow && byPos[2].name == promptCancel
	if !text {
		mismatch = append(mismatch, "the English text does not corroborate (another language or another dialog)")
	}
	rec.Proven = len(mismatch) == 0
	rec.Role, rec.Action = "alert", "unidentified"
	if rec.Proven {
		rec.Role, rec.Action, rec.accept = "push button", "allow", accept.ref
	}
	ev := fmt.Sprintf("views alert of pid %d (%s) on the accessibility bus; %d push buttons", owner.PID, filepath.Base(owner.Exe), len(buttons))
	if rec.Proven {
		ev += "; accept button 3 of 3 (MdTextButton) offers \"press\"; parent is the browser's frame; English text corroborates"
	} else {
		ev += "; not proven: " + strings.Join(mismatch, "; ")
	}
	rec.Evidence = ev
	return rec, true
}

// Press presses the accept button of the prompt key from observation seq
// of the browser browser, at most once per prompt, and no sooner than
// PromptGuard after the prompt was first seen (it waits the rest, within
// ctx). Just before pressing it checks again that the prompt is still up,
// that its connection still belongs to the browser's process and that the
// process is the same one; otherwise it fails with ErrPromptStale and
// presses nothing. After the press it waits for the prompt to go: when it
// stays, the press was dropped (ErrPressDropped), and it still counts.
func (u *PromptUI) Press(ctx context.Context, browser Fingerprint, key string, seq uint64) (PressReport, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.browsers[browser.PID]
	if st == nil || seq != st.seq {
		return PressReport{}, ErrPromptStale
	}
	rec, ok := st.prompts[key]
	if !ok || !rec.Proven || rec.Owner != browser {
		return PressReport{}, ErrPromptStale
	}
	if st.pressed[rec.alert] {
		return PressReport{}, ErrPromptPressed
	}
	if u.bus == nil {
		return PressReport{}, ErrPromptStale
	}
	b := u.bus
	if wait := time.Until(rec.FirstSeen.Add(u.guard)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return PressReport{}, ctx.Err()
		}
	}
	if !u.stillUp(ctx, b, rec) {
		return PressReport{}, ErrPromptStale
	}
	if pid, err := b.pidOf(ctx, rec.accept.Bus); err != nil || pid != browser.PID || !browser.Alive() {
		return PressReport{}, ErrPromptStale
	}
	if name, err := b.actionName(ctx, rec.accept, 0); err != nil || name != "press" {
		return PressReport{}, ErrPromptStale
	}
	st.pressed[rec.alert] = true // from here on it counts, whatever Chromium does with it
	pressed := time.Now()
	rep := PressReport{ObservedFor: pressed.Sub(rec.FirstSeen)}
	if _, err := b.doAction(ctx, rec.accept, 0); err != nil {
		return rep, fmt.Errorf("platform: press the prompt: %w", err)
	}
	// DoAction returns true even for a press Chromium drops: only the
	// prompt going away says it was taken.
	deadline := pressed.Add(promptConfirmWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !u.stillUp(ctx, b, rec) {
			rep.GoneAfter = time.Since(pressed)
			return rep, nil
		}
		t := time.NewTimer(promptPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return rep, ErrPressDropped
}

// stillUp reports whether rec's alert is still one of its application's
// windows.
func (u *PromptUI) stillUp(ctx context.Context, b *a11yBus, rec promptRecord) bool {
	kids, err := b.children(ctx, rec.app)
	return err == nil && slices.Contains(kids, rec.alert)
}

// sandboxed reports whether pid runs in a Flatpak or Snap sandbox, where the
// accessibility bus sees a proxy's PID.
func sandboxed(pid int) bool {
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "root", ".flatpak-info")); err == nil {
		return true
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return err == nil && (strings.HasPrefix(exe, "/snap/") || strings.HasPrefix(exe, "/app/"))
}

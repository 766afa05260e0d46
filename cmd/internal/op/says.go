package op

import (
	"fmt"
	"slices"
	"strings"
)

// What a page action did, in the words its result text uses (an MCP
// tool's first line): each action declares its own (Meta.Says), so no
// client switches on the operation's name.

// on is " the ROLE" (or " the TAG") an action acted on, or "".
func on(a ActionResult) string {
	what := a.Role
	if what == "" {
		what = a.Tag
	}
	if what == "" {
		return ""
	}
	return " the " + what
}

// said is a verb phrase followed by what it acted on.
func said(phrase string) func(ActionResult) string {
	return func(a ActionResult) string { return phrase + on(a) }
}

// saidPlain is a phrase alone.
func saidPlain(phrase string) func(ActionResult) string {
	return func(ActionResult) string { return phrase }
}

// saysEntered counts the characters type and fill delivered.
func saysEntered(a ActionResult) string {
	line := fmt.Sprintf("entered %d of %d characters into%s", a.Delivered, a.Requested, on(a))
	if a.Length > 0 {
		line += fmt.Sprintf("; it now holds %d", a.Length)
	}
	return line
}

// saysChecked is the state check and uncheck left.
func saysChecked(a ActionResult) string {
	state := "unchecked"
	if a.Checked != nil && *a.Checked {
		state = "checked"
	}
	return state + on(a)
}

func saysSelected(a ActionResult) string { return "selected: " + strings.Join(a.Selected, ", ") }

func saysUploaded(a ActionResult) string { return "set files: " + strings.Join(a.Files, ", ") }

// pointerSaid is what each kind of raw pointer input did (its result's
// action is "mouse_" and the kind).
var pointerSaid = map[string]string{
	"move": "moved the mouse", "click": "clicked", "drag": "dragged",
	"down": "pressed the button", "up": "released the button", "wheel": "turned the wheel",
}

func saysPointer(a ActionResult) string { return pointerSaid[strings.TrimPrefix(a.Action, "mouse_")] }

func saysResized(a ActionResult) string {
	if a.Viewport == nil {
		return ""
	}
	return fmt.Sprintf("the viewport is %dx%d", a.Viewport.Width, a.Viewport.Height)
}

func saysMedia(a ActionResult) string {
	if len(a.Media) == 0 {
		return "no media overrides"
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range a.Media {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, k+": "+a.Media[k])
	}
	return "media overrides: " + strings.Join(parts, ", ")
}

// Said is what the action o declares it did, in one line: its Says, or
// "ACTION done" when it says nothing of this result.
func (m *Meta) Said(a ActionResult) string {
	if m.Says != nil {
		if s := m.Says(a); s != "" {
			return s
		}
	}
	if a.Action == "" {
		return "done"
	}
	return a.Action + " done"
}

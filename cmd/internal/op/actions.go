package op

// The page actions: each acts once on a page (real input, hit tested), is
// an effect under the Runner's effect ledger, and answers with what it did
// (ActResult).

// Element is the element an action targets.
type Element struct {
	Target *Target `json:"target,omitempty"`
}

// SetTarget names the element (a client fills it in from its arguments).
func (e *Element) SetTarget(t *Target) { e.Target = t }

// ClickIn clicks an element.
type ClickIn struct {
	OnPage
	Element
	Button      string   `json:"button,omitempty"`      // left (default), right, middle
	DoubleClick bool     `json:"doubleClick,omitempty"` // a double click
	Modifiers   []string `json:"modifiers,omitempty"`   // held: Alt, Control, ControlOrMeta, Meta, Shift
	Keyed
}

// HoverIn moves the mouse over an element.
type HoverIn struct {
	OnPage
	Element
	Keyed
}

// TypeIn types text into a field, after what it holds.
type TypeIn struct {
	OnPage
	Element
	Text   string `json:"text,omitempty" flag:"value,required" usage:"the text to type (required, never echoed)" secret:"typed"`
	Slowly bool   `json:"slowly,omitempty" flag:"slowly" usage:"one key event per character (for pages that react to each key)"`
	Keyed
}

// FillIn clears a field, then types text into it.
type FillIn struct {
	OnPage
	Element
	Text   string `json:"text,omitempty" flag:"value,emptyok" usage:"the text to fill (required, never echoed)" secret:"typed"`
	Slowly bool   `json:"slowly,omitempty" flag:"slowly" usage:"one key event per character (for pages that react to each key)"`
	Keyed
}

// PressIn sends key events to the focused element, or to the target.
type PressIn struct {
	OnPage
	Element
	Keys string `json:"keys,omitempty" flag:"key,required" usage:"keys to press, e.g. Enter or Control+a (required)"`
	Keyed
}

// SelectIn selects options of a <select> by value or visible label.
type SelectIn struct {
	OnPage
	Element
	Values []string `json:"values,omitempty" flag:"value,required,alias=option" usage:"value or visible label (repeatable, at least one; --option is the same flag)"`
	Keyed
}

// CheckIn checks a checkbox or radio.
type CheckIn struct {
	OnPage
	Element
	Keyed
}

// UncheckIn unchecks a checkbox.
type UncheckIn struct {
	OnPage
	Element
	Keyed
}

// ScrollIn scrolls to an element, the top or bottom, or by pixels.
type ScrollIn struct {
	OnPage
	Element
	To string  `json:"to,omitempty" flag:"to" usage:"top or bottom"`
	DX float64 `json:"dx,omitempty" flag:"dx" usage:"pixels right"`
	DY float64 `json:"dy,omitempty" flag:"dy" usage:"pixels down"`
	Keyed
}

// UploadIn sets files from the upload directory on a file input.
type UploadIn struct {
	OnPage
	Element
	Files []string `json:"files,omitempty" flag:"file,required" usage:"file name inside the upload directory (repeatable, at least one)"`
	Keyed
}

// AuditFiles: each file is audited with its path and size.
func (in UploadIn) AuditFiles() []string { return in.Files }

// Pointer is raw pointer input at viewport coordinates (CSS pixels), as
// Playwright's vision tools send it: Kind is move, click, drag, down, up or
// wheel.
type Pointer struct {
	Kind       string  `json:"kind"`
	X          float64 `json:"x,omitempty"`
	Y          float64 `json:"y,omitempty"`
	EndX       float64 `json:"endX,omitempty"`
	EndY       float64 `json:"endY,omitempty"`
	Button     string  `json:"button,omitempty"`
	ClickCount int     `json:"clickCount,omitempty"`
	DelayMS    int     `json:"delayMs,omitempty"`
	DeltaX     float64 `json:"deltaX,omitempty"`
	DeltaY     float64 `json:"deltaY,omitempty"`
}

// PointerIn sends one raw pointer input, hit tested like every pointer
// input.
type PointerIn struct {
	OnPage
	Pointer
	Keyed
}

// ResizeIn sets the page's viewport size.
type ResizeIn struct {
	OnPage
	Viewport
	Keyed
}

// EmulateMediaIn changes media overrides: a feature's CSS name or "media"
// to its value, "" to clear it; features not named keep theirs.
type EmulateMediaIn struct {
	OnPage
	Media map[string]string `json:"media,omitempty"`
	Keyed
}

// ProbeIn performs one action (a declaration with Probe set, by name) and
// reports its effect. Its parameters are the action's own, by the names
// the action's input gives them (TestProbeTakesItsActions): one the action
// does not take is refused, none is dropped.
type ProbeIn struct {
	OnPage
	Action string   `json:"action"`
	Target *Target  `json:"target,omitempty"`
	Text   string   `json:"text,omitempty" secret:"typed"`
	Slowly bool     `json:"slowly,omitempty"`
	Keys   string   `json:"keys,omitempty"`
	Values []string `json:"values,omitempty"`
	// click's
	Button      string   `json:"button,omitempty"`
	DoubleClick bool     `json:"doubleClick,omitempty"`
	Modifiers   []string `json:"modifiers,omitempty"`
	// SettleMS bounds the wait for the page to settle; 0: the surface's
	// default.
	SettleMS int `json:"settleMs,omitempty"`
	Keyed
}

// The page actions.
var (
	Click = declare[ClickIn, ActResult](Meta{Name: "click", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: said("clicked"), Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_click", Desc: "Click with real mouse input, checked to hit the element; a missing, hidden, disabled, covered or ambiguous one is refused."}},
		CLI: &Verb{Name: "click", Use: "click PAGE TARGET", Short: "Click an element (scrolled into view, hit-tested, real mouse events)", Target: RequiredTarget}})
	Hover = declare[HoverIn, ActResult](Meta{Name: "hover", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: said("hovered over"), Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_hover", Desc: "Move the mouse over an element (menus, tooltips)."}},
		CLI: &Verb{Name: "hover", Use: "hover PAGE TARGET", Short: "Move the mouse over an element", Target: RequiredTarget}})
	Type = declare[TypeIn, ActResult](Meta{Name: "type", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysEntered, Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_type", Desc: "Type as real input, replacing the value unless clear is false; submit presses Enter. Never echoes the text."}},
		CLI: &Verb{Name: "type", Use: "type PAGE TARGET --value TEXT [--slowly]", Short: "Type into a field with real input; reports requested vs delivered characters", Target: RequiredTarget}})
	Fill = declare[FillIn, ActResult](Meta{Name: "fill", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysEntered, Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_fill_form", Desc: "Fill fields in order; stops at the first failure and says which."}},
		CLI: &Verb{Name: "fill", Use: "fill PAGE TARGET --value TEXT [--slowly]", Short: "Clear a field, then type into it (--value '' only clears it)", Target: RequiredTarget}})
	Press = declare[PressIn, ActResult](Meta{Name: "press", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: said("pressed the key"), Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_press_key", Desc: "Press a key or chord in the focused element, or in the named one."}},
		CLI: &Verb{Name: "press", Use: "press PAGE --key KEYS [TARGET]", Short: "Send real key events (Enter, ArrowDown, Control+a …)", Target: OptionalTarget}})
	Select = declare[SelectIn, ActResult](Meta{Name: "select", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysSelected, Reveals: RevealsPageText, Probe: true,
		MCP: []Tool{{Name: "browser_select_option", Desc: "Select options of a <select> by value or label."}},
		CLI: &Verb{Name: "select", Use: "select PAGE TARGET --value VALUE…", Short: "Select options of a <select> by value or visible label", Target: RequiredTarget}})
	Check = declare[CheckIn, ActResult](Meta{Name: "check", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysChecked, Reveals: RevealsPageText, Probe: true,
		CLI: &Verb{Name: "check", Use: "check PAGE TARGET", Short: "Check a checkbox or radio (read back)", Target: RequiredTarget}})
	Uncheck = declare[UncheckIn, ActResult](Meta{Name: "uncheck", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysChecked, Reveals: RevealsPageText, Probe: true,
		CLI: &Verb{Name: "uncheck", Use: "uncheck PAGE TARGET", Short: "Uncheck a checkbox (read back)", Target: RequiredTarget}})
	Scroll = declare[ScrollIn, ActResult](Meta{Name: "scroll", Scope: Read, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saidPlain("scrolled"), Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_scroll", Desc: "Scroll ref into view, to top/bottom, or by dy px; says atBottom."}},
		CLI: &Verb{Name: "scroll", Use: "scroll PAGE [TARGET] [--to top|bottom] [--dy PIXELS]", Short: "Scroll to an element, the top, the bottom or by pixels; reports atBottom", Target: OptionalTarget}})
	Upload = declare[UploadIn, ActResult](Meta{Name: "upload", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysUploaded, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_file_upload", Desc: "Set files on a file input (target; default the page's one file input), from the owner's upload directory only."}},
		CLI: &Verb{Name: "upload", Use: "upload PAGE TARGET --file NAME…", Short: "Upload files from the owner-named upload directory only", Target: RequiredTarget}})
	PointerInput = declare[PointerIn, ActResult](Meta{Name: "pointer", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysPointer, Reveals: RevealsPageText,
		MCP: []Tool{
			{Name: "browser_mouse_move_xy", Group: CapVision, Desc: "Move the mouse to x,y in the viewport; over a denied frame it is refused."},
			{Name: "browser_mouse_click_xy", Group: CapVision, Desc: "Click at x,y in the viewport; over a denied frame it is refused."},
			{Name: "browser_mouse_drag_xy", Group: CapVision, Desc: "Drag with the left button held from startX,startY to endX,endY."},
			{Name: "browser_mouse_down", Group: CapVision, Desc: "Press a mouse button down where the mouse is (after a move)."},
			{Name: "browser_mouse_up", Group: CapVision, Desc: "Release a mouse button where the mouse is (after a down)."},
			{Name: "browser_mouse_wheel", Group: CapVision, Desc: "Turn the mouse wheel where the mouse is, by deltaX, deltaY pixels."},
		}})
	Resize = declare[ResizeIn, ActResult](Meta{Name: "resize", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysResized, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_resize", Desc: "Resize the page's viewport to width x height CSS pixels."}}})
	EmulateMedia = declare[EmulateMediaIn, ActResult](Meta{Name: "emulate_media", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysMedia, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_emulate_media", Desc: "Emulate CSS media (dark mode, print): omitted ones stay, null clears one."}}})
	Probe = declare[ProbeIn, ProbeResult](Meta{Name: "probe", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_probe", Group: CapDevtools, Desc: "Act once on ref and report what changed."}},
		CLI: &Verb{Name: "probe", Use: "probe PAGE [TARGET] --action click|hover|type|fill|press|select|check|uncheck", Short: "One action, with before/after document identity, console errors it raised and whether the page settled", Target: OptionalTarget}})
)

// AuditAction names the probe in the audit trail with the action it
// performed.
func (in ProbeIn) AuditAction() string { return "probe:" + in.Action }

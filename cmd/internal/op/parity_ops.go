package op

// The operations of Playwright MCP's that webcodex lacked: a drag from one
// element to another, a drop onto an element, and one request's details.

// DragIn drags from the element (Target: where the button is pressed) to
// another (To: where it is released).
type DragIn struct {
	OnPage
	Element
	To *Target `json:"to,omitempty" flag:"to,required" usage:"the element to drag to: a ref (e5), a target object or a unique selector (required)"`
	Keyed
}

// saysDragged says where a drag went and whether the page took its drop.
func saysDragged(a ActionResult) string {
	switch {
	case a.Dropped == nil:
		return "dragged" + on(a) + " with the mouse (the page started no HTML drag)"
	case *a.Dropped:
		return "dragged" + on(a) + " and the page took the drop"
	}
	return "dragged" + on(a) + ", but the page did not take the drop (its dragover did not accept it)"
}

// The parity operations.
var (
	Drag = declare[DragIn, ActResult](Meta{Name: "drag", Scope: Control, Effect: true, Bound: CallBound, Audit: AuditActed, Says: saysDragged, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_drag", Desc: "Drag from one element to another with real mouse input; HTML drags drop as Chromium's own."}},
		CLI: &Verb{Name: "drag", Use: "drag PAGE TARGET --to TARGET", Short: "Drag an element onto another with real mouse input (HTML drag and drop included)", Target: RequiredTarget}})
)

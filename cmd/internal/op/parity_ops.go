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

// NetworkRequestIn reads one request of a page's network log with its
// headers and bodies: only a request of allowed origins (its document's
// and its own), bodies within their bound.
type NetworkRequestIn struct {
	OnPage
	Seq  uint64 `json:"seq" flag:"seq,required" usage:"the request's seq, as network lists it (required)"`
	Part string `json:"part,omitempty" flag:"part" usage:"only this part: request-headers, request-body, response-headers or response-body"`
}

// Header is one HTTP header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// RequestDetail is one request with its headers and bodies, bounded;
// credentials are named with their values withheld.
type RequestDetail struct {
	Entry           DiagEntry `json:"entry"`
	RequestHeaders  []Header  `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header  `json:"responseHeaders,omitempty"`
	RequestBody     string    `json:"requestBody,omitempty"`
	ResponseBody    string    `json:"responseBody,omitempty"`
	MimeType        string    `json:"mimeType,omitempty"`
	// Truncated names the parts cut at their bound.
	Truncated []string `json:"truncated,omitempty"`
	// Notes say why a part asked for is not shown.
	Notes []string `json:"notes,omitempty"`
}

// RequestResult is one request's details, under the page's id.
type RequestResult struct {
	Page string `json:"page"`
	RequestDetail
}

// The parity reads.
var (
	NetworkRequest = declare[NetworkRequestIn, RequestResult](Meta{Name: "network_request", Scope: Read, Bound: CallBound, Audit: NotAudited, Reveals: RevealsPageText,
		MCP: []Tool{{Name: "browser_network_request", Group: CapDevtools, Desc: "One request's headers and bodies (bounded), by its seq from browser_network_requests."}},
		CLI: &Verb{Name: "request", Use: "request PAGE --seq N", Short: "One network request's headers and bodies (bounded; credentials withheld)"}})
)

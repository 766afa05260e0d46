package surface

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/fsm"
)

// dispatchTimeout bounds how long a dispatched input may stay unacknowledged
// in the background after its caller returned (a dialog holds it).
const dispatchTimeout = 60 * time.Second

// resumeTimeout bounds Runtime.runIfWaitingForDebugger on a new iframe
// target.
const resumeTimeout = 10 * time.Second

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload) that
// is open on the page.
type Dialog struct {
	Type          string `json:"type"`
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt,omitempty"`

	url string // the document that opened it, judged before it is shown or answered
}

// ActionResult reports what an action did. Fields that do not apply to the
// action are zero. Typed values are never echoed: only character counts.
type ActionResult struct {
	Action string `json:"action"`
	Role   string `json:"role,omitempty"`
	Tag    string `json:"tag,omitempty"`
	// Rebound reports that the ref's element had been re-rendered and the
	// action went to its unique, strongly equivalent replacement.
	Rebound bool `json:"rebound,omitempty"`
	// NoOp reports that the element was already in the requested state.
	NoOp bool `json:"noop,omitempty"`
	// Requested and Delivered count characters (code points) of type/fill.
	Requested int `json:"requested,omitempty"`
	Delivered int `json:"delivered,omitempty"`
	// Length is the field's text length (code points) after type/fill.
	Length int `json:"length,omitempty"`
	// Checked is the state read back after check/uncheck.
	Checked *bool `json:"checked,omitempty"`
	// Selected holds the values of the selected options after select.
	Selected []string `json:"selected,omitempty"`
	// Files holds the base names of uploaded files.
	Files []string `json:"files,omitempty"`
	// Dialog is set when a JavaScript dialog opened during the action; the
	// page waits for Page.HandleDialog.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Scroll is the scroll position after scroll.
	Scroll *ScrollState `json:"scroll,omitempty"`
	// Viewport is the viewport size after resize.
	Viewport *Viewport `json:"viewport,omitempty"`
	// Media holds the media overrides in force after emulate_media.
	Media map[string]string `json:"media,omitempty"`
	// Dropped says whether the page took the drop of a drag or drop that
	// delivered HTML drag events (nil: none were delivered).
	Dropped *bool `json:"dropped,omitempty"`
	// Navigation, NewTab and Download report what the action caused, each
	// only when it happened (effects.go).
	Navigation *Navigation    `json:"navigation,omitempty"`
	NewTab     *NewTab        `json:"newTab,omitempty"`
	Download   *DownloadStart `json:"download,omitempty"`
}

// ScrollState is a scroll position of the main document.
type ScrollState struct {
	AtBottom bool `json:"atBottom"`
	AtTop    bool `json:"atTop"`
	Y        int  `json:"y"`
	Height   int  `json:"height"`
	Viewport int  `json:"viewport"`
}

type prepResult struct {
	pageErr
	Rebound   bool     `json:"rebound"`
	Role      string   `json:"role"`
	Tag       string   `json:"tag"`
	X         float64  `json:"x"`
	Y         float64  `json:"y"`
	W         float64  `json:"w"`
	H         float64  `json:"h"`
	Checked   *bool    `json:"checked"`
	BeforeLen int      `json:"beforeLen"`
	Secret    bool     `json:"secret"`
	Kind      string   `json:"kind"`
	NeedEnd   bool     `json:"needEnd"`
	Selected  int      `json:"selected"`
	Values    []string `json:"values"`
	NavSeq    int      `json:"navSeq"`
	ScrollState

	// The main world and the frame index its last admission read, when the
	// target is in the main document: the pointer check right after may
	// start from them instead of reading the frame tree again.
	admittedIn *world
	admitted   frameIndex
}

// prepare runs the page's prepare for kind on t: revalidation of the
// document (nonce) and the ref, resolution, visibility, enabled and hit
// checks. Nothing has been dispatched when it fails.
func (p *Page) prepare(ctx context.Context, t Target, arg prepareArgs) (*world, *prepResult, error) {
	var res *prepResult
	var w *world
	for attempt := 0; attempt < 2; attempt++ {
		b, err := p.bind(ctx, t)
		if err != nil {
			return nil, nil, p.readErr(ctx, err)
		}
		// The document is admitted before the page script touches it.
		if err := p.admit(ctx, b.w); err != nil {
			if errors.Is(err, errWorldGone) && b.isRef {
				return nil, nil, fsm.Refuse(fsm.BindingStale, "the ref's document was replaced (navigation or reload)").WithCause(err)
			}
			if errors.Is(err, errWorldGone) && attempt == 0 {
				continue
			}
			return nil, nil, p.readErr(ctx, err)
		}
		w, res, err = p.resolveIn(ctx, b, arg)
		if errors.Is(err, errWorldGone) && !b.isRef && attempt == 0 {
			// The document was replaced before anything was dispatched: a
			// semantic target is looked up in the new one.
			continue
		}
		if err != nil {
			return nil, res, p.readErr(ctx, err)
		}
		break
	}
	// Admitted again before anything is dispatched: the document the target
	// was found in is still its frame's, and it and the frames above it are
	// still allowed.
	if w != nil {
		idx, err := p.admitIndex(ctx, w)
		if err != nil {
			if errors.Is(err, errWorldGone) {
				return nil, nil, fsm.Refuse(fsm.BindingStale, "the target's document was replaced before anything was sent").WithCause(err)
			}
			return nil, nil, p.readErr(ctx, err)
		}
		if idx != nil && w.sess == p.sess && w.frame == p.main {
			res.admittedIn, res.admitted = w, idx
		}
	}
	if w != nil && (res.X != 0 || res.Y != 0) && (w.sess != p.sess || w.frame != p.main) {
		dx, dy, err := p.frameOrigin(ctx, w, 0)
		if err != nil {
			return nil, nil, p.readErr(ctx, err)
		}
		res.X += dx
		res.Y += dy
	}
	return w, res, nil
}

// frameOrigin returns the offset of a frame's viewport in the page viewport
// (scrolling its <iframe> into view in each parent).
func (p *Page) frameOrigin(ctx context.Context, w *world, depth int) (float64, float64, error) {
	if w.sess == p.sess && w.frame == p.main {
		return 0, 0, nil
	}
	if depth > maxFrameDepth {
		return 0, 0, fmt.Errorf("surface: frame nesting too deep")
	}
	p.mu.Lock()
	c, oop := p.children[w.frame]
	p.mu.Unlock()
	parent := c.parent
	if !oop {
		tree, err := cdproto.Call(ctx, p.sess, page.GetFrameTree, cdproto.Empty{})
		if err != nil {
			return 0, 0, err
		}
		parent = parentOf(tree.FrameTree, w.frame)
	}
	var err error
	if parent == "" {
		return 0, 0, fmt.Errorf("surface: the frame's parent is gone")
	}
	var pw *world
	if parent == p.main {
		pw, err = p.mainWorld(ctx)
	} else {
		pw, err = p.frameWorld(ctx, parent)
	}
	if err != nil {
		return 0, 0, err
	}
	p.tagChildFrames(ctx, pw)
	box, err := invoke(ctx, p, pw, jsFrameBox, frameKeyArgs{Key: p.frameKey(w.frame)})
	if err != nil {
		return 0, 0, err
	}
	if box.Err != "" {
		return 0, 0, box.refusal()
	}
	x, y, err := p.frameOrigin(ctx, pw, depth+1)
	return box.X + x, box.Y + y, err
}

func parentOf(t *page.FrameTree, id cdproto.FrameID) cdproto.FrameID {
	for _, c := range t.ChildFrames {
		if c.Frame != nil && c.Frame.ID == id {
			return t.Frame.ID
		}
		if f := parentOf(c, id); f != "" {
			return f
		}
	}
	return ""
}

// dispatch runs the input commands of an action. When a JavaScript dialog
// opens before they are acknowledged (the page is blocked in alert()), it
// returns the dialog and leaves the commands to finish in the background
// once the dialog is handled; they are never sent twice.
func (p *Page) dispatch(ctx context.Context, fn func(ctx context.Context) error) (*Dialog, error) {
	p.mu.Lock()
	dch := p.dialogCh
	p.mu.Unlock()
	done := make(chan error, 1)
	// The commands outlive the caller when a dialog holds them, but not the
	// Page.
	dctx, cancel := context.WithTimeout(p.life, dispatchTimeout)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		done <- fn(dctx)
	}()
	select {
	case err := <-done:
		return nil, err
	case <-dch:
		d := p.Dialog() // judged: a denied document's dialog shows its type only
		if d == nil {
			// Opened and closed already: wait for the acknowledgement.
			select {
			case err := <-done:
				return nil, err
			case <-ctx.Done():
				return nil, fsm.Refuse(fsm.OutcomeUnknown, "the input was sent but not acknowledged before the deadline").WithCause(ctx.Err())
			}
		}
		return d, nil
	case <-ctx.Done():
		return nil, fsm.Refuse(fsm.OutcomeUnknown, "the input was sent but not acknowledged before the deadline").WithCause(ctx.Err())
	case <-p.gone:
		return nil, fsm.Refuse(fsm.OutcomeUnknown, "the page closed while the input was in flight")
	}
}

func (p *Page) mouse(ctx context.Context, typ input.DispatchMouseEventType, x, y float64, btn input.MouseButton, buttons, count int64) error {
	_, err := cdproto.Call(ctx, p.sess, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: btn, Buttons: buttons, ClickCount: count})
	return err
}

// clickAt presses and releases the left button at (x, y). There is no
// separate mouseMoved: Chromium aligns moves to animation frames (about
// 16 ms each), and a press at a new point already fires the boundary events
// (mouseover, mouseenter) of a move.
func (p *Page) clickAt(ctx context.Context, x, y float64) (*Dialog, error) {
	return p.clickAfter(ctx, x, y, nil, clickInput{button: input.MouseButtonLeft, buttons: 1, count: 1})
}

// ClickOptions say how Click clicks; the zero value is one left click.
type ClickOptions struct {
	Button    string   // left (default), right or middle
	Double    bool     // a double click: two presses, the second with clickCount 2
	Modifiers []string // held during the click: Alt, Control, ControlOrMeta, Meta, Shift
}

// clickInput is ClickOptions as mouse events say them.
type clickInput struct {
	button  input.MouseButton
	buttons int64 // the pressed-buttons bit of button
	count   int64
	mods    int64
}

// clickButtons are the buttons a click may use, with their pressed bits.
var clickButtons = map[string]struct {
	b    input.MouseButton
	bits int64
}{"": {input.MouseButtonLeft, 1}, "left": {input.MouseButtonLeft, 1}, "right": {input.MouseButtonRight, 2}, "middle": {input.MouseButtonMiddle, 4}}

func (o ClickOptions) input() (clickInput, error) {
	btn, ok := clickButtons[o.Button]
	if !ok {
		return clickInput{}, fsm.Refusef(fsm.InvalidArgument, "button %q is not left, right or middle", capString(o.Button, 20))
	}
	ci := clickInput{button: btn.b, buttons: btn.bits, count: 1}
	if o.Double {
		ci.count = 2
	}
	for _, m := range o.Modifiers {
		if m == "ControlOrMeta" {
			m = "Control" // Linux and Windows; Meta would be macOS's
		}
		bit, ok := modifierBits[m]
		if !ok {
			return clickInput{}, fsm.Refusef(fsm.InvalidArgument, "modifier %q is not Alt, Control, ControlOrMeta, Meta or Shift", capString(m, 20))
		}
		ci.mods |= bit
	}
	return ci, nil
}

// clickAfter is clickAt right after prepare, whose admission of the main
// document the pointer check starts from. A double click is two press and
// release pairs, the second with clickCount 2, as a person's.
func (p *Page) clickAfter(ctx context.Context, x, y float64, pre *prepResult, ci clickInput) (*Dialog, error) {
	if err := p.pointerAllowedAfter(ctx, x, y, pre); err != nil {
		return nil, err
	}
	d, err := p.dispatch(ctx, func(ctx context.Context) error {
		for n := int64(1); n <= ci.count; n++ {
			press := input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: ci.button, Buttons: ci.buttons, ClickCount: n, Modifiers: ci.mods}
			if _, err := cdproto.Call(ctx, p.sess, input.DispatchMouseEvent, press); err != nil {
				return err
			}
			release := press
			release.Type, release.Buttons = input.DispatchMouseEventTypeMouseReleased, 0
			if _, err := cdproto.Call(ctx, p.sess, input.DispatchMouseEvent, release); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var r *fsm.Refusal
		if errors.As(err, &r) {
			return nil, err
		}
		return nil, p.dispatchErr(ctx, err)
	}
	return d, nil
}

// Click scrolls the target into view, checks that the click point hits it
// (not an overlay), and clicks it with real mouse events.
func (p *Page) Click(ctx context.Context, t Target) (*ActionResult, error) {
	return p.ClickWith(ctx, t, ClickOptions{})
}

// ClickWith is Click with another button, a double click or modifier keys
// held (o); options it cannot honor are refused before anything is sent.
func (p *Page) ClickWith(ctx context.Context, t Target, o ClickOptions) (*ActionResult, error) {
	ci, err := o.input()
	if err != nil {
		return nil, err
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "click"})
	if err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "click", Role: res.Role, Tag: res.Tag, Rebound: res.Rebound}
	mark = p.withNav(mark, w, res)
	d, err := p.clickAfter(ctx, res.X, res.Y, res, ci)
	out.Dialog = d
	if err == nil {
		p.collectEffects(ctx, mark, out)
	}
	return out, err
}

// Hover moves the mouse over the target.
func (p *Page) Hover(ctx context.Context, t Target) (*ActionResult, error) {
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "hover"})
	if err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "hover", Role: res.Role, Tag: res.Tag, Rebound: res.Rebound}
	mark = p.withNav(mark, w, res)
	if err := p.pointerAllowedAfter(ctx, res.X, res.Y, res); err != nil {
		return nil, err
	}
	d, err := p.dispatch(ctx, func(ctx context.Context) error {
		return p.mouse(ctx, input.DispatchMouseEventTypeMouseMoved, res.X, res.Y, input.MouseButtonNone, 0, 0)
	})
	out.Dialog = d
	if err != nil {
		var r *fsm.Refusal
		if !errors.As(err, &r) {
			err = p.dispatchErr(ctx, err)
		}
		return out, err
	}
	p.collectEffects(ctx, mark, out)
	return out, nil
}

// Type focuses the target and inserts text at the end of its value with
// Input.insertText, then reads the field back. Fewer characters delivered
// than requested is browser_input_incomplete (the result says how many).
func (p *Page) Type(ctx context.Context, t Target, text string) (*ActionResult, error) {
	return p.TypeText(ctx, t, text, TypeOptions{})
}

// Fill replaces the target's value (or contenteditable text) with text.
func (p *Page) Fill(ctx context.Context, t Target, text string) (*ActionResult, error) {
	return p.TypeText(ctx, t, text, TypeOptions{Clear: true})
}

// MaxSlowlyChars bounds the text of one keystroke-by-keystroke typing.
const MaxSlowlyChars = 2000

// TypeOptions says how TypeText delivers text.
type TypeOptions struct {
	// Clear replaces the value instead of appending (Fill).
	Clear bool
	// Slowly types keystroke by keystroke: a keyDown (with the character's
	// text) and a keyUp per character, so key handlers see each one, as
	// they do a person's typing. A newline is the Enter key, a tab the Tab
	// key. At most MaxSlowlyChars characters.
	Slowly bool
	// Expand, when set, gives the text to type for the URL of the document
	// the field is in, read after the field is found and just before
	// anything is typed (secrets bound to origins); its error refuses the
	// action with nothing typed.
	Expand func(docURL string) (string, error)
}

// TypeText types text into the target as o says and reads the field back:
// Requested and Delivered count characters, Length is the field's length
// after. Fewer delivered than requested is browser_input_incomplete, whose
// next step says how many characters to type again.
func (p *Page) TypeText(ctx context.Context, t Target, text string, o TypeOptions) (*ActionResult, error) {
	name := "type"
	if o.Clear {
		name = "fill"
	}
	n := utf8.RuneCountInString(text)
	if o.Slowly && n > MaxSlowlyChars {
		return nil, fsm.Refusef(fsm.LimitExceeded, "at most %d characters typed slowly per call", MaxSlowlyChars)
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "type", Clear: o.Clear, Empty: o.Clear && text == ""})
	if err != nil {
		return nil, err
	}
	if o.Expand != nil {
		if text, err = p.expandFor(ctx, w, o.Expand); err != nil {
			return nil, err
		}
		n = utf8.RuneCountInString(text)
		if o.Slowly && n > MaxSlowlyChars {
			return nil, fsm.Refusef(fsm.LimitExceeded, "at most %d characters typed slowly per call", MaxSlowlyChars)
		}
	}
	out := &ActionResult{Action: name, Role: res.Role, Tag: res.Tag, Rebound: res.Rebound, Requested: n}
	mark = p.withNav(mark, w, res)
	if text != "" {
		d, err := p.dispatch(ctx, func(ctx context.Context) error {
			if res.NeedEnd {
				// A field without a selection API (email, number): move the
				// caret to the end as a person would, with the End key.
				if err := p.stroke(ctx, stroke{key: namedKeys["end"]}); err != nil {
					return err
				}
			}
			if o.Slowly {
				for _, r := range text {
					if err := p.stroke(ctx, stroke{key: keyForRune(r)}); err != nil {
						return err
					}
				}
				return nil
			}
			// The text goes wherever the focus is when it arrives.
			if err := p.focusAllowed(ctx); err != nil {
				return err
			}
			_, err := cdproto.Call(ctx, p.sess, input.InsertText, input.InsertTextParams{Text: text})
			return err
		})
		if err != nil {
			var r *fsm.Refusal
			if !errors.As(err, &r) {
				err = p.dispatchErr(ctx, err)
			}
			return out, err
		}
		if d != nil {
			out.Dialog = d
			return out, nil
		}
	}
	rb, err := untilNavigation(ctx, p, mark, func(ctx context.Context) (readBackResult, error) {
		return invoke(ctx, p, w, jsReadBack, readBackArgs{Text: text})
	})
	var read *navStateResult // the read-back says the navigation state too
	if err == nil && rb.Err == "" && w == mark.doc {
		read = rb.Nav
	}
	p.collectEffectsRead(ctx, mark, out, read)
	if out.Navigation != nil && !out.Navigation.SameDocument {
		// An Enter submitted the form: the field's document is gone.
		return out, fsm.Refuse(fsm.OutcomeUnknown, "the page navigated before the typed value could be read back")
	}
	if err != nil {
		if errors.Is(err, errWorldGone) || errors.Is(err, errNavigating) || p.sessionEnded(err) {
			return out, fsm.Refuse(fsm.OutcomeUnknown, "the document was replaced before the typed value could be read back").WithCause(err)
		}
		return out, p.readErr(ctx, err)
	}
	if rb.Err != "" {
		return out, fsm.Refuse(fsm.OutcomeUnknown, "the field went away before its value could be read back")
	}
	out.Delivered, out.Length = rb.Delivered, rb.Length
	if rb.Delivered < out.Requested {
		r := fsm.Refusef(fsm.InputIncomplete, "delivered %d of %d characters", rb.Delivered, out.Requested)
		r.Next = fmt.Sprintf("the field holds the first %d; type the remaining %d characters again (from character %d), or fill the whole value", rb.Delivered, out.Requested-rb.Delivered, rb.Delivered+1)
		return out, r
	}
	return out, nil
}

// expandFor is expand of the URL of w's document, read from the frame
// tree now: a document replaced since w was found is refused as stale.
func (p *Page) expandFor(ctx context.Context, w *world, expand func(string) (string, error)) (string, error) {
	idx, err := p.frames(ctx, w.sess != p.sess)
	if err != nil {
		return "", p.readErr(ctx, err)
	}
	n, ok := idx[w.frame]
	if !ok || (w.load != "" && n.loader != w.load) {
		return "", fsm.Refuse(fsm.BindingStale, "the field's document was replaced before anything was typed")
	}
	return expand(n.url)
}

// Select chooses options of a <select> by value or visible label and
// dispatches input and change events.
func (p *Page) Select(ctx context.Context, t Target, values ...string) (*ActionResult, error) {
	if len(values) == 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "select needs at least one value")
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "select", Values: values})
	if err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "select", Role: "combobox", Tag: "select", Rebound: res.Rebound, Selected: res.Values}
	p.collectEffects(ctx, p.withNav(mark, w, res), out)
	return out, nil
}

// Check clicks a checkbox, radio or switch when its state differs from want,
// and reads the state back.
func (p *Page) Check(ctx context.Context, t Target, want bool) (*ActionResult, error) {
	name := "check"
	if !want {
		name = "uncheck"
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	mark := p.effectMark()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "check", Want: want})
	if err != nil {
		return nil, err
	}
	mark = p.withNav(mark, w, res)
	out := &ActionResult{Action: name, Role: res.Role, Tag: res.Tag, Rebound: res.Rebound, Checked: res.Checked}
	if res.Checked != nil && *res.Checked == want {
		out.NoOp = true
		return out, nil
	}
	d, err := p.clickAfter(ctx, res.X, res.Y, res, clickInput{button: input.MouseButtonLeft, buttons: 1, count: 1})
	out.Dialog = d
	if err != nil || d != nil {
		return out, err
	}
	p.collectEffects(ctx, mark, out)
	if out.Navigation != nil && !out.Navigation.SameDocument {
		return out, nil // the control's document is gone: nothing to read back
	}
	rc, err := invoke(ctx, p, w, jsReadChecked, none{})
	if err != nil || rc.Err != "" {
		return out, fsm.Refuse(fsm.OutcomeUnknown, "the control went away before its state could be read back")
	}
	out.Checked = rc.Checked
	if rc.Checked == nil || *rc.Checked != want {
		return out, fmt.Errorf("surface: %s: the click did not change the state", name)
	}
	return out, nil
}

// focus focuses the target without input.
func (p *Page) focus(ctx context.Context, t Target) (*world, *prepResult, error) {
	return p.prepare(ctx, t, prepareArgs{Kind: "focus"})
}

// Press sends real key events: for each key in keys (space separated, each
// "Mod+Key", e.g. "Control+a Enter"), keyDown (with its text, which inserts
// it: no separate char event) and keyUp. With a target, it is focused first.
func (p *Page) Press(ctx context.Context, t *Target, keys string) (*ActionResult, error) {
	strokes, err := parseKeys(keys)
	if err != nil {
		return nil, err
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	out := &ActionResult{Action: "press"}
	mark := p.effectMark()
	if t != nil {
		w, res, err := p.focus(ctx, *t)
		if err != nil {
			return nil, err
		}
		out.Role, out.Tag, out.Rebound = res.Role, res.Tag, res.Rebound
		mark = p.withNav(mark, w, res)
	}
	if mark.doc == nil {
		mark = p.withNavRead(ctx, mark)
	}
	d, err := p.dispatch(ctx, func(ctx context.Context) error {
		for _, s := range strokes {
			if err := p.stroke(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	out.Dialog = d
	if err != nil {
		var r *fsm.Refusal
		if !errors.As(err, &r) {
			err = p.dispatchErr(ctx, err)
		}
		return out, err
	}
	p.collectEffects(ctx, mark, out)
	return out, nil
}

type keyDef struct {
	key, code string
	keyCode   int64
	text      string
}

var namedKeys = map[string]keyDef{
	"enter":      {"Enter", "Enter", 13, "\r"},
	"tab":        {"Tab", "Tab", 9, ""},
	"escape":     {"Escape", "Escape", 27, ""},
	"esc":        {"Escape", "Escape", 27, ""},
	"backspace":  {"Backspace", "Backspace", 8, ""},
	"delete":     {"Delete", "Delete", 46, ""},
	"arrowup":    {"ArrowUp", "ArrowUp", 38, ""},
	"arrowdown":  {"ArrowDown", "ArrowDown", 40, ""},
	"arrowleft":  {"ArrowLeft", "ArrowLeft", 37, ""},
	"arrowright": {"ArrowRight", "ArrowRight", 39, ""},
	"home":       {"Home", "Home", 36, ""},
	"end":        {"End", "End", 35, ""},
	"pageup":     {"PageUp", "PageUp", 33, ""},
	"pagedown":   {"PageDown", "PageDown", 34, ""},
	"space":      {" ", "Space", 32, " "},
	"insert":     {"Insert", "Insert", 45, ""},
	"shift":      {"Shift", "ShiftLeft", 16, ""},
	"control":    {"Control", "ControlLeft", 17, ""},
	"ctrl":       {"Control", "ControlLeft", 17, ""},
	"alt":        {"Alt", "AltLeft", 18, ""},
	"meta":       {"Meta", "MetaLeft", 91, ""},
}

var modifierBits = map[string]int64{"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}

type stroke struct {
	mods []keyDef
	key  keyDef
}

func parseKeys(keys string) ([]stroke, error) {
	fields := strings.Fields(keys)
	if len(fields) == 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "no keys given")
	}
	if len(fields) > 64 {
		return nil, fsm.Refuse(fsm.LimitExceeded, "at most 64 key strokes per press")
	}
	var out []stroke
	for _, f := range fields {
		parts := strings.Split(f, "+")
		if f == "+" {
			parts = []string{"+"}
		}
		var s stroke
		for i, part := range parts {
			kd, ok := keyFor(part)
			if !ok {
				return nil, fsm.Refusef(fsm.InvalidArgument, "unknown key %q", capString(part, 20))
			}
			if i < len(parts)-1 {
				if _, isMod := modifierBits[kd.key]; !isMod {
					return nil, fsm.Refusef(fsm.InvalidArgument, "%q is not a modifier", capString(part, 20))
				}
				s.mods = append(s.mods, kd)
				continue
			}
			s.key = kd
		}
		out = append(out, s)
	}
	return out, nil
}

// keyForRune is the key that types r: Enter and Tab for their
// characters, else a key whose text is r.
func keyForRune(r rune) keyDef {
	switch r {
	case '\n', '\r':
		return namedKeys["enter"]
	case '\t':
		return namedKeys["tab"]
	case ' ':
		return namedKeys["space"]
	}
	kd, _ := keyFor(string(r))
	return kd
}

func keyFor(name string) (keyDef, bool) {
	if kd, ok := namedKeys[strings.ToLower(name)]; ok {
		return kd, true
	}
	if len(name) >= 2 && (name[0] == 'F' || name[0] == 'f') {
		var n int
		if _, err := fmt.Sscanf(name[1:], "%d", &n); err == nil && n >= 1 && n <= 12 {
			return keyDef{fmt.Sprintf("F%d", n), fmt.Sprintf("F%d", n), int64(111 + n), ""}, true
		}
	}
	r, size := utf8.DecodeRuneInString(name)
	if size == 0 || size != len(name) {
		return keyDef{}, false
	}
	kd := keyDef{key: name, text: name}
	switch {
	case r >= 'a' && r <= 'z':
		kd.code, kd.keyCode = "Key"+string(unicode.ToUpper(r)), int64(unicode.ToUpper(r))
	case r >= 'A' && r <= 'Z':
		kd.code, kd.keyCode = "Key"+string(r), int64(r)
	case r >= '0' && r <= '9':
		kd.code, kd.keyCode = "Digit"+string(r), int64(r)
	}
	return kd, true
}

// key sends one key event to wherever the focus is, after checking that
// the focus is not in a frame the Judge refuses (a key stroke can move it).
func (p *Page) key(ctx context.Context, typ input.DispatchKeyEventType, kd keyDef, mods int64, text string) error {
	if err := p.focusAllowed(ctx); err != nil {
		return err
	}
	_, err := cdproto.Call(ctx, p.sess, input.DispatchKeyEvent, input.DispatchKeyEventParams{
		Type: typ, Modifiers: mods, Key: kd.key, Code: kd.code, WindowsVirtualKeyCode: kd.keyCode,
		NativeVirtualKeyCode: kd.keyCode, Text: text, UnmodifiedText: text,
	})
	return err
}

func (p *Page) stroke(ctx context.Context, s stroke) error {
	var mods int64
	for _, m := range s.mods {
		mods |= modifierBits[m.key]
		if err := p.key(ctx, input.DispatchKeyEventTypeRawKeyDown, m, mods, ""); err != nil {
			return err
		}
	}
	text := s.key.text
	if mods&(1|2|4) != 0 {
		text = "" // a shortcut inserts nothing
	} else if mods&8 != 0 && text != "" {
		text = strings.ToUpper(text)
	}
	kd := s.key
	if mods&8 != 0 && utf8.RuneCountInString(kd.key) == 1 {
		kd.key = strings.ToUpper(kd.key) // the key value a shifted letter reports
	}
	typ := input.DispatchKeyEventTypeKeyDown
	if text == "" {
		typ = input.DispatchKeyEventTypeRawKeyDown
	}
	// keyDown with text inserts it; sending a char event too would type it
	// twice.
	if err := p.key(ctx, typ, kd, mods, text); err != nil {
		return err
	}
	if err := p.key(ctx, input.DispatchKeyEventTypeKeyUp, kd, mods, ""); err != nil {
		return err
	}
	for i := len(s.mods) - 1; i >= 0; i-- {
		mods &^= modifierBits[s.mods[i].key]
		if err := p.key(ctx, input.DispatchKeyEventTypeKeyUp, s.mods[i], mods, ""); err != nil {
			return err
		}
	}
	return nil
}

// ScrollOptions says where to scroll: to a target, to the top or bottom, or
// by pixels.
type ScrollOptions struct {
	Target *Target
	To     string // "top" or "bottom"
	DX, DY float64
}

// Scroll moves the main document's viewport and reports where it is,
// including AtBottom, so a reading loop knows when it has seen everything.
// Scrolling is read-only: it dispatches nothing on the site's behalf.
func (p *Page) Scroll(ctx context.Context, o ScrollOptions) (*ActionResult, error) {
	if err := p.live(); err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "scroll"}
	if o.Target != nil {
		_, res, err := p.prepare(ctx, *o.Target, prepareArgs{Kind: "scroll"})
		if err != nil {
			return nil, err
		}
		out.Role, out.Tag, out.Rebound = res.Role, res.Tag, res.Rebound
		st := res.ScrollState
		out.Scroll = &st
		return out, nil
	}
	switch o.To {
	case "", "top", "bottom":
	default:
		return nil, fsm.Refuse(fsm.InvalidArgument, "scroll to is top or bottom")
	}
	var st scrollResult
	err := p.admitted(ctx, func(w *world) error {
		var err error
		st, err = invoke(ctx, p, w, jsScroll, scrollArgs{To: o.To, DX: o.DX, DY: o.DY})
		return err
	})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	out.Scroll = &st.ScrollState
	return out, nil
}

// withMain runs fn in the main world, once more in a new document when the
// document was replaced (for read-only operations).
func (p *Page) withMain(ctx context.Context, fn func(w *world) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var w *world
		w, err = p.mainWorld(ctx)
		if err != nil {
			return err
		}
		err = fn(w)
		if !errors.Is(err, errWorldGone) {
			return err
		}
	}
	return err
}

// Dialog returns the JavaScript dialog open on the page, or nil. A dialog
// opened by a document the Judge refuses is reported by its type only.
func (p *Page) Dialog() *Dialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dialog == nil {
		return nil
	}
	d := *p.dialog
	if p.judge(d.url) != nil {
		d.Message, d.DefaultPrompt = "", ""
	}
	return &d
}

// HandleDialog accepts or dismisses the open JavaScript dialog; promptText
// answers a prompt when accepting. A dialog opened by a document the Judge
// refuses is never answered: that would be input to a denied document.
func (p *Page) HandleDialog(ctx context.Context, accept bool, promptText string) error {
	if p.isGone() || p.closed.Load() {
		return fsm.Refuse(fsm.PageClosed, "the page is closed")
	}
	p.mu.Lock()
	d := p.dialog
	p.mu.Unlock()
	if d == nil {
		return fsm.Refuse(fsm.NotFound, "no JavaScript dialog is open")
	}
	if err := p.judge(d.url); err != nil {
		return err
	}
	_, err := cdproto.Call(ctx, p.sess, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept, PromptText: promptText})
	if err != nil {
		return p.dispatchErr(ctx, err)
	}
	p.mu.Lock()
	p.dialog = nil
	p.mu.Unlock()
	return nil
}

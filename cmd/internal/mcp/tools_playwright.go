package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// The tools of Playwright MCP (0.0.83, `--caps vision,pdf`) that webcodex
// had no verb for, under Playwright's names, argument names and value
// shapes: resize, media emulation and the vision group's raw pointer input.
// Each is one page action through the Runner's act route (origin gate,
// mutation gate, effect ledger, audit), and every point the pointer touches
// is hit tested like every pointer input: over a denied frame it is refused.

// playwrightTools are registered after the verb tools, in this order.
var playwrightTools = []string{
	"browser_resize", "browser_emulate_media",
	"browser_mouse_move_xy", "browser_mouse_click_xy", "browser_mouse_drag_xy",
	"browser_mouse_down", "browser_mouse_up", "browser_mouse_wheel",
	"browser_find", "browser_pdf_save",
}

func init() { toolOrder = append(toolOrder, playwrightTools...) }

func (s *Server) addPlaywrightTools(read, control []Scope) {
	opTool(s, &op.Resize.Meta, "browser_resize",
		func(sc *jsonschema.Schema) {
			bounds(sc, "width", 1, surface.MaxViewportSide)
			bounds(sc, "height", 1, surface.MaxViewportSide)
			sc.Required = []string{"width", "height"}
		}, s.resize)
	opTool(s, &op.EmulateMedia.Meta, "browser_emulate_media",
		func(sc *jsonschema.Schema) {
			for _, f := range mediaArgs {
				// Playwright's values, or null (an enum says both in
				// fewer bytes than its anyOf).
				p := &jsonschema.Schema{}
				for _, v := range f.values() {
					p.Enum = append(p.Enum, v)
				}
				sc.Properties[f.arg] = p
				p.Enum = append(p.Enum, nil)
			}
			sc.Required = nil
		}, s.emulateMedia)

	point := func(sc *jsonschema.Schema, names ...string) {
		for _, n := range names {
			bounds(sc, n, -surface.MaxPointerCoord, surface.MaxPointerCoord)
		}
		sc.Required = names
	}
	button := func(sc *jsonschema.Schema) { enum(sc, "button", "left", "right", "middle") }
	opTool(s, &op.PointerInput.Meta, "browser_mouse_move_xy",
		func(sc *jsonschema.Schema) { point(sc, "x", "y") }, s.mouseMove)
	opTool(s, &op.PointerInput.Meta, "browser_mouse_click_xy",
		func(sc *jsonschema.Schema) {
			point(sc, "x", "y")
			button(sc)
			bounds(sc, "clickCount", 1, surface.MaxClickCount)
			bounds(sc, "delay", 0, float64(surface.MaxClickDelay.Milliseconds()))
		}, s.mouseClick)
	opTool(s, &op.PointerInput.Meta, "browser_mouse_drag_xy",
		func(sc *jsonschema.Schema) { point(sc, "startX", "startY", "endX", "endY") }, s.mouseDrag)
	opTool(s, &op.PointerInput.Meta, "browser_mouse_down",
		button, s.mouseButton("down"))
	opTool(s, &op.PointerInput.Meta, "browser_mouse_up",
		button, s.mouseButton("up"))
	opTool(s, &op.PointerInput.Meta, "browser_mouse_wheel",
		func(sc *jsonschema.Schema) {
			bounds(sc, "deltaX", -surface.MaxWheelDelta, surface.MaxWheelDelta)
			bounds(sc, "deltaY", -surface.MaxWheelDelta, surface.MaxWheelDelta)
			sc.Required = []string{"deltaX", "deltaY"}
		}, s.mouseWheel)
	opTool(s, &op.TakeSnapshot.Meta, "browser_find", nil, s.find)
	opTool(s, &op.PDF.Meta, "browser_pdf_save", nil, s.pdfSave)
}

// ---------------------------------------------------------------- resize

type resizeIn struct {
	PageArg
	Width  float64 `json:"width" jsonschema:"CSS px"`
	Height float64 `json:"height" jsonschema:"CSS px"`
}

func (s *Server) resize(ctx context.Context, c *toolCall, in resizeIn) (any, error) {
	for _, side := range []struct {
		name string
		v    float64
	}{{"width", in.Width}, {"height", in.Height}} {
		if side.v != math.Trunc(side.v) {
			return nil, fsm.Refusef(fsm.InvalidArgument, "%s is a whole number of CSS pixels, 1 to %d", side.name, surface.MaxViewportSide)
		}
	}
	return act(ctx, s, op.Resize, in.Page, op.ResizeIn{Viewport: op.Viewport{Width: int(in.Width), Height: int(in.Height)}}, false)
}

// ---------------------------------------------------------------- media

// nullable is an argument whose null differs from its absence (Playwright:
// omitted stays, null clears).
type nullable struct {
	set   bool
	value string
}

func (n *nullable) UnmarshalJSON(b []byte) error {
	n.set = true
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, &n.value); err != nil || n.value == "" {
		return fsm.Refuse(fsm.InvalidArgument, "a media argument is one of its values, or null to clear it")
	}
	return nil
}

type emulateMediaIn struct {
	PageArg
	ColorScheme   nullable `json:"colorScheme,omitzero"`
	ReducedMotion nullable `json:"reducedMotion,omitzero"`
	ForcedColors  nullable `json:"forcedColors,omitzero"`
	Contrast      nullable `json:"contrast,omitzero"`
	Media         nullable `json:"media,omitzero"`
}

// mediaArgs maps Playwright's argument names to CSS media features.
type mediaArg struct {
	arg, feature string
	get          func(*emulateMediaIn) nullable
}

var mediaArgs = []mediaArg{
	{"colorScheme", "prefers-color-scheme", func(in *emulateMediaIn) nullable { return in.ColorScheme }},
	{"reducedMotion", "prefers-reduced-motion", func(in *emulateMediaIn) nullable { return in.ReducedMotion }},
	{"forcedColors", "forced-colors", func(in *emulateMediaIn) nullable { return in.ForcedColors }},
	{"contrast", "prefers-contrast", func(in *emulateMediaIn) nullable { return in.Contrast }},
	{"media", surface.MediaKey + " type", func(in *emulateMediaIn) nullable { return in.Media }},
}

// key names the argument's feature to the surface.
func (f mediaArg) key() string {
	if f.arg == "media" {
		return surface.MediaKey
	}
	return f.feature
}

// values are the values the argument takes (besides null).
func (f mediaArg) values() []string {
	if f.arg == "media" {
		return surface.MediaTypes
	}
	return surface.MediaFeatures[f.feature]
}

func (s *Server) emulateMedia(ctx context.Context, c *toolCall, in emulateMediaIn) (any, error) {
	change := map[string]string{}
	for _, f := range mediaArgs {
		v := f.get(&in)
		if !v.set {
			continue
		}
		if v.value != "" && !slices.Contains(f.values(), v.value) {
			return nil, fsm.Refusef(fsm.InvalidArgument, "%s is one of %s, or null to clear it", f.arg, strings.Join(f.values(), ", "))
		}
		change[f.key()] = v.value
	}
	if len(change) == 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "give at least one of colorScheme, reducedMotion, forcedColors, contrast, media (null clears one)")
	}
	return act(ctx, s, op.EmulateMedia, in.Page, op.EmulateMediaIn{Media: change}, false)
}

// ---------------------------------------------------------------- vision

type moveIn struct {
	PageArg
	X float64 `json:"x" jsonschema:"viewport CSS px"`
	Y float64 `json:"y" jsonschema:"viewport CSS px"`
}

type clickXYIn struct {
	moveIn
	Button     string  `json:"button,omitempty"`
	ClickCount float64 `json:"clickCount,omitempty" jsonschema:"2: double click"`
	Delay      float64 `json:"delay,omitempty" jsonschema:"ms between press and release"`
}

type dragXYIn struct {
	PageArg
	StartX float64 `json:"startX" jsonschema:"viewport CSS px"`
	StartY float64 `json:"startY" jsonschema:"viewport CSS px"`
	EndX   float64 `json:"endX" jsonschema:"viewport CSS px"`
	EndY   float64 `json:"endY" jsonschema:"viewport CSS px"`
}

type buttonIn struct {
	PageArg
	Button string `json:"button,omitempty"`
}

type wheelIn struct {
	PageArg
	DeltaX float64 `json:"deltaX" jsonschema:"px right"`
	DeltaY float64 `json:"deltaY" jsonschema:"px down"`
}

// pointer sends one raw pointer input.
func (s *Server) pointer(ctx context.Context, page string, p op.Pointer) (any, error) {
	return act(ctx, s, op.PointerInput, page, op.PointerIn{Pointer: p}, false)
}

// whole refuses v unless it is a whole number from lo to hi.
func whole(name string, v float64, lo, hi int) (int, error) {
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, fsm.Refusef(fsm.InvalidArgument, "%s is a whole number from %d to %d", name, lo, hi)
	}
	return int(v), nil
}

func (s *Server) mouseMove(ctx context.Context, c *toolCall, in moveIn) (any, error) {
	return s.pointer(ctx, in.Page, op.Pointer{Kind: "move", X: in.X, Y: in.Y})
}

func (s *Server) mouseClick(ctx context.Context, c *toolCall, in clickXYIn) (any, error) {
	n, err := whole("clickCount", max(in.ClickCount, 1), 1, surface.MaxClickCount)
	if err != nil {
		return nil, err
	}
	d, err := whole("delay", in.Delay, 0, int(surface.MaxClickDelay.Milliseconds()))
	if err != nil {
		return nil, err
	}
	return s.pointer(ctx, in.Page, op.Pointer{Kind: "click", X: in.X, Y: in.Y, Button: in.Button, ClickCount: n, DelayMS: d})
}

func (s *Server) mouseDrag(ctx context.Context, c *toolCall, in dragXYIn) (any, error) {
	return s.pointer(ctx, in.Page, op.Pointer{Kind: "drag", X: in.StartX, Y: in.StartY, EndX: in.EndX, EndY: in.EndY})
}

func (s *Server) mouseButton(kind string) func(context.Context, *toolCall, buttonIn) (any, error) {
	return func(ctx context.Context, c *toolCall, in buttonIn) (any, error) {
		return s.pointer(ctx, in.Page, op.Pointer{Kind: kind, Button: in.Button})
	}
}

func (s *Server) mouseWheel(ctx context.Context, c *toolCall, in wheelIn) (any, error) {
	return s.pointer(ctx, in.Page, op.Pointer{Kind: "wheel", DeltaX: in.DeltaX, DeltaY: in.DeltaY})
}

// ---------------------------------------------------------------- find

// Bounds of browser_find.
const (
	maxFindMatches = 20
	maxFindChunks  = 8      // snapshot chunks read to search a big page
	maxFindChars   = 200000 // the characters of one chunk
	findContext    = 2      // lines of context on each side of a match
)

type findIn struct {
	PageArg
	Text  string `json:"text,omitempty" jsonschema:"any case"`
	Regex string `json:"regex,omitempty" jsonschema:"/re/i for flags"`
}

// findPattern compiles text or regex (Playwright: a regex in slashes may
// carry flags, e.g. /error/i).
func findPattern(in findIn) (*regexp.Regexp, error) {
	switch {
	case in.Text != "" && in.Regex != "":
		return nil, fsm.Refuse(fsm.InvalidArgument, "give text or regex, not both")
	case in.Text != "":
		return regexp.MustCompile("(?i)" + regexp.QuoteMeta(in.Text)), nil
	case in.Regex == "":
		return nil, fsm.Refuse(fsm.InvalidArgument, "give text (a substring) or regex to find")
	}
	expr := in.Regex
	if len(expr) > 2 && expr[0] == '/' {
		if end := strings.LastIndexByte(expr, '/'); end > 0 {
			flags := expr[end+1:]
			if strings.Trim(flags, "imsU") != "" {
				return nil, fsm.Refusef(fsm.InvalidArgument, "regex flags are i, m, s or U, not %q", capText(flags, 10))
			}
			expr = expr[1:end]
			if flags != "" {
				expr = "(?" + flags + ")" + expr
			}
		}
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fsm.Refusef(fsm.InvalidArgument, "regex does not compile (RE2 syntax): %s", capText(err.Error(), 120))
	}
	return re, nil
}

// find searches a fresh snapshot of the page (which becomes the page's
// latest: its refs act) and answers each matching line under its path
// from the root, with a few lines around it.
func (s *Server) find(ctx context.Context, c *toolCall, in findIn) (any, error) {
	re, err := findPattern(in)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	v, err := s.snapshotReply(ctx, op.SnapshotIn{OnPage: op.OnPage{Page: page}, MaxChars: maxFindChars})
	if err != nil {
		return nil, err
	}
	outline := v.text
	cursor, _ := v.fields["cursor"].(string)
	for i := 1; cursor != "" && i < maxFindChunks; i++ {
		next, err := s.snapshotReply(ctx, op.SnapshotIn{OnPage: op.OnPage{Page: page}, Cursor: cursor, MaxChars: maxFindChars})
		if err != nil {
			return nil, err
		}
		outline += next.text
		cursor, _ = next.fields["cursor"].(string)
	}
	var lines []string
	for _, l := range strings.Split(outline, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "- ") {
			lines = append(lines, l)
		}
	}
	var b strings.Builder
	matches := 0
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		matches++
		if matches > maxFindMatches {
			continue
		}
		b.WriteString("---\n")
		// The path: each nearer line with less indent, from the root.
		var path []string
		from := max(0, i-findContext)
		indent := indentOf(l)
		for _, c := range lines[from:i] {
			indent = min(indent, indentOf(c))
		}
		for j := from - 1; j >= 0 && indent > 0; j-- {
			if in := indentOf(lines[j]); in < indent {
				path = append(path, lines[j])
				indent = in
			}
		}
		slices.Reverse(path)
		for _, p := range path {
			b.WriteString(p + "\n")
		}
		for j := max(0, i-findContext); j <= min(len(lines)-1, i+findContext); j++ {
			mark := ""
			if j == i {
				mark = "  <- match"
			}
			b.WriteString(lines[j] + mark + "\n")
		}
	}
	what := in.Text
	if what == "" {
		what = in.Regex
	}
	head := fmt.Sprintf("%d match(es) for %q", matches, capText(what, 60))
	if matches > maxFindMatches {
		head += fmt.Sprintf(", the first %d shown", maxFindMatches)
	}
	if cursor != "" {
		head += fmt.Sprintf("; only the first %d chunks of a big page were searched", maxFindChunks)
	}
	fields := map[string]any{"page": page, "snapshotId": v.id, "matches": matches}
	return &reply{text: head + "\n" + b.String(), fields: fields}, nil
}

// indentOf is the outline depth of a line (two spaces a level).
func indentOf(l string) int { return (len(l) - len(strings.TrimLeft(l, " "))) / 2 }

// ---------------------------------------------------------------- pdf

type pdfIn struct {
	PageArg
	Filename string `json:"filename,omitempty" jsonschema:"a file name in the session's output directory; default page-TIME.pdf"`
}

// pdfSave prints the page (an owned browser's) and writes the PDF into
// the session's output directory, as Playwright saves it into its output
// directory; the name is checked before anything is printed.
func (s *Server) pdfSave(ctx context.Context, c *toolCall, in pdfIn) (any, error) {
	name := in.Filename
	if name == "" {
		name = "page-" + time.Now().UTC().Format("2006-01-02T15-04-05.000Z") + ".pdf"
	}
	if err := outputName(name); err != nil {
		return nil, err
	}
	if s.opts.OutputDir != "" { // a link there is refused before anything is printed (saveOutput refuses it again)
		if st, err := os.Lstat(filepath.Join(s.opts.OutputDir, name)); err == nil && !st.Mode().IsRegular() {
			return nil, fsm.Refusef(fsm.InvalidArgument, "filename %q is a link or not a file in the output directory; links are not followed", capText(name, 60))
		}
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := callOp(ctx, s.runner, op.PDF, op.PDFIn{OnPage: op.OnPage{Page: page}})
	if err != nil {
		return nil, err
	}
	path, err := s.saveOutput(name, res.PDF)
	if err != nil {
		return nil, err
	}
	return &reply{text: fmt.Sprintf("saved the page as PDF (%d bytes) to %s\n", len(res.PDF), path),
		fields: map[string]any{"page": page, "savedTo": path, "bytes": len(res.PDF)}}, nil
}

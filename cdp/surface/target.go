package surface

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/webcodex/webcodex/fsm"
)

// Target names one element. Exactly one kind is given: a ref with the
// snapshot id it came from; a role (optionally with a name); a label; a
// text; a placeholder; a test id (data-testid); or a CSS selector.
//
// Role, name, label and placeholder compare normalized text without case:
// exact matches win, and substring matches count only when there is no
// exact one. A text target resolves a matching text leaf to its nearest
// actionable ancestor. Index, when set, picks among the visible matches
// (zero-based), after hidden ones are filtered out; without it several
// visible matches are refused as ambiguous.
//
// Semantic targets are resolved in the main document, its open shadow roots
// and its same-origin frames; only when nothing matches there are
// cross-origin frames searched. Refs reach any frame.
type Target struct {
	Ref         string `json:"ref,omitempty"`
	SnapshotID  string `json:"snapshotId,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testId,omitempty"`
	CSS         string `json:"css,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

// pageTarget is the form the page script takes.
type pageTarget struct {
	Ref         string `json:"ref,omitempty"`
	Snap        string `json:"snap,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testId,omitempty"`
	CSS         string `json:"css,omitempty"`
	Index       *int   `json:"index,omitempty"`
}

var refPattern = regexp.MustCompile(`^(f\d+)?e(\d+)$`)

// splitRef returns the prefix ("e" or "fNe") and number of a ref.
func splitRef(ref string) (string, int, error) {
	m := refPattern.FindStringSubmatch(ref)
	if m == nil {
		return "", 0, fsm.Refuse(fsm.InvalidArgument, "malformed ref (want eN or fKeN)")
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, fsm.Refuse(fsm.InvalidArgument, "malformed ref")
	}
	return m[1] + "e", n, nil
}

// validate checks that exactly one kind of target is given.
func (t Target) validate() error {
	kinds := 0
	for _, s := range []string{t.Ref, t.Role, t.Label, t.Text, t.Placeholder, t.TestID, t.CSS} {
		if s != "" {
			kinds++
		}
	}
	if kinds == 0 {
		return fsm.Refuse(fsm.InvalidArgument, "empty target: give a ref, role, label, text, placeholder, testId or css")
	}
	if kinds > 1 {
		return fsm.Refuse(fsm.InvalidArgument, "give exactly one kind of target (name goes with role)")
	}
	if t.Name != "" && t.Role == "" {
		return fsm.Refuse(fsm.InvalidArgument, "name needs a role")
	}
	if t.Ref != "" && t.SnapshotID == "" {
		return fsm.Refuse(fsm.InvalidArgument, "a ref needs the snapshot id it came from")
	}
	if t.Index != nil && *t.Index < 0 {
		return fsm.Refuse(fsm.InvalidArgument, "index must be zero or more")
	}
	return nil
}

// binding is a target resolved to the world it must be looked up in.
type binding struct {
	w      *world
	pt     pageTarget
	isRef  bool
	frames []*world // other worlds to try for a semantic target
}

// bind revalidates a target against the Go-side ref table: generation,
// snapshot, ref membership and the world of its frame document.
func (p *Page) bind(ctx context.Context, t Target) (*binding, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	pt := pageTarget{Role: t.Role, Name: t.Name, Label: t.Label, Text: t.Text, Placeholder: t.Placeholder, TestID: t.TestID, CSS: t.CSS, Index: t.Index}
	if t.Ref != "" {
		rec, err := p.record(t.SnapshotID)
		if err != nil {
			return nil, err
		}
		prefix, n, err := splitRef(t.Ref)
		if err != nil {
			return nil, err
		}
		rec.mu.Lock()
		w, known := rec.worlds[prefix], rec.refs[prefix][n]
		rec.mu.Unlock()
		if w == nil || !known {
			// Never minted there: no element has that ref, so nothing is
			// stale (a ref that was there and went is, and says so).
			return nil, fsm.Refusef(fsm.ElementNotFound, "ref %s is not in snapshot %s; take a snapshot and use a ref it lists", t.Ref, t.SnapshotID)
		}
		pt.Ref, pt.Snap = t.Ref, t.SnapshotID
		return &binding{w: w, pt: pt, isRef: true}, nil
	}
	w, err := p.mainWorld(ctx)
	if err != nil {
		return nil, err
	}
	return &binding{w: w, pt: pt}, nil
}

// otherWorlds returns the worlds of cross-origin frames the page knows of,
// for semantic targets that match nothing in the main document.
func (p *Page) otherWorlds(ctx context.Context, main *world) []*world {
	kids := p.tagChildFrames(ctx, main)
	if len(kids) == 0 {
		return nil
	}
	// In document order, so that an index counts as a reader would.
	var order struct {
		pageErr
		Keys []string `json:"keys"`
	}
	if err := p.call(ctx, main, "frameOrder", map[string]any{"nonce": main.nonce}, false, &order); err != nil || order.Err != "" {
		return nil
	}
	var out []*world
	for _, k := range order.Keys {
		fid, ok := kids[k]
		if !ok {
			continue
		}
		if w, err := p.frameWorld(ctx, fid); err == nil {
			out = append(out, w)
		}
	}
	return out
}

// pageErr is the refusal shape the page script returns.
type pageErr struct {
	Err     string `json:"err"`
	Detail  string `json:"detail"`
	Count   int    `json:"count"`
	Visible int    `json:"visible"`
	Index   *int   `json:"index"`
	HitTag  string `json:"hitTag"`
}

func (e pageErr) refusal() error {
	switch e.Err {
	case "":
		return nil
	case "not_found":
		if e.Index != nil {
			return fsm.Refusef(fsm.ElementNotFound, "index %d is out of range: %d visible matches (%d in all)", *e.Index, e.Visible, e.Count)
		}
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementNotFound, "%s", e.Detail)
		}
		return fsm.Refuse(fsm.ElementNotFound, "0 elements match")
	case "hidden":
		d := fmt.Sprintf("%d matches, none visible", e.Count)
		if e.Detail != "" {
			d += " (" + e.Detail + ")"
		}
		return fsm.Refuse(fsm.ElementHidden, d)
	case "ambiguous":
		return fsm.Refusef(fsm.ElementAmbiguous, "%d visible matches (%d in all); narrow the target or pass an index", e.Visible, e.Count)
	case "disabled":
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementDisabled, "the element is disabled (%s)", e.Detail)
		}
		return fsm.Refuse(fsm.ElementDisabled, "1 match, disabled")
	case "obscured":
		if e.HitTag != "" {
			return fsm.Refusef(fsm.ElementObscured, "1 match; the click point hits a <%s> on top of it", e.HitTag)
		}
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementObscured, "1 match; %s", e.Detail)
		}
		return fsm.Refuse(fsm.ElementObscured, "1 match; the click point hits nothing")
	case "stale":
		d := "the ref's element is gone"
		if e.Detail != "" {
			d = e.Detail
		}
		return fsm.Refuse(fsm.BindingStale, d)
	case "invalid":
		return fsm.Refuse(fsm.InvalidArgument, e.Detail)
	}
	return fmt.Errorf("surface: page script refused: %s", e.Err)
}

// resolveIn runs the page function fn on a binding: the ref's world, or for
// a semantic target the main world and then, when nothing matched there,
// cross-origin frame worlds. It returns the world that answered.
func (p *Page) resolveIn(ctx context.Context, b *binding, fn string, arg map[string]any, out any, errOf func() *pageErr) (*world, error) {
	arg["target"] = b.pt
	arg["nonce"] = b.w.nonce
	err := p.call(ctx, b.w, fn, arg, false, out)
	if err != nil {
		if errors.Is(err, errWorldGone) && b.isRef {
			return nil, fsm.Refuse(fsm.BindingStale, "the ref's document was replaced (navigation or reload)").WithCause(err)
		}
		return nil, err
	}
	pe := errOf()
	if b.isRef || (pe.Err != "not_found" && pe.Err != "hidden") || (pe.Index != nil && pe.Visible > 0) {
		return b.w, pe.refusal()
	}
	// Nothing visible in the main document: count matches in cross-origin
	// frames (without touching them), then act in the one that holds the
	// match (or the index).
	first := *pe
	total, visible := first.Count, 0
	type hit struct {
		w       *world
		visible int
	}
	var hits []hit
	for _, w := range p.otherWorlds(ctx, b.w) {
		var c struct {
			pageErr
			Count   int `json:"count"`
			Visible int `json:"visible"`
		}
		if err := p.call(ctx, w, "count", map[string]any{"nonce": w.nonce, "target": b.pt}, false, &c); err != nil || c.Err != "" {
			continue
		}
		total += c.Count
		visible += c.Visible
		if c.Visible > 0 {
			hits = append(hits, hit{w, c.Visible})
		}
	}
	if visible == 0 {
		if total > first.Count {
			return b.w, fsm.Refusef(fsm.ElementHidden, "%d matches, none visible", total)
		}
		return b.w, first.refusal()
	}
	var target *world
	pt := b.pt
	if pt.Index != nil {
		i := *pt.Index
		for _, h := range hits {
			if i < h.visible {
				target, pt.Index = h.w, &i
				break
			}
			i -= h.visible
		}
		if target == nil {
			return b.w, fsm.Refusef(fsm.ElementNotFound, "index %d is out of range: %d visible matches (%d in all)", *b.pt.Index, visible, total)
		}
	} else {
		if visible > 1 {
			return b.w, fsm.Refusef(fsm.ElementAmbiguous, "%d visible matches (%d in all) across frames; narrow the target or pass an index", visible, total)
		}
		target = hits[0].w
	}
	*pe = pageErr{}
	arg["target"], arg["nonce"] = pt, target.nonce
	if err := p.call(ctx, target, fn, arg, false, out); err != nil {
		return nil, err
	}
	return target, pe.refusal()
}

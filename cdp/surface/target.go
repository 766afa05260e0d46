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
// snapshot id it came from (without one, the page's newest snapshot that
// lists the ref); a role (optionally with a name); a label; a
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
	if t.Index != nil && *t.Index < 0 {
		return fsm.Refuse(fsm.InvalidArgument, "index must be zero or more")
	}
	return nil
}

// fillSnapshot gives a bare ref (no snapshot id) the newest snapshot of
// this page that lists it ([Page.SnapshotOf]): the ref stays fenced to that
// snapshot's document, so a ref whose document was replaced is
// browser_binding_stale, never rebound.
func (p *Page) fillSnapshot(t *Target) error {
	if t.Ref == "" || t.SnapshotID != "" {
		return nil
	}
	id, err := p.SnapshotOf(t.Ref)
	if err != nil {
		return err
	}
	t.SnapshotID = id
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
	if err := p.fillSnapshot(&t); err != nil {
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
	order, err := invoke(ctx, p, main, jsFrameOrder, none{})
	if err != nil || order.Err != "" {
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
	Err     fsm.Code `json:"err"`
	Detail  string   `json:"detail"`
	Count   int      `json:"count"`
	Visible int      `json:"visible"`
	Index   *int     `json:"index"`
	HitTag  string   `json:"hitTag"`
}

func (e pageErr) refusal() error {
	switch e.Err {
	case "":
		return nil
	case fsm.ElementNotFound:
		if e.Index != nil {
			return fsm.Refusef(fsm.ElementNotFound, "index %d is out of range: %d visible matches (%d in all)", *e.Index, e.Visible, e.Count)
		}
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementNotFound, "%s", e.Detail)
		}
		return fsm.Refuse(fsm.ElementNotFound, "0 elements match")
	case fsm.ElementHidden:
		d := fmt.Sprintf("%d matches, none visible", e.Count)
		if e.Detail != "" {
			d += " (" + e.Detail + ")"
		}
		return fsm.Refuse(fsm.ElementHidden, d)
	case fsm.ElementAmbiguous:
		return fsm.Refusef(fsm.ElementAmbiguous, "%d visible matches (%d in all); narrow the target or pass an index", e.Visible, e.Count)
	case fsm.ElementDisabled:
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementDisabled, "the element is disabled (%s)", e.Detail)
		}
		return fsm.Refuse(fsm.ElementDisabled, "1 match, disabled")
	case fsm.ElementObscured:
		if e.HitTag != "" {
			return fsm.Refusef(fsm.ElementObscured, "1 match; the click point hits a <%s> on top of it", e.HitTag)
		}
		if e.Detail != "" {
			return fsm.Refusef(fsm.ElementObscured, "1 match; %s", e.Detail)
		}
		return fsm.Refuse(fsm.ElementObscured, "1 match; the click point hits nothing")
	case fsm.BindingStale:
		d := "the ref's element is gone"
		if e.Detail != "" {
			d = e.Detail
		}
		return fsm.Refuse(fsm.BindingStale, d)
	case fsm.InvalidArgument:
		return fsm.Refuse(fsm.InvalidArgument, e.Detail)
	}
	return fmt.Errorf("surface: the page script refused with %s, which Go does not decode", e.Err)
}

// resolveIn runs the page's prepare on a binding: in the ref's world, or
// for a semantic target in the main world and then, when nothing matched
// there, in cross-origin frame worlds. It returns the world that answered
// and its result.
func (p *Page) resolveIn(ctx context.Context, b *binding, arg prepareArgs) (*world, *prepResult, error) {
	arg.Target = b.pt
	res, err := invoke(ctx, p, b.w, jsPrepare, arg)
	if err != nil {
		if errors.Is(err, errWorldGone) && b.isRef {
			return nil, nil, fsm.Refuse(fsm.BindingStale, "the ref's document was replaced (navigation or reload)").WithCause(err)
		}
		return nil, nil, err
	}
	pe := &res.pageErr
	if b.isRef || (pe.Err != fsm.ElementNotFound && pe.Err != fsm.ElementHidden) || (pe.Index != nil && pe.Visible > 0) {
		return b.w, &res, pe.refusal()
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
		c, err := invoke(ctx, p, w, jsCount, targetArgs{Target: b.pt})
		if err != nil || c.Err != "" {
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
			return b.w, &res, fsm.Refusef(fsm.ElementHidden, "%d matches, none visible", total)
		}
		return b.w, &res, first.refusal()
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
			return b.w, &res, fsm.Refusef(fsm.ElementNotFound, "index %d is out of range: %d visible matches (%d in all)", *b.pt.Index, visible, total)
		}
	} else {
		if visible > 1 {
			return b.w, &res, fsm.Refusef(fsm.ElementAmbiguous, "%d visible matches (%d in all) across frames; narrow the target or pass an index", visible, total)
		}
		target = hits[0].w
	}
	arg.Target = pt
	res, err = invoke(ctx, p, target, jsPrepare, arg)
	if err != nil {
		return nil, nil, err
	}
	return target, &res, res.refusal()
}

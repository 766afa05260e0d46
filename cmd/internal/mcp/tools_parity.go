package mcp

import (
	"context"
	"reflect"
	"strings"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// The tools of Playwright MCP's core that webcodex lacked, each an
// operation of the table (op/parity_ops.go), under Playwright's names and
// argument shapes.

// parityTools are registered after the Playwright tools, in this order.
var parityTools = []string{"browser_drag"}

func init() {
	toolOrder = append(toolOrder, parityTools...)
	for _, t := range []reflect.Type{reflect.TypeFor[startTarget](), reflect.TypeFor[endTarget]()} {
		schemaTypes[t] = schemaTypes[reflect.TypeFor[TargetArg]()]
	}
}

func (s *Server) addParityTools() {
	opTool(s, &op.Drag.Meta, "browser_drag", nil, s.drag)
}

// namedTarget decodes a target whose refusals name its argument.
func namedTarget(t *TargetArg, name string, b []byte) error {
	if err := t.UnmarshalJSON(b); err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			return fsm.Refuse(ref.Code, name+": "+strings.TrimPrefix(strings.TrimPrefix(ref.Detail, "target: "), "target "))
		}
		return err
	}
	return nil
}

// startTarget and endTarget are a drag's two elements.
type startTarget struct{ TargetArg }
type endTarget struct{ TargetArg }

func (t *startTarget) UnmarshalJSON(b []byte) error {
	return namedTarget(&t.TargetArg, "startTarget", b)
}
func (t *endTarget) UnmarshalJSON(b []byte) error { return namedTarget(&t.TargetArg, "endTarget", b) }

type dragIn struct {
	PageArg
	StartElement string       `json:"startElement,omitempty"`
	StartTarget  *startTarget `json:"startTarget,omitempty" jsonschema:"ref or unique selector"`
	EndElement   string       `json:"endElement,omitempty"`
	EndTarget    *endTarget   `json:"endTarget,omitempty" jsonschema:"ref or unique selector"`
	SnapshotAfter
	EffectKey

	start, end string // the latest snapshot of a bare ref's page
}

func (a *dragIn) fillSnapshot(latest func(page, ref string) string) {
	if a.StartTarget != nil && a.StartTarget.Ref != "" {
		a.start = latest(a.Page, a.StartTarget.Ref)
	}
	if a.EndTarget != nil && a.EndTarget.Ref != "" {
		a.end = latest(a.Page, a.EndTarget.Ref)
	}
}

// dragTarget is one end of a drag as the wire takes it.
func dragTarget(name string, t *TargetArg, latest string) (*localapi.Target, error) {
	switch {
	case t == nil || t.empty():
		return nil, fsm.Refusef(fsm.InvalidArgument, "%s names the element: a ref (e5, from browser_snapshot) or a unique selector", name)
	case t.Ref != "":
		return refTarget(*t, latest)
	}
	return t.wire(), nil
}

func (s *Server) drag(ctx context.Context, c *toolCall, in dragIn) (any, error) {
	var st, et *TargetArg
	if in.StartTarget != nil {
		st = &in.StartTarget.TargetArg
	}
	if in.EndTarget != nil {
		et = &in.EndTarget.TargetArg
	}
	from, err := dragTarget("startTarget", st, in.start)
	if err != nil {
		return nil, err
	}
	to, err := dragTarget("endTarget", et, in.end)
	if err != nil {
		return nil, err
	}
	return act(ctx, s, op.Drag, in.Page, op.DragIn{Element: op.Element{Target: from}, To: to}, in.Snapshot)
}

package mcp

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// The tools of Playwright MCP's core that webcodex lacked, each an
// operation of the table (op/parity_ops.go), under Playwright's names and
// argument shapes.

// parityTools are registered after the Playwright tools, in this order.
var parityTools = []string{"browser_drag", "browser_network_request"}

func init() {
	toolOrder = append(toolOrder, parityTools...)
	for _, t := range []reflect.Type{reflect.TypeFor[startTarget](), reflect.TypeFor[endTarget]()} {
		schemaTypes[t] = schemaTypes[reflect.TypeFor[TargetArg]()]
	}
}

func (s *Server) addParityTools() {
	opTool(s, &op.Drag.Meta, "browser_drag", nil, s.drag)
	opTool(s, &op.NetworkRequest.Meta, "browser_network_request",
		func(sc *jsonschema.Schema) {
			bounds(sc, "index", 1, math.MaxInt32)
			enum(sc, "part", surface.RequestParts...)
			sc.Required = []string{"index"}
		}, s.networkRequest)
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

type networkRequestIn struct {
	PageArg
	Index float64 `json:"index" jsonschema:"its seq"`
	Part  string  `json:"part,omitempty"`
}

// networkRequest answers one request's details: its line as the list
// shows it, then each part asked for.
func (s *Server) networkRequest(ctx context.Context, c *toolCall, in networkRequestIn) (any, error) {
	seq, err := whole("index", in.Index, 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := callOp(ctx, s.runner, op.NetworkRequest, op.NetworkRequestIn{OnPage: op.OnPage{Page: page}, Seq: uint64(seq), Part: in.Part})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	e := res.Entry
	fmt.Fprintf(&b, "%d %s %s", e.Seq, e.Method, e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&b, " => %d", e.Status)
	}
	if e.Failed != "" {
		b.WriteString(" failed: " + e.Failed)
	}
	b.WriteByte('\n')
	headers := func(title string, hs []op.Header) {
		if len(hs) == 0 {
			return
		}
		b.WriteString(title + ":\n")
		for _, h := range hs {
			fmt.Fprintf(&b, "  %s: %s\n", h.Name, h.Value)
		}
	}
	headers("request headers", res.RequestHeaders)
	if res.RequestBody != "" {
		b.WriteString("request body:\n" + res.RequestBody + "\n")
	}
	headers("response headers", res.ResponseHeaders)
	if res.ResponseBody != "" {
		b.WriteString("response body:\n" + res.ResponseBody + "\n")
	}
	for _, n := range res.Notes {
		b.WriteString("(" + n + ")\n")
	}
	if len(res.Truncated) > 0 {
		b.WriteString("(cut at its bound: " + strings.Join(res.Truncated, ", ") + ")\n")
	}
	return &reply{text: b.String(), fields: map[string]any{"page": page, "request": res.RequestDetail}}, nil
}

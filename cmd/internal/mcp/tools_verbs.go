package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// The verbs of history, scrolling, probing and downloads.

// verbTools are registered after the tools of tools.go, in this order.
var verbTools = []string{
	"browser_navigate_back", "browser_navigate_forward", "browser_reload",
	"browser_scroll", "browser_probe", "browser_downloads",
}

func init() { toolOrder = append(toolOrder, verbTools...) }

// maxDownloadWaitSeconds bounds a downloads wait (the Runner bounds it too).
const maxDownloadWaitSeconds = 40

// The descriptions and schemas are lean: tools/list is sent on every turn
// and stays under its bound (toollist_test.go).
func (s *Server) addVerbTools(read, control []Scope) {
	opTool(s, &op.Back.Meta, "browser_navigate_back", nil, s.historyTool(op.Back))
	opTool(s, &op.Forward.Meta, "browser_navigate_forward", nil, s.historyTool(op.Forward))
	opTool(s, &op.Reload.Meta, "browser_reload", nil, s.historyTool(op.Reload))
	opTool(s, &op.Scroll.Meta, "browser_scroll",
		func(sc *jsonschema.Schema) { enum(sc, "to", "top", "bottom") }, s.scroll)
	opTool(s, &op.Probe.Meta, "browser_probe", nil, s.probe)
	addTool(s, toolSpec{name: "browser_downloads", anyOf: read, desc: "List downloads; wait seconds; save id to an existing dir."},
		nil, s.downloads)
}

// leanRef names a page and, optionally, an element by a ref of the page's
// latest snapshot (fenced like every bare ref).
type leanRef struct {
	PageArg
	Ref    string `json:"ref,omitempty" jsonschema:"e5, from browser_snapshot"`
	latest string
}

func (a *leanRef) fillSnapshot(latest func(page, ref string) string) {
	if a.Ref != "" {
		a.latest = latest(a.Page, a.Ref)
	}
}

func (a *leanRef) target() (*localapi.Target, error) {
	if a.Ref == "" {
		return nil, nil
	}
	return refTarget(TargetArg{Ref: a.Ref}, a.latest)
}

type historyIn struct {
	PageArg
}

// historyTool moves the tab through its history with o (back, forward,
// reload) and answers like browser_navigate.
func (s *Server) historyTool(o *op.Op[op.HistoryIn, op.NavResult]) func(context.Context, *toolCall, historyIn) (any, error) {
	return func(ctx context.Context, c *toolCall, in historyIn) (any, error) {
		ctx, cancel := withTimeout(ctx, defaultToolTimeout)
		defer cancel()
		page, err := s.page(ctx, in.Page)
		if err != nil {
			return nil, err
		}
		nav, err := callOp(ctx, s.runner, o, op.HistoryIn{OnPage: op.OnPage{Page: page}})
		if err != nil {
			return nil, err
		}
		out := map[string]any{"page": nav.Page, "url": nav.URL, "title": nav.Title}
		text := fmt.Sprintf("url: %s\ntitle: %s\n", nav.URL, nav.Title)
		if nav.Loading {
			out["loading"] = true
			text += "still loading: the document committed but had not loaded in time\n"
		}
		return &reply{text: text, fields: out}, nil
	}
}

type scrollIn struct {
	leanRef
	To string  `json:"to,omitempty"`
	DY float64 `json:"dy,omitempty" jsonschema:"pixels down (negative: up)"`
}

func (s *Server) scroll(ctx context.Context, c *toolCall, in scrollIn) (any, error) {
	t, err := in.target()
	if err != nil {
		return nil, err
	}
	if t == nil && in.To == "" && in.DY == 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "give ref, to (top or bottom) or dy")
	}
	return act(ctx, s, op.Scroll, in.Page, op.ScrollIn{Element: op.Element{Target: t}, To: in.To, DY: in.DY}, false)
}

type probeIn struct {
	leanRef
	Action string `json:"action" jsonschema:"click|hover|type|fill|check|press"`
	Text   string `json:"text,omitempty"`
	Key    string `json:"key,omitempty" jsonschema:"press: a key or chord"`
}

func (s *Server) probe(ctx context.Context, c *toolCall, in probeIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	t, err := in.target()
	if err != nil {
		return nil, err
	}
	if t == nil && in.Action != "press" {
		return nil, fsm.Refusef(fsm.InvalidArgument, "%s needs ref (from browser_snapshot)", in.Action)
	}
	page, err := s.page(ctx, in.Page)
	if err != nil {
		return nil, err
	}
	res, err := callOp(ctx, s.runner, op.Probe, op.ProbeIn{OnPage: op.OnPage{Page: page}, Action: in.Action, Target: t, Text: in.Text, Keys: in.Key})
	if err != nil {
		return nil, err
	}
	return &reply{text: jsonText(res), fields: map[string]any{"page": page, "probe": res}}, nil
}

// jsonText is a result as compact JSON text.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

type downloadsIn struct {
	Browser string `json:"browser,omitempty" jsonschema:"default: the current one"`
	ID      string `json:"id,omitempty" jsonschema:"one download, d1"`
	Wait    int    `json:"wait,omitempty" jsonschema:"seconds to wait for them to finish"`
	Save    string `json:"save,omitempty" jsonschema:"move id into this existing directory"`
}

func (s *Server) downloads(ctx context.Context, c *toolCall, in downloadsIn) (any, error) {
	ctx, cancel := withTimeout(ctx, defaultToolTimeout)
	defer cancel()
	if in.Wait < 0 || in.Wait > maxDownloadWaitSeconds {
		return nil, fsm.Refusef(fsm.InvalidArgument, "wait is 0 to %d seconds", maxDownloadWaitSeconds)
	}
	if in.Save != "" {
		// Saving writes a file of the caller's: browser:control, checked
		// (and audited when refused) before anything reaches the Runner.
		if err := s.opts.Scopes.check(c.tool+" save", ScopeControl); err != nil {
			if s.opts.Embedded != nil {
				s.opts.Embedded.AuditRefused(ctx, c.tool, err)
			}
			return nil, err
		}
	}
	b, err := s.browser(ctx, in.Browser)
	if err != nil {
		return nil, err
	}
	if in.Save != "" {
		if in.ID == "" {
			return nil, fsm.Refuse(fsm.InvalidArgument, "save needs the download's id")
		}
		if in.Wait > 0 {
			if _, err := call(ctx, s.runner, localapi.Downloads, localapi.DownloadsRequest{Browser: b.ID, ID: in.ID, WaitMS: in.Wait * 1000}); err != nil {
				return nil, err
			}
		}
		res, err := call(ctx, s.runner, localapi.SaveDownload, localapi.SaveDownloadRequest{Browser: b.ID, ID: in.ID, Dir: in.Save})
		if err != nil {
			return nil, err
		}
		return &reply{text: fmt.Sprintf("saved %s (%d bytes) to %s\n", res.ID, res.Bytes, res.Path), fields: map[string]any{"saved": res}}, nil
	}
	res, err := call(ctx, s.runner, localapi.Downloads, localapi.DownloadsRequest{Browser: b.ID, ID: in.ID, WaitMS: in.Wait * 1000})
	if err != nil {
		return nil, err
	}
	return &reply{text: downloadsText(res.Downloads), fields: map[string]any{"browser": res.Browser, "downloads": res.Downloads}}, nil
}

// downloadsText is one line per download: id, name, state, bytes, and why
// webcodex cancelled it.
func downloadsText(ds []localapi.DownloadInfo) string {
	if len(ds) == 0 {
		return "no downloads\n"
	}
	var sb strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&sb, "%s %q %s %d bytes", d.ID, d.FileName, d.State, d.ReceivedBytes)
		if d.Reason != "" {
			sb.WriteString(" (" + d.Reason + ")")
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

package runner

import (
	"context"
	"fmt"
	"strings"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// frameGated is a page or cross-site iframe session seen through the
// origin gate: the page surface (and raw CDP) creates its world in a frame
// document with Page.createIsolatedWorld, so refusing that command for a
// frame whose origin the gate does not authorize makes the frame's content
// invisible to snapshots and unreachable by refs, whatever origin the page
// embedding it has. The page's main frame passes here: Page.authorize
// judges it on every operation. Everything else is the wrapped session.
type frameGated struct {
	*cdp.Session
	gate *origin.Gate
	main cdproto.FrameID // the page's main frame; "" in an iframe's own session
}

// createWorld is the one command that enters a frame document.
const createWorld = "Page.createIsolatedWorld"

// Call checks Page.createIsolatedWorld against the frame's live origin,
// then sends the command.
func (s frameGated) Call(ctx context.Context, method string, params, result any) error {
	if method == createWorld {
		if err := s.checkFrame(ctx, params); err != nil {
			return err
		}
	}
	return s.Session.Call(ctx, method, params, result)
}

// checkFrame judges the frame named by params' frameId.
func (s frameGated) checkFrame(ctx context.Context, params any) error {
	raw, err := jsonv2.Marshal(params)
	if err != nil {
		return fmt.Errorf("runner: frame gate: %w", err)
	}
	var p struct {
		FrameID cdproto.FrameID `json:"frameId"`
	}
	if err := jsonv2.Unmarshal(raw, &p); err != nil || p.FrameID == "" {
		return fsm.Refuse(fsm.InvalidArgument, "Page.createIsolatedWorld needs a frameId")
	}
	if p.FrameID == s.main {
		return nil
	}
	tree, err := cdproto.Call(ctx, s.Session, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return fmt.Errorf("runner: frame gate: %w", err)
	}
	f := findFrameNode(tree.FrameTree, p.FrameID)
	if f == nil {
		return fsm.Refuse(fsm.NotFound, "no such frame")
	}
	return s.gate.Check(frameURL(f))
}

// frameURL is the URL a frame document is judged by: its URL, or for an
// about:srcdoc document (which inherits its parent's origin) the origin it
// runs as.
func frameURL(f *cdproto.Frame) string {
	if strings.HasPrefix(f.URL, "about:srcdoc") && f.SecurityOrigin != "" {
		return f.SecurityOrigin
	}
	return f.URL
}

func findFrameNode(t *page.FrameTree, id cdproto.FrameID) *cdproto.Frame {
	if t == nil {
		return nil
	}
	if t.Frame != nil && t.Frame.ID == id {
		return t.Frame
	}
	for _, c := range t.ChildFrames {
		if f := findFrameNode(c, id); f != nil {
			return f
		}
	}
	return nil
}

// gatedSession wraps a page's session for the surface: its main frame is
// the target's own frame.
func (b *Browser) gatedSession(sess *cdp.Session, main cdproto.FrameID) surface.Session {
	return frameGated{Session: sess, gate: b.gate, main: main}
}

// gatedChild returns the surface's lookup of cross-site iframe sessions,
// each wrapped so that its frame is judged on its own origin.
func (b *Browser) gatedChild(sess *cdp.Session) func(string) (surface.Session, bool) {
	conn := sess.Conn()
	return func(id string) (surface.Session, bool) {
		s, ok := conn.Session(id)
		if !ok {
			return nil, false
		}
		return frameGated{Session: s, gate: b.gate}, true
	}
}

// visible reports whether a page may be listed: its live URL must pass the
// gate. Unauthorized tabs are not listed, with or without their URL.
func (p *Page) visible(pi localapi.PageInfo) bool {
	return p.browser.gate.Allowed(pi.URL)
}

package runner

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// Bounds of page reads.
const (
	navigationTimeout = 30 * time.Second
	maxReadChars      = 200000
	defaultReadChars  = 20000
)

// Pages lists a browser's pages.
func (r *Runner) Pages(ctx context.Context, req localapi.BrowserRequest) ([]localapi.PageInfo, error) {
	b, err := r.browser(req.Browser)
	if err != nil {
		return nil, err
	}
	// Within statusBound whatever the browser does; pages that did not
	// answer are marked unresponsive, not left out.
	out, _ := b.pageInfos(ctx)
	return out, nil
}

// Open creates a page in the browser and, when a URL is given, navigates it.
func (r *Runner) Open(ctx context.Context, req localapi.OpenRequest) (_ localapi.PageInfo, err error) {
	defer func() { r.auditBrowser(ctx, req.Browser, "open_page", err) }()
	ctx, settle := r.call(ctx, "", "opening the page", r.callBound())
	defer func() { err = settle(err) }()
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.PageInfo{}, err
	}
	if b.lost() {
		return localapi.PageInfo{}, fsm.Refuse(fsm.AttachmentLost, "the browser was lost (it crashed or its connection dropped); close it and launch another")
	}
	res, err := cdproto.Call(ctx, b.conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return localapi.PageInfo{}, fmt.Errorf("runner: create page: %w", err)
	}
	p, err := b.attachPage(ctx, res.TargetID, true)
	if err != nil {
		return localapi.PageInfo{}, err
	}
	if req.URL != "" {
		if _, err := localapi.Of(op.Goto).Call(ctx, r.Routes(), op.GotoIn{OnPage: op.OnPage{Page: p.id}, URL: req.URL}); err != nil {
			return localapi.PageInfo{}, err
		}
	}
	return p.info(ctx), nil
}

// serveNavigation serves goto and the moves through history: the origin
// gate judges the destination before anything moves (a history entry in
// surface.GoHistory), and the document it lands on again, leaving the page
// unreadable when it is off the allowlist.
func serveNavigation(s *opServer) {
	r := s.r
	serveOnPage(s, op.Goto, pageHandler[op.GotoIn, op.NavResult]{
		check: func(ctx context.Context, p *Page, in op.GotoIn) error {
			if err := checkNavigationURL(in.URL); err != nil {
				return err
			}
			return p.browser.gate.Check(in.URL)
		},
		do:      r.navigate,
		observe: r.replayNavigation,
	})
	servePageOp(s, op.Back, func(ctx context.Context, p *Page, _ op.HistoryIn) (op.NavResult, error) {
		return r.history(ctx, p, func(ctx context.Context) (*surface.NavResult, error) {
			return p.surf.GoHistory(ctx, -1, p.browser.gate.Check)
		})
	})
	servePageOp(s, op.Forward, func(ctx context.Context, p *Page, _ op.HistoryIn) (op.NavResult, error) {
		return r.history(ctx, p, func(ctx context.Context) (*surface.NavResult, error) {
			return p.surf.GoHistory(ctx, +1, p.browser.gate.Check)
		})
	})
	servePageOp(s, op.Reload, func(ctx context.Context, p *Page, _ op.HistoryIn) (op.NavResult, error) {
		return r.history(ctx, p, func(ctx context.Context) (*surface.NavResult, error) {
			return p.surf.Reload(ctx, false)
		})
	})
}

// navigate is the navigation itself, dispatched once by the ledger.
func (r *Runner) navigate(ctx context.Context, p *Page, req op.GotoIn) (op.NavResult, error) {
	nctx, cancel := context.WithTimeout(ctx, navigationTimeout)
	defer cancel()
	nav, err := p.surf.Navigate(nctx, req.URL)
	p.navFailed.Store(fsm.IsCode(err, fsm.NavigationFailed))
	if err != nil {
		return op.NavResult{}, err
	}
	loading := !nav.Loaded && nav.Dialog == nil
	if nav.URL == "" && loading {
		// Committed and still loading (a huge document keeps the page's
		// main thread busy): what the browser process knows is the answer.
		if nav.URL, nav.Title, err = p.targetInfo(context.WithoutCancel(ctx)); err != nil {
			return op.NavResult{}, err
		}
	}
	if err := p.browser.gate.Check(nav.URL); err != nil {
		return op.NavResult{}, leftAllowlist(err)
	}
	p.remember(nav.URL, nav.Title)
	return op.NavResult{Page: p.id, URL: nav.URL, Title: nav.Title, Status: int(nav.Status), Loading: loading}, nil
}

// targetInfo is the page's URL and title as the browser process reports
// them, within statusBound: it answers while the page's main thread is busy.
func (p *Page) targetInfo(ctx context.Context) (string, string, error) {
	ictx, cancel := context.WithTimeout(ctx, statusBound)
	defer cancel()
	res, err := cdproto.Call(ictx, p.browser.c().Browser(), target.GetTargetInfo, target.GetTargetInfoParams{TargetID: p.target})
	if err != nil || res.TargetInfo == nil {
		return "", "", fsm.Refuse(fsm.Timeout, "the browser did not say where the navigating page is").WithCause(err)
	}
	return res.TargetInfo.URL, res.TargetInfo.Title, nil
}

// checkNavigationURL refuses, as the caller's mistake, a URL that is not
// absolute: "example.com" or "localhost:8080" would otherwise reach the
// origin gate and read as a denied origin.
func checkNavigationURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fsm.Refuse(fsm.InvalidArgument, "the URL does not parse; give an absolute URL such as https://example.com/")
	case u.Scheme == "":
		return fsm.Refuse(fsm.InvalidArgument, "the URL has no scheme; give an absolute URL such as https://example.com/")
	case u.Opaque != "" && (strings.Contains(u.Scheme, ".") || strings.IndexAny(u.Opaque[:1], "0123456789") == 0):
		return fsm.Refuse(fsm.InvalidArgument, "the URL reads as host:port without a scheme; write http://host:port/")
	case (u.Scheme == "http" || u.Scheme == "https") && u.Host == "":
		return fsm.Refuse(fsm.InvalidArgument, "the URL has no host; give an absolute URL such as https://example.com/")
	}
	return nil
}

// authorize judges the page's live URL (never a cached one): a page that
// redirected or navigated off the allowlist is unreadable.
func (p *Page) authorize(ctx context.Context) error {
	id, err := p.surf.Identity(ctx)
	if err != nil {
		return err
	}
	// The person's tab that went where the agent may not look is refused
	// exactly like an unknown id, not "left".
	return p.judge(id.URL)
}

// judge applies the browser's gate to a URL of this page the way authorize
// does: a person's tab off the allowlist is refused like an unknown id.
func (p *Page) judge(rawURL string) error {
	if err := p.browser.gate.Check(rawURL); err != nil {
		if p.personal() {
			return fsm.Refuse(fsm.NotFound, "no such page")
		}
		if p.navFailed.Load() && strings.HasPrefix(rawURL, "chrome-error:") {
			// The browser's error page after a goto that failed: the page
			// went nowhere, so "left the allowed origins" would mislead.
			return fsm.Refuse(fsm.NavigationFailed, "the page's last navigation failed and it shows the browser's error page; navigate it to a URL that loads")
		}
		return leftAllowlist(err)
	}
	return nil
}

// targetURL is the page's URL as the browser reports it for the target: it
// answers while a dialog blocks the page's scripts, but may lag a
// navigation, so only verbs that cannot read the page use it.
func (p *Page) targetURL(ctx context.Context) (string, error) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := cdproto.Call(ictx, p.browser.c().Browser(), target.GetTargetInfo, target.GetTargetInfoParams{TargetID: p.target})
	if err != nil || res.TargetInfo == nil {
		return "", fsm.Refuse(fsm.PageClosed, "the page is closed").WithCause(err)
	}
	return res.TargetInfo.URL, nil
}

// personal reports whether p is a tab of the person's own browser that
// webcodex did not open: once it is off the allowlist it is invisible and
// refused like an unknown id, and never navigated.
func (p *Page) personal() bool {
	if !p.browser.attached() {
		return false
	}
	p.browser.mu.Lock()
	defer p.browser.mu.Unlock()
	return !p.opened
}

// leftAllowlist tells the agent the page left the allowlist, naming the
// origin it is on and never what the list holds.
func leftAllowlist(err error) error {
	if ref, ok := fsm.AsRefusal(err); ok {
		return fsm.Refuse(fsm.OriginDenied, "the page left the allowed origins and is now unreadable: "+ref.Detail)
	}
	return err
}

func (p *Page) info(ctx context.Context) localapi.PageInfo {
	pi := localapi.PageInfo{ID: p.id, Browser: p.browser.id}
	if u, title, err := p.targetInfo(ctx); err == nil {
		pi.URL, pi.Title = u, title
		p.remember(u, title)
	} else {
		pi.Unresponsive = true
	}
	return pi
}

// remember keeps what the browser last said of the page, for a listing it
// does not answer in time.
func (p *Page) remember(url, title string) {
	p.browser.mu.Lock()
	p.lastURL, p.lastTitle = url, title
	p.browser.mu.Unlock()
}

// servePageReads serves the reads of what a page shows, and the wait.
func servePageReads(s *opServer) {
	servePageOp(s, op.ReadText, func(ctx context.Context, p *Page, in op.ReadIn) (op.ReadResult, error) {
		max := in.MaxChars
		if max <= 0 {
			max = defaultReadChars
		}
		rd, err := p.surf.Read(ctx, min(max, maxReadChars))
		if err != nil {
			return op.ReadResult{}, err
		}
		return op.ReadResult{Page: p.id, Text: rd.Text, Truncated: rd.Truncated, Chars: rd.TotalChars}, nil
	})
	servePageOp(s, op.Screenshot, func(ctx context.Context, p *Page, in op.ScreenshotIn) (op.ScreenshotResult, error) {
		png, err := p.surf.Screenshot(ctx, surface.ScreenshotOptions{FullPage: in.FullPage, Target: surfaceTarget(in.Target)})
		if err != nil {
			return op.ScreenshotResult{}, err
		}
		w, h := pngSize(png)
		return op.ScreenshotResult{Page: p.id, PNG: png, Width: w, Height: h}, nil
	})
	serveOnPage(s, op.PDF, pageHandler[op.PDFIn, op.PDFResult]{
		// A person's browser is never printed: its print path is the
		// person's own. The surface refuses a page that holds a frame of a
		// denied origin (spec/boundaries.md).
		check: func(ctx context.Context, p *Page, _ op.PDFIn) error {
			if p.browser.attached() {
				return fsm.Refuse(fsm.RouteUnavailable, "a PDF is printed only from a browser webcodex launched, not from the person's own")
			}
			return nil
		},
		do: func(ctx context.Context, p *Page, _ op.PDFIn) (op.PDFResult, error) {
			data, err := p.surf.PDF(ctx)
			if err != nil {
				return op.PDFResult{}, err
			}
			return op.PDFResult{Page: p.id, PDF: data}, nil
		},
	})
	servePageOp(s, op.TakeSnapshot, snapshot)
	servePageOp(s, op.Wait, func(ctx context.Context, p *Page, in op.WaitIn) (op.WaitResult, error) {
		o := surface.WaitOptions{Condition: in.Condition, Text: in.Text, URL: in.URL, URLIncludes: in.URLIncludes, Timeout: in.WaitFor(), Target: surfaceTarget(in.Target)}
		res, err := p.surf.Wait(ctx, o)
		if err != nil {
			return op.WaitResult{}, err
		}
		if err := p.authorize(ctx); err != nil { // a wait may end on another origin: never report its URL
			return op.WaitResult{}, err
		}
		return op.WaitResult{Page: p.id, WaitOutcome: op.WaitOutcome(*res)}, nil
	})
}

// snapshot returns one chunk of the page outline with refs.
func snapshot(ctx context.Context, p *Page, in op.SnapshotIn) (op.SnapshotResult, error) {
	if in.Cursor != "" {
		s, err := p.surf.SnapshotNext(ctx, in.Cursor, in.MaxChars)
		if err != nil {
			return op.SnapshotResult{}, err
		}
		return op.SnapshotResult{Page: p.id, Snapshot: op.Snapshot(*s)}, nil
	}
	opts := surface.SnapshotOptions{Interactive: in.Interactive, Since: in.Since, MaxChars: in.MaxChars, Scope: surfaceTarget(in.Scope), Query: mapPtr(in.Query, func(q op.Query) surface.Query { return surface.Query(q) })}
	s, err := p.surf.Snapshot(ctx, opts)
	if err != nil {
		return op.SnapshotResult{}, err
	}
	if err := p.authorize(ctx); err != nil { // it may have left while we read
		return op.SnapshotResult{}, err
	}
	return op.SnapshotResult{Page: p.id, Snapshot: op.Snapshot(*s)}, nil
}

// pngSize reads the IHDR width and height of a PNG.
func pngSize(b []byte) (int, int) {
	if len(b) < 24 || string(b[1:4]) != "PNG" {
		return 0, 0
	}
	return int(binary.BigEndian.Uint32(b[16:20])), int(binary.BigEndian.Uint32(b[20:24]))
}

// serveScript serves JavaScript in the page and its dialog.
func serveScript(s *opServer) {
	serveOnPage(s, op.Eval, pageHandler[op.EvalIn, op.EvalResult]{
		// Evaluate is open for owned browsers only, unless the owner allowed
		// it for the attachment. The record names the origin the expression
		// started on: it may navigate, and must not be filed under where it
		// went.
		check: func(ctx context.Context, p *Page, _ op.EvalIn) error {
			if p.browser.attached() && !p.browser.allowEvaluate {
				return fsm.Refuse(fsm.PolicyDenied, "evaluate is off for attached browsers unless the owner passes --allow-evaluate for that attachment")
			}
			return nil
		},
		do: eval,
	})
	// A dialog blocks every script of the page: the page is judged by the
	// URL the browser reports for the target (op.JudgeTarget), the dialog
	// itself on the document that opened it (surface).
	servePageOp(s, op.HandleDialog, func(ctx context.Context, p *Page, in op.DialogIn) (op.DialogResult, error) {
		res := op.DialogResult{Page: p.id, Dialog: mapPtr(p.surf.Dialog(), wireDialog)}
		if in.Accept == nil {
			return res, nil // report only
		}
		if err := p.surf.HandleDialog(ctx, *in.Accept, in.Text); err != nil {
			return op.DialogResult{}, err
		}
		res.Accepted = in.Accept
		return res, nil
	})
}

// eval evaluates an expression in the page, or a function on an element,
// with a bounded result.
func eval(ctx context.Context, p *Page, in op.EvalIn) (op.EvalResult, error) {
	var res *surface.EvalResult
	var err error
	if in.Target != nil {
		res, err = p.surf.EvaluateOn(ctx, surface.Target(*in.Target), in.Expr)
	} else {
		res, err = p.surf.Evaluate(ctx, in.Expr)
	}
	if err != nil {
		return op.EvalResult{}, err
	}
	if res.Exception != "" {
		// The page's script failing is a failure, not policy and not a
		// malformed request.
		return op.EvalResult{}, fmt.Errorf("the expression threw: %s", res.Exception)
	}
	out := op.EvalResult{Page: p.id, Truncated: res.Truncated}
	if len(res.Value) > 0 {
		if err := json.Unmarshal(res.Value, &out.Value); err != nil {
			return op.EvalResult{}, fmt.Errorf("runner: decode the value: %w", err)
		}
	}
	return out, nil
}

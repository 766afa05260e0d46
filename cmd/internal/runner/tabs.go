package runner

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"sort"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// Tabs webcodex opens in a person's browser are its own, and so are the
// tabs they open in turn: at detach they are closed, unless the agent handed them over to the person. A handed-over
// tab stays open and is never touched again; the mark the person sees is a
// notice tab webcodex opens beside them at detach, titled "webcodex handed
// over N tabs" and listing their titles, so nothing inside the handed-over
// pages (their title, their DOM) is changed. The person's own tabs are
// never closed, moved or activated.

// tabCloseBound bounds closing the agent's tabs at detach.
const tabCloseBound = 5 * time.Second

// Handover marks tabs webcodex opened in an attached browser as the
// person's: they stay open at detach.
func (r *Runner) Handover(ctx context.Context, req localapi.HandoverRequest) (_ localapi.HandoverResult, err error) {
	defer func() { r.auditBrowser(ctx, req.Browser, "handover", err) }()
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.HandoverResult{}, err
	}
	if !b.attached() {
		return localapi.HandoverResult{}, fsm.Refuse(fsm.InvalidArgument, "only tabs opened in an attached browser are handed over; an owned browser's tabs go with it")
	}
	if req.Page != "" {
		p, err := r.page(req.Page)
		if err != nil {
			return localapi.HandoverResult{}, err
		}
		if p.browser != b {
			return localapi.HandoverResult{}, fsm.Refuse(fsm.NotFound, "no such page in this browser")
		}
	}
	out := localapi.HandoverResult{Browser: b.id, Pages: []string{}}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pages {
		if !p.opened || (req.Page != "" && p.id != req.Page) {
			continue
		}
		p.handedOver = true
		out.Pages = append(out.Pages, p.id)
	}
	if req.Page != "" && len(out.Pages) == 0 {
		return localapi.HandoverResult{}, fsm.Refuse(fsm.WrongTargetRefused, "this tab was not opened by webcodex; it is the person's already")
	}
	sort.Strings(out.Pages)
	return out, nil
}

// Activate brings a tab to the front of its window. A person's tab is never
// activated: that would move their attention, not the agent's.
func (r *Runner) Activate(ctx context.Context, req localapi.PageRequest) (_ localapi.PageInfo, err error) {
	defer func() { r.auditPageOp(ctx, req.Page, "activate", "", err) }()
	ctx, settle := r.call(ctx, "", "activating the tab", r.callBound())
	defer func() { err = settle(err) }()
	p, err := r.page(req.Page)
	if err != nil {
		return localapi.PageInfo{}, err
	}
	if p.personal() {
		return localapi.PageInfo{}, fsm.Refuse(fsm.WrongTargetRefused, "this tab was not opened by webcodex; it is never brought to the front by it")
	}
	if _, err := cdproto.Call(ctx, p.browser.c().Browser(), target.ActivateTarget, target.ActivateTargetParams{TargetID: p.target}); err != nil {
		return localapi.PageInfo{}, fmt.Errorf("runner: activate tab: %w", err)
	}
	pi := p.info(ctx)
	if err := p.judge(pi.URL); err != nil {
		return localapi.PageInfo{}, err // off the allowlist: not described
	}
	return pi, nil
}

// releaseAgentTabs runs at detach, before the sessions go: it closes the
// tabs webcodex opened and did not hand over, and opens the notice that
// marks the handed-over ones. Tabs of the person's are not looked at.
func (b *Browser) releaseAgentTabs(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, tabCloseBound)
	defer cancel()
	b.pageInfos(ctx) // the titles the notice names, fresh
	var closing []target.ID
	var kept []string
	b.mu.Lock()
	for _, p := range b.pages {
		switch {
		case !p.opened:
		case p.handedOver:
			kept = append(kept, orBlank(p.lastTitle, p.lastURL))
		default:
			closing = append(closing, p.target)
		}
	}
	b.mu.Unlock()
	c := b.c()
	if c == nil {
		return
	}
	closing = append(closing, b.popupsOf(ctx, c, closing)...)
	for _, id := range closing {
		if _, err := cdproto.Call(ctx, c.Browser(), target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			b.r.logf("runner: browser %s: closing a tab webcodex opened: %s", b.id, refusalCode(err))
		}
	}
	if len(kept) == 0 {
		return
	}
	sort.Strings(kept)
	if _, err := cdproto.Call(ctx, c.Browser(), target.CreateTarget, target.CreateTargetParams{URL: handoverNotice(kept)}); err != nil {
		b.r.logf("runner: browser %s: opening the handover notice: %s", b.id, refusalCode(err))
	}
}

// popupsOf lists the tabs opened from the agent's tabs (a link with a
// target, window.open), and from those, in turn: the agent's actions opened
// them, whether or not their origin let webcodex see them.
func (b *Browser) popupsOf(ctx context.Context, c *cdp.Conn, agents []target.ID) []target.ID {
	res, err := cdproto.Call(ctx, c.Browser(), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		b.r.logf("runner: browser %s: listing tabs at detach: %s", b.id, refusalCode(err))
		return nil
	}
	agent := map[target.ID]bool{}
	for _, id := range agents {
		agent[id] = true
	}
	var out []target.ID
	for grew := true; grew; {
		grew = false
		for _, ti := range res.TargetInfos {
			if ti == nil || ti.Type != "page" || agent[ti.TargetID] || !agent[ti.OpenerID] {
				continue
			}
			agent[ti.TargetID], grew = true, true
			out = append(out, ti.TargetID)
		}
	}
	return out
}

func orBlank(title, u string) string {
	if title != "" {
		return title
	}
	if u != "" {
		return u
	}
	return "(blank tab)"
}

// handoverNotice is the data: URL of the notice tab: a static page (no
// script) naming the tabs handed over. Its title carries the mark.
func handoverNotice(titles []string) string {
	var sb strings.Builder
	title := fmt.Sprintf("webcodex handed over %d tab", len(titles))
	if len(titles) != 1 {
		title += "s"
	}
	sb.WriteString(`<!doctype html><meta charset="utf-8"><title>` + html.EscapeString(title) + `</title><h1>` + html.EscapeString(title) + `</h1><p>The agent's session ended; these tabs it opened are yours now:</p><ul>`)
	for _, t := range titles {
		sb.WriteString("<li>" + html.EscapeString(noticeLine(t)) + "</li>")
	}
	sb.WriteString("</ul>")
	return "data:text/html;charset=utf-8," + url.PathEscape(sb.String())
}

// noticeLine caps one title in the notice.
func noticeLine(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}

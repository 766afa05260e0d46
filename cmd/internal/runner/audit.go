package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// auditRecord is one record of the append-only audit trail, chained to the
// one before it (auditchain): never typed values, page text, cookies,
// tokens or ports of a debugging endpoint.
type auditRecord struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Browser string    `json:"browser"`
	Page    string    `json:"page,omitempty"`
	Tool    string    `json:"tool"`
	Action  string    `json:"action,omitempty"` // the Runner operation, when the tool names several
	Origin  string    `json:"origin,omitempty"`
	Verdict string    `json:"verdict"` // allowed or a refusal code
	Outcome string    `json:"outcome"` // ok, failed, refused, outcome_unknown
	// Upload only: the full path and size stay in the audit; the tool
	// result carries the file name only.
	File string `json:"file,omitempty"`
	Size int64  `json:"size,omitempty"`
	// Approvals only: how the answer came, the approving terminal and the
	// processes driving it (approval.go).
	Approval *approvalEvidence `json:"approval,omitempty"`
	// The adapter's observations and press of the browser's own prompt
	// (consentui.go).
	ConsentUI *consentUIEvidence `json:"consent_ui,omitempty"`
}

// Caller names who asks for an effect, for the audit trail and session
// ownership: the MCP session and the tool it called. An embedded server
// puts it on the context; a `webcodex mcp --runner` server declares it on
// every request (localapi.CallerHeader). A request without one (the CLI)
// is recorded under its peer process.
type Caller = localapi.Caller

// WithCaller returns ctx carrying c for the audit records of the effects
// run under it.
func WithCaller(ctx context.Context, c Caller) context.Context { return localapi.WithCaller(ctx, c) }

func callerFrom(ctx context.Context) Caller {
	if c, ok := localapi.CallerFrom(ctx); ok {
		return c
	}
	if p, ok := localapi.PeerFrom(ctx); ok {
		return Caller{Session: fmt.Sprintf("local_api:pid:%d", p.PID)}
	}
	return Caller{}
}

// newRecord fills time, session and tool; action is the Runner operation.
func newRecord(ctx context.Context, action string) auditRecord {
	c := callerFrom(ctx)
	rec := auditRecord{Time: time.Now().UTC(), Session: c.Session, Tool: c.Tool, Action: action, Verdict: "allowed", Outcome: "ok"}
	if rec.Tool == "" {
		rec.Tool, rec.Action = action, ""
	}
	return rec
}

// settle records the verdict and outcome of err.
func (rec *auditRecord) settle(err error) {
	if err == nil {
		return
	}
	rec.Outcome = "failed"
	if ref, ok := fsm.AsRefusal(err); ok {
		rec.Outcome = "refused"
		if ref.Code == fsm.OutcomeUnknown {
			rec.Outcome = string(fsm.OutcomeUnknown)
		} else {
			rec.Verdict = string(ref.Code)
		}
	}
}

// audit appends one record for an effect on p; the origin is read live.
func (r *Runner) audit(ctx context.Context, p *Page, tool string, err error) {
	rec := newRecord(ctx, tool)
	rec.Browser, rec.Page, rec.Origin = p.browser.id, p.id, r.pageOrigin(ctx, p)
	rec.settle(err)
	r.appendAudit(rec)
}

// pageOrigin reads the origin of p's live URL for the audit: "" when it
// cannot be read, and "" for a tab of the person's own browser that is off
// the allowlist (the agent's attempt is recorded, not where the person is).
func (r *Runner) pageOrigin(ctx context.Context, p *Page) string {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	id, err := p.surf.Identity(ictx)
	if err != nil || (p.personal() && !p.browser.gate.Allowed(id.URL)) {
		return ""
	}
	return originOf(id.URL)
}

// auditOp records an operation of the table as its declaration says: on
// the origin it acted on (read before it acted), one record per file for
// an input that names files (with the file's full path and size; the
// result names the file only). A call refused before its page was found is
// recorded too, under the page id it named.
func (r *Runner) auditOp(ctx context.Context, m *op.Meta, in op.Input, pageID string, p *Page, acted string, err error) {
	if m.Audit == op.NotAudited {
		return
	}
	action := m.Name
	if a, ok := in.(interface{ AuditAction() string }); ok {
		action = a.AuditAction()
	}
	var to string // where a navigation goes: the origin it is recorded on
	if u, ok := in.(interface{ AuditURL() string }); ok {
		to = u.AuditURL()
	}
	if p == nil || m.Audit == op.AuditLanded {
		r.auditPageOp(ctx, pageID, action, to, err) // the origin read now, when none is named
		return
	}
	if to != "" {
		acted = originOf(to)
	}
	files := []string{""}
	if f, ok := in.(op.Files); ok && len(f.AuditFiles()) > 0 {
		files = f.AuditFiles()
	}
	for _, name := range files {
		rec := newRecord(ctx, action)
		rec.Browser, rec.Page, rec.Origin = p.browser.id, p.id, acted
		if name != "" {
			rec.File, rec.Size = r.uploadFile(name)
		}
		rec.settle(err)
		r.appendAudit(rec)
	}
}

// uploadFile resolves an upload name inside the upload directory for the
// audit: the real path and size, or the name alone when it does not resolve.
func (r *Runner) uploadFile(name string) (string, int64) {
	if r.opts.UploadDir == "" {
		return filepath.Base(name), 0
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.opts.UploadDir, name)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	st, err := os.Stat(p)
	if err != nil {
		return p, 0
	}
	return p, st.Size()
}

// auditPageOp records an effect addressed by page id before (or without)
// the page being found: unknown ids are recorded too, with their verdict.
func (r *Runner) auditPageOp(ctx context.Context, pageID, action, rawURL string, err error) {
	rec := newRecord(ctx, action)
	rec.Page = pageID
	r.mu.Lock()
	p := r.pages[pageID]
	r.mu.Unlock()
	if p != nil {
		rec.Browser = p.browser.id
	}
	switch {
	case rawURL != "":
		rec.Origin = originOf(rawURL)
	case p != nil:
		rec.Origin = r.pageOrigin(ctx, p)
	}
	rec.settle(err)
	r.appendAudit(rec)
}

// auditBrowser records an effect on a whole browser (launch, attach,
// close, reconnect, approvals).
// It returns the trail's head hash after it.
func (r *Runner) auditBrowser(ctx context.Context, browserID, action string, err error) string {
	rec := newRecord(ctx, action)
	rec.Browser = browserID
	rec.settle(err)
	return r.appendAudit(rec)
}

// AuditRefused records a tool call refused before it reached the Runner (a
// scope the server does not grant), so the trail shows attempts too.
func (r *Runner) AuditRefused(ctx context.Context, tool string, err error) {
	r.auditBrowser(ctx, "", tool, err)
}

func originOf(u string) string {
	g, _ := origin.New(origin.Owned, nil)
	o, err := g.Origin(u)
	if err != nil {
		return ""
	}
	return o
}

// appendAudit chains rec onto the audit trail (auditchain), secrets
// redacted, and returns the new head hash ("" when the trail could not be
// written, which is logged).
func (r *Runner) appendAudit(rec auditRecord) string {
	line, err := json.Marshal(rec)
	if err != nil {
		return ""
	}
	line = []byte(r.opts.Secrets.Redact(string(line))) // JSON forms included
	r.auditMu.Lock()
	defer r.auditMu.Unlock()
	head, err := auditchain.Open(r.opts.StateDir).Append(json.RawMessage(line))
	if err != nil {
		r.logf("runner: audit trail unavailable: %v", err)
		return ""
	}
	return head
}

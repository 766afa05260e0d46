package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/fsm"
)

// auditRecord is one line of the append-only audit trail: never typed
// values, page text, cookies, tokens or ports.
type auditRecord struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Browser string    `json:"browser"`
	Page    string    `json:"page,omitempty"`
	Tool    string    `json:"tool"`
	Origin  string    `json:"origin,omitempty"`
	Verdict string    `json:"verdict"` // allowed or a refusal code
	Outcome string    `json:"outcome"` // ok, failed, refused, outcome_unknown
	// Upload only: the full path and size stay in the audit; the tool
	// result carries the file name only.
	File string `json:"file,omitempty"`
	Size int64  `json:"size,omitempty"`
}

// audit appends one record for an effect on p.
func (r *Runner) audit(ctx context.Context, p *Page, tool string, err error) {
	rec := auditRecord{Time: time.Now().UTC(), Browser: p.browser.id, Page: p.id, Tool: tool, Verdict: "allowed", Outcome: "ok"}
	if id, ierr := p.surf.Identity(ctx); ierr == nil {
		rec.Origin = originOf(id.URL)
	}
	if err != nil {
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
	r.appendAudit(rec)
}

func originOf(u string) string {
	g, _ := origin.New(origin.Owned, nil)
	o, err := g.Origin(u)
	if err != nil {
		return ""
	}
	return o
}

func (r *Runner) appendAudit(rec auditRecord) {
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.auditMu.Lock()
	defer r.auditMu.Unlock()
	f, err := os.OpenFile(filepath.Join(r.opts.StateDir, "audit.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.logf("runner: audit trail unavailable")
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
	"github.com/webcodex/webcodex/reconnect"
)

// What an approval proves, and how the Runner raises the bar, is written
// out in spec/threat-model.md (spec/threat.go). In short: a terminal is not
// a person, so the Runner (1) binds the request to exactly what the person
// is shown and to who asked, read from the kernel, (2) shows a one-time code
// through the desktop when there is one, (3) refuses a terminal driven by
// the program that asked, and (4) records the terminal and the processes
// driving it in the audit trail.

// chainDepth bounds the ancestors recorded for each process in the audit.
const chainDepth = 8

// descentDepth bounds the parents walked when deciding whether a terminal
// is driven by a descendant of the asking client.
const descentDepth = 64

// desktopTimeout bounds talking to the desktop's notification service.
const desktopTimeout = 5 * time.Second

// asker is who asks for an attach, as the Runner observed it: never a
// field of the request.
type asker struct {
	session   string            // the grant's session
	who       string            // for the person
	processes []consent.Process // the asking client and the process that started it
}

// askerOf derives who asks from the call itself. The embedded MCP server
// names its own session (WithCaller, set by the server, not by the agent)
// and its client is the process that started it; a local API caller is
// bound to its terminal session (SO_PEERCRED, then /proc), so
// `webcodex attach` run twice in one shell reuses a grant and another
// terminal or program needs its own approval.
func (r *Runner) askerOf(ctx context.Context) (asker, error) {
	_, remote := localapi.PeerFrom(ctx)
	if c, ok := localapi.CallerFrom(ctx); ok && !remote { // a daemon's client is judged by its process below
		a := asker{session: "mcp:" + c.Session}
		self, _ := platform.ProcessRef(os.Getpid())
		parent, _ := platform.Parent(os.Getpid())
		a.processes = processes(self, parent)
		a.who = fmt.Sprintf("the MCP server session %s, whose client is %s", c.Session, describe(parent))
		return a, nil
	}
	peer, ok := localapi.PeerFrom(ctx)
	if !ok {
		self, _ := platform.ProcessRef(os.Getpid())
		return asker{session: "in_process", who: "this Runner's own process", processes: processes(self)}, nil
	}
	client, err := platform.ProcessRef(peer.PID)
	if err != nil {
		return asker{}, fmt.Errorf("runner: identify the attach's caller: %w", err)
	}
	sid, leader, err := platform.SessionOf(peer.PID)
	if err != nil {
		return asker{}, fmt.Errorf("runner: identify the attach's caller: %w", err)
	}
	a := asker{session: fmt.Sprintf("local:sid:%d:%d", sid, leader.Start)}
	parent, _ := platform.Parent(peer.PID)
	if sharedAncestor(parent) {
		parent = platform.ProcRef{} // init or a session manager: every process descends from it
	}
	a.processes = processes(client, parent)
	a.who = fmt.Sprintf("%s, started by %s, in the session of %s", describe(client), describe(parent), describe(leader))
	return a, nil
}

// sharedAncestor reports whether p is init or the Runner's own parent (a
// service manager such as systemd --user, once the Runner is detached):
// every terminal of the session descends from those, so they cannot name
// the program that asked.
func sharedAncestor(p platform.ProcRef) bool {
	if p.PID <= 1 {
		return true
	}
	parent, err := platform.Parent(os.Getpid())
	return err == nil && parent.Same(p)
}

func processes(ps ...platform.ProcRef) []consent.Process {
	var out []consent.Process
	for _, p := range ps {
		if p.PID > 0 {
			out = append(out, consent.Process{PID: p.PID, Start: p.Start, Comm: p.Comm})
		}
	}
	return out
}

func describe(p platform.ProcRef) string {
	if p.PID <= 0 {
		return "an unknown process"
	}
	return fmt.Sprintf("%q (pid %d)", p.Comm, p.PID)
}

// scopeFor is everything the person approves for this attach.
func scopeFor(e endpoint, req localapi.AttachRequest, session string) (consent.Scope, error) {
	scopes, err := consent.CanonicalScopes(req.Scopes)
	if err != nil {
		return consent.Scope{}, err
	}
	return consent.Scope{
		Session: session, BrowserID: e.key(), Fingerprint: e.fingerprint(), Endpoint: e.wsURL(),
		Allow: origin.Canonical(req.Allow), Evaluate: req.AllowEvaluate, Scopes: scopes,
		ReconnectBudget: reconnect.MaxAttempts, PressPrompt: req.PressPrompt,
	}.Canonical(), nil
}

// summary is what the person reads before approving: every field the
// grant is bound to, in words, without ports of the endpoint, paths or URLs
// other than the allowlist the person's own agent gave.
func summary(e endpoint, s consent.Scope, who string) string {
	allow := "nothing (no --allow given: no site will be readable)"
	if len(s.Allow) > 0 {
		allow = strings.Join(s.Allow, ", ")
	}
	eval := "no"
	if s.Evaluate {
		eval = "yes"
	}
	press := "no: you answer it yourself"
	if s.PressPrompt {
		press = "yes: webcodex presses Allow for you, once per connection, at least a second after it appears, " +
			"only after proving over the accessibility bus that the prompt belongs to this browser process"
	}
	return fmt.Sprintf("Attach webcodex to your running %s, process %d.\n"+
		"Asked by: %s.\n"+
		"It may read and act on tabs whose sites are allowed: %s.\n"+
		"Raw JavaScript evaluation: %s. Scopes: %s. Reconnects: at most %d attempts per lost connection.\n"+
		"Press Chrome's own \"Allow remote debugging?\" prompt for you: %s.\n"+
		"The grant lives in this Runner's memory only: 30 minutes idle, 8 hours at most; a browser restart, another caller, "+
		"or an attach asking for more sites, evaluation or scopes needs a new approval.",
		e.product, e.fp.PID, who, allow, eval, strings.Join(s.Scopes, ", "), s.ReconnectBudget, press)
}

// grantFor returns the live grant covering this attach, or a
// consent_required refusal carrying the approval request id a person must
// approve.
func (r *Runner) grantFor(ctx context.Context, e endpoint, req localapi.AttachRequest) (*consent.Grant, error) {
	a, err := r.askerOf(ctx)
	if err != nil {
		return nil, err
	}
	scope, err := scopeFor(e, req, a.session)
	if err != nil {
		return nil, err
	}
	if g, err := r.broker.Grant(scope.BrowserID, scope); err == nil {
		return g, nil
	} else if fsm.IsCode(err, fsm.ConsentRevoked) {
		r.broker.RevokeBrowser(scope.BrowserID) // forget it: the next attach asks again
	}
	id := req.Request
	if id == "" {
		var state consent.RequestState
		var ok bool
		if id, state, ok = r.broker.Match(scope); ok && state == consent.RequestPending {
			return nil, consentRequired(id)
		}
	}
	if id != "" {
		g, err := r.broker.Use(id, scope)
		if err == nil {
			return g, nil
		}
		if !fsm.IsCode(err, fsm.ConsentRequired) {
			return nil, err
		}
		return nil, consentRequired(id)
	}
	rq, err := r.broker.NewRequest(scope, summary(e, scope, a.who), a.processes...)
	if err != nil {
		return nil, err
	}
	r.logf("runner: approval request created for an attach (expires in %s)", consent.RequestTTL)
	return nil, consentRequired(rq.ID)
}

func consentRequired(id string) error {
	ref := fsm.Refusef(fsm.ConsentRequired, "approval request %s: a person must run `webcodex approve %s` in a terminal, then attach again", id, id)
	ref.ApprovalID = id
	return ref
}

// approvalEvidence is what the audit records about an answer: how it came,
// whether a second factor was available, the approving terminal's name
// (never its contents) and the processes around it.
type approvalEvidence struct {
	Request      string             `json:"request"`
	Provider     string             `json:"provider"`      // terminal or mcp_host
	SecondFactor string             `json:"second_factor"` // login_password, desktop_notification, none (neither), mcp_host
	Requester    []consent.Process  `json:"requester,omitempty"`
	Terminal     *platform.Terminal `json:"terminal,omitempty"`
	// Approver is the answering process and its ancestors; Drivers, for
	// each process driving the terminal (pty master holders and the
	// session leader's parent), it and its ancestors; at most chainDepth each.
	Approver []platform.ProcRef   `json:"approver_chain,omitempty"`
	Drivers  [][]platform.ProcRef `json:"driver_chains,omitempty"`
}

func (r *Runner) auditApproval(ctx context.Context, action string, ev *approvalEvidence, err error) {
	rec := newRecord(ctx, action)
	rec.Approval = ev
	rec.settle(err)
	r.appendAudit(rec)
}

func notAtTerminal() error {
	return fsm.Refuse(fsm.ApprovalInvalid, "approval needs a person at an interactive terminal: run `webcodex approve ID` there, with its input and output on that terminal")
}

// checkTerminal is every check on a terminal answer, for approve and deny
// alike: the caller is a process of this user (the local API's guard)
// whose standard input and output are its controlling terminal, and that
// terminal is not driven by the client that asked for the attach or by a
// process it started. It fills ev as far as it got.
func (r *Runner) checkTerminal(ctx context.Context, info consent.RequestInfo, ev *approvalEvidence) error {
	ev.Provider, ev.Requester = "terminal", info.Requester
	peer, ok := localapi.PeerFrom(ctx)
	if !ok {
		return notAtTerminal()
	}
	term, err := platform.TerminalOf(peer.PID)
	if err != nil {
		if errors.Is(err, platform.ErrNoTerminal) || errors.Is(err, platform.ErrNoProcess) {
			return notAtTerminal()
		}
		return fmt.Errorf("runner: inspect the approving terminal: %w", err)
	}
	ev.Terminal = &term
	ev.Approver = platform.Ancestry(peer.PID, chainDepth)
	drivers := term.Drivers
	if term.LeaderParent.PID > 0 && !containsProc(drivers, term.LeaderParent) {
		drivers = append(drivers, term.LeaderParent)
	}
	for _, d := range drivers {
		ev.Drivers = append(ev.Drivers, platform.Ancestry(d.PID, chainDepth))
	}
	for _, d := range drivers {
		for _, q := range info.Requester {
			asked := platform.ProcRef{PID: q.PID, Start: q.Start, Comm: q.Comm}
			if platform.DescendsFrom(d.PID, asked, descentDepth) {
				return fsm.Refusef(fsm.ApprovalInvalid, "this terminal (%s) is driven by %s, which is %s or was started by it, and %s asked for this attach: "+
					"a program can answer a terminal it drives (script, a pty library), so that is no proof of a person. "+
					"Run `webcodex approve %s` in a terminal window of your own that the asking program did not start",
					term.Device, describe(d), describe(asked), describe(asked), info.ID)
			}
		}
	}
	return nil
}

func containsProc(ps []platform.ProcRef, p platform.ProcRef) bool {
	for _, q := range ps {
		if q.Same(p) {
			return true
		}
	}
	return false
}

// openDesktop opens the desktop's notification service for as long as
// ctx lives, or returns nil when this session has none.
func (r *Runner) openDesktop(ctx context.Context) *platform.Desktop {
	d, err := platform.OpenDesktop(ctx)
	if err != nil {
		if !errors.Is(err, platform.ErrNoDesktop) {
			r.logf("runner: desktop notifications: %v", err)
		}
		return nil
	}
	return d
}

// ApprovalInfo returns a pending request's summary. With Challenge (what
// `webcodex approve` sends first) it runs the terminal checks of approve
// and chooses the factor the answer needs: the person's login password
// where the login has one (the request is then bound to it), else, when a
// graphical session exists, a one-time code it shows through the desktop's
// notifications, else the terminal's answer alone.
func (r *Runner) ApprovalInfo(ctx context.Context, req localapi.ApprovalRequest) (_ localapi.ApprovalSummary, err error) {
	info, err := r.broker.Info(req.ID)
	if err != nil || !req.Challenge {
		if err != nil {
			return localapi.ApprovalSummary{}, err
		}
		return localapi.ApprovalSummary{ID: req.ID, Summary: info.Summary, Expires: info.Expires}, nil
	}
	ev := &approvalEvidence{Request: req.ID}
	defer func() { r.auditApproval(ctx, "approval_challenge", ev, err) }()
	if err := r.checkTerminal(ctx, info, ev); err != nil {
		return localapi.ApprovalSummary{}, err
	}
	sum := localapi.ApprovalSummary{ID: req.ID, Summary: info.Summary, Expires: info.Expires}
	usePassword, lp, err := r.passwordApproves(ctx, info)
	if err != nil {
		return localapi.ApprovalSummary{}, err
	}
	if usePassword {
		if err := r.broker.RequirePassword(req.ID); err != nil {
			return localapi.ApprovalSummary{}, err
		}
		ev.SecondFactor = localapi.SecondFactorPassword
		sum.SecondFactor, sum.Account = localapi.SecondFactorPassword, lp.Account
		return sum, nil
	}
	sum.NoPassword = lp.Reason
	ev.SecondFactor, sum.SecondFactor = localapi.SecondFactorNone, localapi.SecondFactorNone
	dctx, cancel := context.WithTimeout(ctx, desktopTimeout)
	defer cancel()
	d := r.openDesktop(dctx)
	if d == nil {
		return sum, nil
	}
	defer d.Close()
	code, err := r.broker.IssueCode(req.ID)
	if err != nil {
		return localapi.ApprovalSummary{}, err
	}
	ev.SecondFactor, sum.SecondFactor = localapi.SecondFactorDesktop, localapi.SecondFactorDesktop
	body := fmt.Sprintf("Code %s for approval request %s.\nType it only in the terminal where you ran `webcodex approve`. If you did not, do not type it anywhere.", code, req.ID)
	if err := d.Notify(dctx, "webcodex: approve an attach to your browser", body); err != nil {
		return localapi.ApprovalSummary{}, fmt.Errorf("runner: show the approval code: %w", err)
	}
	return sum, nil
}

// passwordApproves reports whether a terminal answer to the request needs
// the person's login password: when the request is already bound to it,
// or when the login has a usable password and no one-time code was shown
// for the request. The system is asked every time (a password set or
// locked since counts); a system tool that cannot run fails the answer
// rather than choosing a weaker factor.
func (r *Runner) passwordApproves(ctx context.Context, info consent.RequestInfo) (bool, platform.LoginPassword, error) {
	lp, err := platform.LoginPasswordOf(ctx, r.opts.ApprovalAccount)
	if err != nil {
		return false, lp, fmt.Errorf("runner: ask the system whether the login has a password: %w", err)
	}
	return info.PasswordBound || (lp.State == platform.PasswordUsable && !info.CodeIssued), lp, nil
}

// Approve records a person's approval from a terminal.
func (r *Runner) Approve(ctx context.Context, req localapi.ApprovalRequest) (localapi.ApprovalAnswer, error) {
	if err := r.answerFromTerminal(ctx, "approve", req, true); err != nil {
		return localapi.ApprovalAnswer{}, err
	}
	r.logf("runner: an approval request was approved")
	return localapi.ApprovalAnswer{Approved: true}, nil
}

// Deny records a person's refusal from a terminal, with the same checks as
// Approve: a program that cannot approve cannot deny either.
func (r *Runner) Deny(ctx context.Context, req localapi.ApprovalRequest) (localapi.ApprovalAnswer, error) {
	if err := r.answerFromTerminal(ctx, "deny", req, false); err != nil {
		return localapi.ApprovalAnswer{}, err
	}
	return localapi.ApprovalAnswer{Denied: true}, nil
}

// answerFromTerminal checks the terminal, then requires the factor the
// challenge would choose — the login password (checked by unix_chkpwd, as
// pam_unix checks it for sudo), or the one-time code when one was shown, or
// when a graphical session exists now and none was shown yet (the answer
// skipped the challenge) — and records the answer. The password is never
// logged, audited or kept.
func (r *Runner) answerFromTerminal(ctx context.Context, action string, req localapi.ApprovalRequest, approve bool) (err error) {
	ev := &approvalEvidence{Request: req.ID}
	defer func() { r.auditApproval(ctx, action, ev, err) }()
	info, err := r.broker.Info(req.ID)
	if err != nil {
		return err
	}
	if err := r.checkTerminal(ctx, info, ev); err != nil {
		return err
	}
	usePassword, lp, err := r.passwordApproves(ctx, info)
	if err != nil {
		return err
	}
	if usePassword {
		ev.SecondFactor = localapi.SecondFactorPassword
		if req.Password == "" { // not counted: no password was tried
			return fsm.Refusef(fsm.ApprovalInvalid, "this request needs the login password of %s: run `webcodex approve %s` at a terminal and type it there", lp.Account, req.ID)
		}
		password := []byte(req.Password)
		matched, err := platform.CheckLoginPassword(ctx, lp.Account, password)
		clear(password)
		if err != nil {
			return fmt.Errorf("runner: check the login password: %w", err)
		}
		return r.broker.AnswerWithPassword(req.ID, approve, req.Code, matched)
	}
	ev.SecondFactor = localapi.SecondFactorDesktop
	if !info.CodeIssued {
		dctx, cancel := context.WithTimeout(ctx, desktopTimeout)
		d := r.openDesktop(dctx)
		cancel()
		if d != nil {
			d.Close()
			return fsm.Refusef(fsm.ApprovalInvalid, "this session has a desktop, so the answer needs the one-time code it shows: run `webcodex approve %s`", req.ID)
		}
		ev.SecondFactor = localapi.SecondFactorNone // recorded: no second factor was available
	}
	return r.broker.Answer(req.ID, approve, req.Code)
}

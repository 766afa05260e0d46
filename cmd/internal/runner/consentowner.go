package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
)

// consentAttempt owns one attempt's consent machine (consent.AttemptSpec):
// it fires, stops when the machine refuses, and runs only the effects the
// machine returns, through its table.
type consentAttempt struct {
	r     *Runner
	b     *Browser
	owner *fsm.Owner[consent.State, consent.Trigger, consent.Facts]

	// Set and read by the attempt's own goroutine (its effects and the
	// prompt observations of its dial).
	sock cdp.Socket // the dialed socket until it is handed over or closed
}

// consentNext is the trigger the owner fires where the machine rests
// without an effect to answer for it.
var consentNext = map[consent.State]consent.Trigger{
	consent.ApprovalRequired:   consent.Approve,
	consent.TimeoutOrAmbiguity: consent.Refuse,
	consent.ConsentDismissed:   consent.Revoke,
	consent.EndpointReproved:   consent.Invalidate,
}

// connectUnderConsent runs one attempt of the consent machine for b under
// the grant the person's approval minted: prove the endpoint, dial one
// socket (which Chrome may hold for its prompt), re-prove the owner on the
// live socket, invalidate older capabilities and hand the socket over. The
// attempt is cancelled when ctx, its session's request, ends.
func (r *Runner) connectUnderConsent(ctx context.Context, b *Browser) error {
	a := &consentAttempt{r: r, b: b}
	a.owner = fsm.NewOwner(consent.AttemptSpec, fsm.Effects[consent.State, consent.Trigger]{
		consent.EffectMintGrant:     a.grantMinted,
		consent.EffectProveEndpoint: a.proveEndpoint,
		consent.EffectDial:          a.dial,
		consent.EffectPressConsent:  fsm.Takes(a.pressOnce),
		consent.EffectRevokeGrant:   a.revokeGrant,
		consent.EffectClosePending:  a.closePending,
		consent.EffectReprove:       a.reprove,
		consent.EffectInvalidate:    a.invalidate,
		consent.EffectHandOver:      a.handOver,
	})
	a.owner.SetFacts(func(f *consent.Facts) { f.Unexpired = b.grant != nil && b.grant.State() == consent.GrantLive })
	defer func() { // a socket the attempt stopped before handing over
		if a.sock != nil {
			a.sock.Close()
		}
	}()
	last, err := a.owner.Run(ctx, consentNext, func(error) consent.Trigger { return consent.SessionEnded })
	if err != nil {
		return err
	}
	return a.outcome(ctx, last.From)
}

// outcome reads the attempt's result from where the machine came to rest
// and the state it came from.
func (a *consentAttempt) outcome(ctx context.Context, from consent.State) error {
	switch a.owner.State() {
	case consent.ReadyForRebind:
		return nil
	case consent.GrantRevoked:
		return fsm.Refuse(fsm.ConsentRevoked, "the person cancelled Chrome's \"Allow remote debugging?\" prompt; the grant is revoked and nothing is retried")
	case consent.Cancelled:
		return fsm.Refuse(fsm.AttachmentLost, "the session this attach was for ended; nothing was attached").WithCause(ctx.Err())
	case consent.Refused:
		switch from {
		case consent.ApprovalRequired:
			return fsm.Refuse(fsm.ConsentRequired, "the grant for this browser is no longer live; a new approval is needed")
		case consent.EndpointPreflight:
			return fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint's owner changed before connecting")
		case consent.SocketReady:
			return fsm.Refuse(fsm.EndpointOwnerMismatch, "the endpoint's owner changed while connecting")
		}
		why := a.owner.Facts()
		if why.Failure != nil {
			return why.Failure
		}
		return fsm.Refuse(fsm.ConsentRequired, "Chrome's \"Allow remote debugging?\" prompt was not answered in time; answer it, then attach again"+why.Unpressed)
	}
	return fmt.Errorf("runner: the consent attempt stopped in %s", a.owner.State())
}

// The effects below run only through the owner's table.

// grantMinted is mint_grant: the broker minted b.grant when the person
// approved (grantFor), so the attempt connects under it.
func (a *consentAttempt) grantMinted(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	return consent.Connect, nil
}

func (a *consentAttempt) proveEndpoint(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	ok := a.b.ep.reprove()
	a.owner.SetFacts(func(f *consent.Facts) { f.OwnerMatches = ok })
	return consent.OwnerProven, nil
}

// dial is dial_websocket: one browser-level socket for this generation,
// within the consent deadline, its prompt observed (and pressed at most
// once) through the machine. It answers with what the handshake did.
func (a *consentAttempt) dial(ctx context.Context, _ fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	r := a.r
	deadline := r.opts.ConsentDeadline
	if deadline == 0 {
		deadline = DefaultConsentDeadline
	}
	dctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	sock, unpressed, err := r.dialUnderPrompt(dctx, cancel, a.b, a)
	a.owner.SetFacts(func(f *consent.Facts) { f.Unpressed = unpressed })
	if err == nil {
		a.sock = sock
		return consent.HandshakeComplete, nil
	}
	if ref, ok := fsm.AsRefusal(err); ok && ref.Code == fsm.WrongTargetRefused {
		a.owner.SetFacts(func(f *consent.Facts) { f.Failure = err })
		if a.owner.State() == consent.TimeoutOrAmbiguity {
			return "", nil
		}
		return consent.DeadlineExpired, nil // the prompt changed under the press
	}
	switch {
	case isHandshakeStatus(err, 403):
		return consent.Dismissed, nil
	case ctx.Err() != nil:
		return consent.SessionEnded, nil
	case dctx.Err() == nil:
		a.owner.SetFacts(func(f *consent.Facts) { f.Failure = fmt.Errorf("runner: connect to the browser: %w", err) })
	}
	return consent.DeadlineExpired, nil
}

// pressOnce is press_consent: the press Observed was handed, run as the
// machine's effect.
func (a *consentAttempt) pressOnce(ctx context.Context, _ fsm.Step[consent.State, consent.Trigger], press func(context.Context) error) (consent.Trigger, error) {
	return "", press(ctx)
}

func (a *consentAttempt) revokeGrant(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	a.r.broker.RevokeBrowser(a.b.ep.key())
	return "", nil
}

func (a *consentAttempt) closePending(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	if a.sock != nil {
		a.sock.Close()
		a.sock = nil
	}
	return "", nil
}

// reprove is reprove_endpoint: the live socket's listener must still be the
// approved process (a PID or port reused meanwhile is refused).
func (a *consentAttempt) reprove(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	ok := a.b.ep.reprove()
	a.owner.SetFacts(func(f *consent.Facts) { f.OwnerMatches = ok })
	return consent.Reprove, nil
}

func (a *consentAttempt) invalidate(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	a.b.gens.Advance()
	return consent.Rebind, nil
}

func (a *consentAttempt) handOver(context.Context, fsm.Step[consent.State, consent.Trigger]) (consent.Trigger, error) {
	b := a.b
	b.mu.Lock()
	b.conn = cdp.NewConn(a.sock, cdp.ConnOptions{})
	b.mu.Unlock()
	a.sock = nil
	a.r.countHandshake()
	return "", nil
}

// Watching and Observed make the attempt the prompt's machine for
// dialUnderPrompt.

func (a *consentAttempt) Watching() bool {
	return a.owner.State() == consent.ConnectingPendingConsent
}

func (a *consentAttempt) Observed(ctx context.Context, exact bool, press func(context.Context) error) error {
	a.owner.SetFacts(func(f *consent.Facts) { f.ExactCandidate = exact })
	if _, err := a.owner.Fire(ctx, consent.PromptObserved); err != nil {
		return err
	}
	if a.owner.State() != consent.ConsentPromptObserved {
		return fsm.Refuse(fsm.WrongTargetRefused, "the browser's consent prompt could not be identified exactly")
	}
	_, err := fsm.FireWith(ctx, a.owner, consent.Press, press)
	return err
}

// promptMachine is the machine an attempt's prompt goes through: the
// consent attempt on attach, the reconnect machine (reconnect.Prompt) on
// reconnect. dialUnderPrompt observes only while it watches, and presses
// only through Observed, which runs the press as the machine's effect.
type promptMachine interface {
	Watching() bool
	Observed(ctx context.Context, exact bool, press func(context.Context) error) error
}

// observeInterval is how often the ConsentUI adapter looks for the
// browser's prompt while the handshake is held.
const observeInterval = 200 * time.Millisecond

type dialResult struct {
	sock cdp.Socket
	err  error
}

// dialUnderPrompt dials the one socket and, while Chrome holds its handshake
// for the "Allow remote debugging?" prompt, lets the ConsentUI adapter (only
// where b's grant allows it) observe the prompt and press its one exact
// action through pm, at most once, and never sooner than
// consent.MinPressDelay (or Options.PressDelay) after first seeing it. An
// ambiguous prompt ends the attempt with browser_wrong_target_refused. A
// press the browser drops counts: the attempt then waits for the person or
// its deadline. unpressed says, for a deadline refusal, why webcodex pressed
// nothing ("" when it was not asked to).
func (r *Runner) dialUnderPrompt(ctx context.Context, cancel context.CancelFunc, b *Browser, pm promptMachine) (_ cdp.Socket, unpressed string, _ error) {
	results := make(chan dialResult, 1)
	go func() { // owned here: every path below receives its result
		s, err := r.dial(ctx, b.ep)
		results <- dialResult{s, err}
	}()
	abandon := func(reason string) (cdp.Socket, string, error) {
		cancel()
		if res := <-results; res.sock != nil {
			res.sock.Close()
		}
		return nil, "", fsm.Refuse(fsm.WrongTargetRefused, reason)
	}
	ui := r.consentUIFor(b)
	if ui != nil {
		unpressed = " (webcodex did not see the prompt in time to press it)"
	}
	id := consent.Identity{PID: b.ep.fp.PID, StartTime: b.ep.fp.StartTime, Executable: b.ep.fp.Exe}
	tick := time.NewTicker(observeInterval)
	defer tick.Stop()
	var firstSeen time.Time // when this attempt first saw candidates; zero while none
	for {
		select {
		case res := <-results:
			return res.sock, unpressed, res.err
		case <-tick.C:
			if ui == nil || !pm.Watching() {
				continue // nothing to press with, or pressed already: one consent action per attempt
			}
			cands, err := ui.Observe(ctx, id)
			if errors.Is(err, consent.ErrUnavailable) {
				why := unavailableReason(err)
				r.auditConsentUI(ctx, b, &consentUIEvidence{Step: "unavailable", Outcome: why})
				r.logf("runner: browser %s: the person answers the prompt: %s", b.id, why)
				ui, unpressed = nil, " (webcodex could not press it: "+why+")"
				continue
			}
			if err != nil || len(cands) == 0 {
				firstSeen = time.Time{}
				continue
			}
			if firstSeen.IsZero() {
				firstSeen = time.Now()
			}
			if time.Since(firstSeen) < max(r.opts.PressDelay, consent.MinPressDelay) {
				continue // Chrome drops early presses; judge the settled prompt
			}
			c, exact := consent.SelectExact(id, cands)
			r.auditConsentUI(ctx, b, &consentUIEvidence{Step: "observed", Candidates: len(cands), Exact: exact, Evidence: evidenceOf(cands)})
			pressed := false
			err = pm.Observed(ctx, exact, func(ctx context.Context) error {
				pressed = true
				return ui.Press(ctx, c)
			})
			if !exact {
				return abandon("the browser's consent prompt could not be identified exactly (a decoy, several prompts, or a structure or language webcodex does not know); answer it yourself, then attach again")
			}
			if !pressed {
				return abandon("the consent prompt changed before it could be pressed")
			}
			r.auditConsentUI(ctx, b, &consentUIEvidence{Step: "press", Candidates: 1, Exact: true, Evidence: []string{c.Evidence},
				Outcome: pressOutcome(err), ObservedMs: time.Since(firstSeen).Milliseconds()})
			switch {
			case err == nil: // taken: the handshake completes
			case errors.Is(err, consent.ErrPressDropped):
				// Counted as this attempt's press; never a second one.
				unpressed = " (the browser ignored webcodex's one press; the prompt is still up)"
			case errors.Is(err, consent.ErrStaleCandidate):
				// Nothing was pressed: the prompt went, most likely because
				// the person answered it, and the handshake says how.
				t := time.NewTimer(staleGrace)
				select {
				case res := <-results:
					t.Stop()
					return res.sock, "", res.err
				case <-t.C:
				}
				return abandon("the consent prompt changed between observation and press; nothing was pressed")
			default:
				return abandon("pressing the consent prompt failed; nothing is pressed again")
			}
		}
	}
}

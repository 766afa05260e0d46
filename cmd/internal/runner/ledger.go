package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/lease"
)

// Side effects (act, navigate, raw CDP) go through the effect ledger under
// an idempotency key: the caller's (MCP argument idempotencyKey, CLI flag
// --idempotency-key), or one minted for the call when it gives none. A key
// seen before answers with the outcome recorded for it and dispatches
// nothing; an outcome_unknown stays unknown until an observation settles it.
// Keys are the caller's session's own: another session's key never reaches
// this one's outcomes.

// maxIdempotencyKey bounds a caller's key.
const maxIdempotencyKey = 128

// claimEffect finds or records the effect a call names. kind and request
// (without its page handle and key, which a retry after a reconnect may
// change) say what the effect is: a key reused for another request is
// refused.
func (r *Runner) claimEffect(ctx context.Context, key, kind string, request any) (*lease.Entry, bool, error) {
	if len(key) > maxIdempotencyKey {
		return nil, false, fsm.Refusef(fsm.InvalidArgument, "an idempotency key is at most %d bytes", maxIdempotencyKey)
	}
	if key == "" {
		key = newID("e") // minted: recorded, and never matched again
	}
	session, ok := r.sessionOf(ctx)
	if !ok {
		return nil, false, fsm.Refuse(fsm.NotFound, "no such page")
	}
	body, err := json.Marshal(request)
	if err != nil {
		return nil, false, fmt.Errorf("runner: effect digest: %w", err)
	}
	sum := sha256.Sum256(append([]byte(kind+"\x00"), body...))
	return r.ledger.Claim(session+"\x00"+key, hex.EncodeToString(sum[:]))
}

// cancelEffect records a refusal before dispatch: nothing was sent, so a
// repeat of the key may dispatch it.
func (r *Runner) cancelEffect(e *lease.Entry, refused error) {
	if err := e.Cancel(refused); err != nil {
		r.logf("runner: effect ledger: cancel: %s", refusalCode(err))
	}
}

// settleOf says how a dispatched effect's error settles it: an answer that
// never came is an unknown outcome; any other error is the browser's or the
// surface's word that it did not happen.
func settleOf(err error) lease.EffectTrigger {
	switch {
	case err == nil:
		return lease.EffectAck
	case fsm.IsCode(err, fsm.OutcomeUnknown), fsm.IsCode(err, fsm.Timeout),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, cdp.ErrClosed):
		return lease.EffectAckLost
	}
	return lease.EffectFail
}

// replayed is the answer to a repeated key: the recorded result or error.
func replayed(o lease.Outcome, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	if o.Err != nil {
		return nil, o.Err
	}
	if o.Dropped {
		return nil, fsm.Refusef(fsm.LimitExceeded, "the effect under this idempotency key happened once; its answer was over %d KiB and was not kept: read the page", lease.MaxOutcomeBytes>>10)
	}
	return json.RawMessage(o.Result), nil
}

// navResultOf decodes a navigation's recorded outcome.
func navResultOf(o lease.Outcome) (op.NavResult, error) {
	raw, err := replayed(o, nil)
	if err != nil {
		return op.NavResult{}, err
	}
	var nav op.NavResult
	if err := json.Unmarshal(raw, &nav); err != nil {
		return op.NavResult{}, fmt.Errorf("runner: recorded navigation: %w", err)
	}
	return nav, nil
}

// replayNavigation answers a repeated navigation key. A navigation whose
// outcome is unknown is settled by observing the page: when the page the
// caller names shows the URL it asked for, the navigation is taken as done
// (reconciled_done) and the page is reported; otherwise it stays unknown,
// since a page elsewhere does not prove it never went.
func (r *Runner) replayNavigation(ctx context.Context, e *lease.Entry, req op.GotoIn) (op.NavResult, error) {
	o, err := e.Replay(ctx)
	if err == nil {
		return navResultOf(o)
	}
	if e.State() != lease.EffectUnknown {
		return op.NavResult{}, err
	}
	p, perr := r.page(req.Page)
	if perr != nil {
		return op.NavResult{}, err
	}
	u, title, ierr := p.targetInfo(ctx)
	if ierr != nil || u != req.URL || p.browser.gate.Check(u) != nil {
		return op.NavResult{}, err
	}
	nav := op.NavResult{Page: p.id, URL: u, Title: title}
	out, merr := json.Marshal(nav)
	if merr != nil {
		return op.NavResult{}, err
	}
	if oerr := e.Observe(true, out); oerr != nil {
		// Another repeat settled it first: its outcome is the answer.
		o, err := e.Replay(ctx)
		if err != nil {
			return op.NavResult{}, err
		}
		return navResultOf(o)
	}
	return nav, nil
}

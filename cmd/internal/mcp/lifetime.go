package mcp

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/mcpsession"
)

// sessionOwner drives the server's session machine (mcpsession.Spec): the
// server serves only when the machine lets it, and its end runs only as the
// machine's end_session effect, once.
type sessionOwner = *fsm.Owner[mcpsession.State, mcpsession.Trigger, struct{}]

// lifetime is the server's session: its machine and the steps of its end.
type lifetime struct {
	owner sessionOwner

	mu    sync.Mutex // guards steps
	steps []func(ctx context.Context)
}

func newLifetime() *lifetime {
	l := &lifetime{}
	l.owner = fsm.NewOwner(mcpsession.Spec, fsm.Effects[mcpsession.State, mcpsession.Trigger]{
		mcpsession.EffectEndSession: l.end,
	})
	return l
}

// AtEnd adds a step to the session's end (ending the session on a shared
// Runner, shutting down an embedded one, closing the approval socket).
// Steps run newest first, as deferred calls do, each with its own bound.
func (s *Server) AtEnd(step func(ctx context.Context)) {
	s.life.mu.Lock()
	s.life.steps = append(s.life.steps, step)
	s.life.mu.Unlock()
}

// Run serves MCP on t until the client disconnects or ctx ends, then runs
// the session's end. A session serves once: a second Run is refused.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	if _, err := s.life.owner.Fire(ctx, mcpsession.Serve); err != nil {
		return err
	}
	err := s.srv.Run(ctx, t)
	s.End()
	return err
}

// End runs the session's end unless it ran already: for a server that
// never served, or one whose Run is over (Run calls it).
func (s *Server) End() {
	if _, err := s.life.owner.Fire(context.Background(), mcpsession.End); err != nil {
		if st := s.life.owner.State(); st != mcpsession.Closing && st != mcpsession.Closed {
			s.logf("the session's end: %v", err)
		}
	}
}

// SessionState is the session machine's state.
func (s *Server) SessionState() mcpsession.State { return s.life.owner.State() }

// end is end_session: every step, newest first, each bounded on its own.
func (l *lifetime) end(context.Context, fsm.Step[mcpsession.State, mcpsession.Trigger]) (mcpsession.Trigger, error) {
	l.mu.Lock()
	steps := l.steps
	l.steps = nil
	l.mu.Unlock()
	for i := len(steps) - 1; i >= 0; i-- {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		steps[i](ctx)
		cancel()
	}
	return mcpsession.Ended, nil
}

package localapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// Headers a client sends besides its Boundary.
const (
	// CallerHeader names the MCP session (and the tool) a request comes
	// from, on every request of a `webcodex mcp --runner` server: the
	// Runner audits it and shows the session only the browsers it owns.
	CallerHeader = "X-Webcodex-Caller"
	// DeadlineHeader is how long, in milliseconds, the client waits for
	// the answer. The Runner bounds the call to less, so its answer (a
	// result or a typed refusal) arrives before the client gives up.
	DeadlineHeader = "X-Webcodex-Deadline-Ms"
)

// transitMargin is taken off a client's deadline for the answer's way back.
const transitMargin = 250 * time.Millisecond

// Caller is who asks for an effect, for the audit trail and for session
// ownership: the MCP session and the tool it called. Requests from the CLI
// carry none (the owner at a terminal).
type Caller struct {
	Session string `json:"session"`
	Tool    string `json:"tool,omitempty"`
}

type callerKey struct{}

// WithCaller returns ctx carrying c: on the client side, Call sends it; on
// the server side, it is the caller the request declared.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries, if any.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok && c.Session != ""
}

var (
	sessionPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	toolPattern    = regexp.MustCompile(`^[a-z_]{0,64}$`)
)

// requestContext applies the caller and deadline headers to ctx. A
// malformed header is refused: a caller that cannot be named is not
// audited under a guess.
func requestContext(ctx context.Context, h http.Header) (context.Context, context.CancelFunc, *fsm.Refusal) {
	if hv := h.Values(CallerHeader); len(hv) > 0 {
		var c Caller
		if len(hv) != 1 || len(hv[0]) > 1024 || json.Unmarshal([]byte(hv[0]), &c) != nil ||
			!sessionPattern.MatchString(c.Session) || !toolPattern.MatchString(c.Tool) {
			return ctx, func() {}, fsm.Refuse(fsm.InvalidArgument, "malformed caller")
		}
		ctx = WithCaller(ctx, c)
	}
	if hv := h.Values(DeadlineHeader); len(hv) > 0 {
		ms, err := strconv.ParseInt(hv[0], 10, 64)
		if len(hv) != 1 || err != nil || ms <= 0 {
			return ctx, func() {}, fsm.Refuse(fsm.InvalidArgument, "malformed client deadline")
		}
		d := time.Duration(ms)*time.Millisecond - transitMargin
		ctx, cancel := context.WithTimeout(ctx, max(d, transitMargin))
		return ctx, cancel, nil
	}
	return ctx, func() {}, nil
}

// setRequestHeaders declares ctx's caller and deadline on a request.
func setRequestHeaders(ctx context.Context, h http.Header) error {
	if c, ok := CallerFrom(ctx); ok {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		h.Set(CallerHeader, string(b))
	}
	if dl, ok := ctx.Deadline(); ok {
		h.Set(DeadlineHeader, strconv.FormatInt(max(time.Until(dl).Milliseconds(), 1), 10))
	}
	return nil
}

// lostCall is the error of a call whose answer never came: before the
// request was sent, the Runner is unreachable; after, an effect's outcome
// is unknown, and a read ended in a timeout or a lost Runner.
func lostCall(ctx context.Context, name string, effect, sent bool, err error) error {
	deadline := ctx.Err() == context.DeadlineExceeded
	switch {
	case deadline && sent && effect:
		return fsm.Refusef(fsm.OutcomeUnknown, "no answer from the Runner to %s before this client's deadline; it may have happened and is not replayed", name).WithCause(err)
	case deadline:
		return fsm.Refusef(fsm.Timeout, "no answer from the Runner to %s before this client's deadline", name).WithCause(err)
	case ctx.Err() != nil:
		return fmt.Errorf("localapi: %s: %w", name, ctx.Err())
	case !sent:
		return ErrUnreachable // the error text would name the socket path
	case effect:
		return fsm.Refusef(fsm.OutcomeUnknown, "the Runner was lost after %s was sent; it may have happened and is not replayed", name).WithCause(err)
	}
	return fmt.Errorf("%w: the Runner was lost during %s", ErrUnreachable, name)
}

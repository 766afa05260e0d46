package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webcodex/webcodex/mcpsession"
)

// MCP over Streamable HTTP (`webcodex mcp --http ADDR`). Every request
// carries the owner's bearer token; each HTTP session (its Mcp-Session-Id)
// is its own MCP session — its own Server, session machine, current page
// and browsers on the Runner — and the sessions are bounded in number,
// idle time and request size.

// Bounds and defaults of the HTTP transport.
const (
	// HTTPPath is the one path the transport serves.
	HTTPPath = "/mcp"
	// DefaultHTTPSessions bounds the live HTTP sessions (--http-sessions).
	DefaultHTTPSessions = 8
	// DefaultHTTPIdle ends a session no request reached for this long
	// (--http-idle), closing its browsers.
	DefaultHTTPIdle = 30 * time.Minute
	// MaxHTTPBodyBytes bounds one request body: a JSON-RPC message with a
	// tool's arguments (413 beyond it).
	MaxHTTPBodyBytes = 1 << 20
	// MinTokenChars is the shortest bearer token accepted.
	MinTokenChars = 32
	// maxTokenChars is the longest.
	maxTokenChars = 1024
)

// HTTPOptions configure an [HTTPHandler].
type HTTPOptions struct {
	// Token is the bearer token every request must carry (CheckToken).
	Token string
	// MaxSessions bounds the live sessions (0: DefaultHTTPSessions).
	MaxSessions int
	// Idle ends a session idle this long (0: DefaultHTTPIdle).
	Idle time.Duration
	// MaxBodyBytes bounds a request body (0: MaxHTTPBodyBytes).
	MaxBodyBytes int64
	// NewSession builds the server of one new HTTP session. Its end (its
	// AtEnd steps) runs when the session ends: deleted by the client,
	// expired, or the handler shut down.
	NewSession func() *Server
}

// HTTPHandler serves MCP's Streamable HTTP transport at [HTTPPath]. Safe
// for concurrent use; [HTTPHandler.Shutdown] ends every session and waits
// for their ends.
type HTTPHandler struct {
	opts  HTTPOptions
	token [sha256.Size]byte // the token's digest: compared in constant time
	sdkh  *sdk.StreamableHTTPHandler
	proto *sdk.Server // answers the protocol-version check of requests of existing sessions

	mu      sync.Mutex // guards the fields that follow
	live    map[*Server]struct{}
	closing bool
	wg      sync.WaitGroup // one per live session: its watcher, until its end ran
}

// newSessionKey carries a new session's server from ServeHTTP to the SDK
// handler's getServer.
type newSessionKey struct{}

// CheckToken refuses a bearer token that is too short, too long or not
// printable ASCII without spaces (what an Authorization header carries
// intact). Its error never quotes the token.
func CheckToken(tok string) error {
	if len(tok) < MinTokenChars || len(tok) > maxTokenChars {
		return fmt.Errorf("the bearer token must be %d to %d characters (make one with: head -c 32 /dev/urandom | base64)", MinTokenChars, maxTokenChars)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return fmt.Errorf("the bearer token must be printable ASCII without spaces")
		}
	}
	return nil
}

// NewHTTPHandler returns the handler; opts.Token must pass CheckToken.
func NewHTTPHandler(opts HTTPOptions) (*HTTPHandler, error) {
	if err := CheckToken(opts.Token); err != nil {
		return nil, err
	}
	if opts.NewSession == nil {
		return nil, fmt.Errorf("mcp: HTTPOptions.NewSession is nil")
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultHTTPSessions
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultHTTPIdle
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = MaxHTTPBodyBytes
	}
	h := &HTTPHandler{opts: opts, token: sha256.Sum256([]byte(opts.Token)), live: map[*Server]struct{}{}}
	h.opts.Token = "" // only the digest stays
	h.proto = sdk.NewServer(&sdk.Implementation{Name: "webcodex"}, nil)
	h.sdkh = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if s, ok := r.Context().Value(newSessionKey{}).(*Server); ok {
			return s.srv
		}
		return h.proto
	}, &sdk.StreamableHTTPOptions{SessionTimeout: opts.Idle, MaxRequestBodyBytes: opts.MaxBodyBytes})
	return h, nil
}

// ServeHTTP checks the token first (401 with no detail when it is missing
// or wrong), then serves the transport: a POST without Mcp-Session-Id
// starts a new session when there is room (503 when not).
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.URL.Path != HTTPPath {
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
		if err != nil {
			if _, over := errors.AsType[*http.MaxBytesError](err); over {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", h.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if isInitialize(body) {
			h.startSession(w, r)
			return
		}
		// Anything else without a session (a newer protocol's discovery) is
		// answered by the SDK with a server that has no tools: it opens no
		// session of ours.
	}
	h.sdkh.ServeHTTP(w, r)
}

// isInitialize reports whether body is one initialize request.
func isInitialize(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "initialize"
}

// authorized reports whether r carries exactly one Authorization header
// with the token, compared as digests in constant time.
func (h *HTTPHandler) authorized(r *http.Request) bool {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return false
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1
}

// startSession serves the request that opens a session with a server of
// its own, and leaves a watcher that runs the session's end when the SDK
// closes it (DELETE, idle expiry, Shutdown).
func (h *HTTPHandler) startSession(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.closing || len(h.live) >= h.opts.MaxSessions {
		h.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("this server holds its most sessions (%d): end one (DELETE) or wait for an idle one to expire", h.opts.MaxSessions), http.StatusServiceUnavailable)
		return
	}
	s := h.opts.NewSession()
	h.live[s] = struct{}{}
	h.wg.Add(1)
	h.mu.Unlock()
	if _, err := s.life.owner.Fire(r.Context(), mcpsession.Serve); err != nil {
		h.finish(s)
		http.Error(w, "the session could not start", http.StatusInternalServerError)
		return
	}
	h.sdkh.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newSessionKey{}, s)))
	var ss *sdk.ServerSession
	for ss = range s.srv.Sessions() {
		break
	}
	if ss == nil { // not an initialize, or it failed: no session was kept
		h.finish(s)
		return
	}
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing { // Shutdown began while it was created, and may have missed it
		ss.Close()
	}
	go func() {
		ss.Wait()
		h.finish(s)
	}()
}

// finish runs a session's end (its browsers close) and frees its slot.
func (h *HTTPHandler) finish(s *Server) {
	s.End()
	h.mu.Lock()
	delete(h.live, s)
	h.mu.Unlock()
	h.wg.Done()
}

// Sessions is the number of live sessions (those ending included).
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.live)
}

// Shutdown refuses new sessions, closes every live one and waits until
// each one's end has run, or ctx ends.
func (h *HTTPHandler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	servers := make([]*Server, 0, len(h.live))
	for s := range h.live {
		servers = append(servers, s)
	}
	h.mu.Unlock()
	for _, s := range servers {
		for ss := range s.srv.Sessions() {
			ss.Close()
		}
	}
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcp: sessions still ending: %w", context.Cause(ctx))
	}
}

// Package localapi is the Runner's local API: HTTP over a private unix
// socket in the state root, a route table of typed JSON handlers, the
// request guard, and the typed Client the CLI uses.
package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// StateDir returns the state root: $WEBCODEX_STATE_DIR, else
// $XDG_STATE_HOME/webcodex, else ~/.local/state/webcodex.
func StateDir() (string, error) {
	if d := os.Getenv("WEBCODEX_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "webcodex"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("localapi: no home directory for the state root: %w", err)
	}
	return filepath.Join(home, ".local", "state", "webcodex"), nil
}

// Host is the fake Host every local API request must carry: a browser
// cannot forge a request to a unix socket, and anything else is refused.
const Host = "webcodex-runner.sock"

// SocketName is the socket's file name in the state root.
const SocketName = "runner.sock"

// PathPrefix is the versioned prefix of every route.
const PathPrefix = "/localapi/v0/"

// maxRequestBody bounds a request body.
const maxRequestBody = 4 << 20

// Handler handles one route: it decodes its request from raw.
type Handler func(ctx context.Context, raw json.RawMessage) (any, error)

// Routes is the route table. A duplicate registration panics.
type Routes struct {
	// Redact, when set, rewrites every answer and error of every route
	// before any client sees it, in process or over the socket: the
	// Runner's one redaction of secret values (package secret).
	Redact Redactor

	m     map[string]Handler
	typed map[string]any // name -> func(context.Context, Req) (Resp, error)
}

// Redactor rewrites answers and errors; Value returns a value of the type
// it was given.
type Redactor interface {
	Value(v any) any
	Err(err error) error
}

// decodeStrict decodes a request, refusing fields the request type does
// not have.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Names returns the registered route names.
func (r *Routes) Names() []string {
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	return out
}

// Server serves the routes on a unix socket.
type Server struct {
	Routes *Routes
	// Logf logs request outcomes; it never receives request bodies.
	Logf func(format string, args ...any)
	// MaxConns overrides [MaxConns] (tests lower it).
	MaxConns int

	connsOnce sync.Once
	conns     *connSet
}

type peerKey struct{}

// Peer is the process at the other end of a connection (SO_PEERCRED).
type Peer struct {
	PID int
	UID int
}

// PeerFrom returns the peer of the request's connection.
func PeerFrom(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}

// ErrRunnerRunning is returned by Listen when another Runner answers on the
// socket.
var ErrRunnerRunning = errors.New("localapi: another Runner is already running")

// Listen opens the socket in stateDir (which must already be private). Like
// tailscale's safesocket, it dials first and refuses to start if something
// answers, and otherwise removes a stale socket file.
func Listen(stateDir string) (net.Listener, error) {
	path := filepath.Join(stateDir, SocketName)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, ErrRunnerRunning
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("localapi: remove stale socket: %w", err)
	}
	ln, err := listenUnixPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("localapi: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("localapi: chmod socket: %w", err)
	}
	return ln, nil
}

// Run serves until ctx ends, then closes the listener and every request.
// Only this user's connections are accepted, at most MaxConns at once; a
// request must arrive whole within requestReadTimeout.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	conns := s.connSet()
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: requestReadTimeout,
		ReadTimeout:       requestReadTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if h, ok := c.(*heldConn); ok {
				ctx = context.WithValue(ctx, connKey{}, h)
				return context.WithValue(ctx, peerKey{}, h.peer)
			}
			return ctx
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(guardedListener{Listener: ln, set: conns}) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		<-errc
		return nil
	case err := <-errc:
		return err
	}
}

// connSet returns the server's set of held connections, made once.
func (s *Server) connSet() *connSet {
	s.connsOnce.Do(func() {
		max := MaxConns
		if s.MaxConns > 0 {
			max = s.MaxConns
		}
		s.conns = &connSet{max: max, conns: map[*heldConn]struct{}{}}
	})
	return s.conns
}

// OpenConns returns how many client connections are open now (the Runner
// is not idle while a client holds one).
func (s *Server) OpenConns() int64 { return int64(s.connSet().len()) }

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// ServeHTTP applies the request guard, then the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" || r.Host != Host {
		writeError(w, http.StatusForbidden, "requests from browsers are refused")
		return
	}
	peer, ok := PeerFrom(r.Context())
	if !ok || peer.UID != os.Getuid() {
		writeError(w, http.StatusForbidden, "connections from another user are refused")
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	name, found := strings.CutPrefix(r.URL.Path, PathPrefix)
	h := s.Routes.m[name]
	if !found || h == nil {
		writeError(w, http.StatusNotFound, "no such route")
		return
	}
	ctx := r.Context()
	if hv := r.Header.Values(BoundaryHeader); len(hv) > 0 {
		b, ok := parseBoundary(hv[0])
		if len(hv) != 1 || !ok {
			writeRefusal(w, fsm.Refuse(fsm.InvalidArgument, "malformed client boundary"))
			return
		}
		ctx = WithBoundary(ctx, b)
	}
	ctx, cancel, refusal := requestContext(ctx, r.Header)
	defer cancel()
	if refusal != nil {
		writeRefusal(w, refusal)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(body) > maxRequestBody {
		writeRefusal(w, fsm.Refuse(fsm.LimitExceeded, "request body too large"))
		return
	}
	if hc, ok := connFrom(r.Context()); ok {
		// The request is read: from here the connection runs a call and
		// is not evicted for newcomers.
		hc.setRunning(true)
		defer hc.setRunning(false)
	}
	start := time.Now()
	resp, err := h(ctx, body)
	if err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			s.logf("localapi: %s refused %s (%s)", name, ref.Code, time.Since(start).Round(time.Millisecond))
			writeRefusal(w, ref)
			return
		}
		s.logf("localapi: %s failed (%s)", name, time.Since(start).Round(time.Millisecond))
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.logf("localapi: %s ok (%s)", name, time.Since(start).Round(time.Millisecond))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(response{Result: resp})
}

// response is every answer on the socket: exactly one of a route's
// result, a refusal, or an error the request guard or a failure gives.
type response struct {
	Result  any          `json:"result,omitempty"`
	Refusal *fsm.Refusal `json:"refusal,omitempty"`
	Error   string       `json:"error,omitempty"`
}

func writeRefusal(w http.ResponseWriter, r *fsm.Refusal) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.Code.HTTPStatus())
	json.NewEncoder(w).Encode(response{Refusal: r})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(response{Error: msg})
}

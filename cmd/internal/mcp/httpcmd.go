package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/platform"
)

// TokenEnv is the variable a bearer token may come from instead of
// --http-token-file (a container's secret). It is removed from the
// environment once read, so no browser inherits it.
const TokenEnv = "WEBCODEX_MCP_TOKEN"

// maxTokenFileBytes bounds the token file read.
const maxTokenFileBytes = 4 << 10

// httpFlags are the flags of `webcodex mcp --http`.
type httpFlags struct {
	addr      string
	tokenFile string
	remote    bool
	sessions  int
	idle      time.Duration
}

func (h *httpFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&h.addr, "http", "", "serve MCP over Streamable HTTP on ADDR ([host]:port; host defaults to 127.0.0.1) instead of stdio")
	fl.StringVar(&h.tokenFile, "http-token-file", "", "file holding the bearer token every HTTP request must carry (yours, mode 0600; or $"+TokenEnv+")")
	fl.BoolVar(&h.remote, "http-remote", false, "let --http listen on an address beyond this machine (put TLS in front of it)")
	fl.IntVar(&h.sessions, "http-sessions", DefaultHTTPSessions, "most HTTP sessions at once, each with its own browsers")
	fl.DurationVar(&h.idle, "http-idle", DefaultHTTPIdle, "end an HTTP session (closing its browsers) no request reached for this long")
}

// httpToken reads the bearer token from file (the owner's own regular
// file, no link, readable by nobody else) or, with no file, from TokenEnv.
// The token is never printed; errors never quote it.
func httpToken(file string) (string, error) {
	env, inEnv := os.LookupEnv(TokenEnv)
	os.Unsetenv(TokenEnv) // no browser, nor anything else started, inherits it
	if file != "" && inEnv {
		return "", fmt.Errorf("the token comes from --http-token-file or $%s, not both", TokenEnv)
	}
	tok := env
	if file != "" {
		f, err := platform.OpenNoFollow(file)
		if err != nil {
			return "", fmt.Errorf("--http-token-file: %w", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("--http-token-file: %w", err)
		}
		if !fi.Mode().IsRegular() || !platform.OwnedByMe(f) || fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("--http-token-file must be a regular file of yours that nobody else can read (chmod 600)")
		}
		b, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
		if err != nil {
			return "", fmt.Errorf("--http-token-file: %w", err)
		}
		if len(b) > maxTokenFileBytes {
			return "", fmt.Errorf("--http-token-file is over %d bytes: it holds one token", maxTokenFileBytes)
		}
		tok = strings.TrimRight(string(b), "\r\n")
	}
	if tok == "" {
		return "", fmt.Errorf("--http needs a bearer token: --http-token-file FILE or $%s (make one: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)", TokenEnv)
	}
	return tok, CheckToken(tok)
}

// errNotLoopback refuses a non-loopback --http address without --http-remote.
var errNotLoopback = errors.New("--http ADDR is not a loopback address: anyone who reaches it with the token drives the browsers; pass --http-remote to mean it (and put TLS in front of it)")

// listenHTTP listens on addr: a bare port or ":port" on 127.0.0.1, and an
// address whose bound IP is not loopback only with remote.
func listenHTTP(addr string, remote bool) (net.Listener, bool, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("--http: %w", err)
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	loopback := ok && tcp.IP.IsLoopback()
	if !loopback && !remote {
		ln.Close()
		return nil, false, errNotLoopback
	}
	return ln, loopback, nil
}

// runHTTP serves MCP over Streamable HTTP until a signal: one embedded
// Runner, and each HTTP session its own MCP session on it, its browsers
// closed when the session ends.
func runHTTP(f *cmdutil.Factory, o cmdOptions) error {
	if o.runner {
		return &cmdutil.UsageError{Err: errors.New("--http serves its own embedded Runner; --runner is not supported with it")}
	}
	scopes, err := ParseScopes(o.scopes)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	caps, err := ParseCaps(o.caps)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if err := cmdutil.CheckAllow(o.allow); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	secrets, err := parseSecrets(o)
	if err != nil {
		return err
	}
	if o.http.sessions <= 0 || o.http.idle <= 0 {
		return &cmdutil.UsageError{Err: errors.New("--http-sessions and --http-idle must be positive")}
	}
	tok, err := httpToken(o.http.tokenFile)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	ln, loopback, err := listenHTTP(o.http.addr, o.http.remote)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	defer ln.Close()
	logger := log.New(f.IO.Err, "webcodex mcp: ", log.LstdFlags)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	dir, err := runner.StateDir()
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Options{StateDir: dir, Version: cmdutil.Version, Logf: logger.Printf, LogWhere: runner.LogWhere(dir, f.IO.Err, "webcodex mcp"), UploadDir: o.uploadDir, Secrets: secrets})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		r.Shutdown(sctx)
	}()
	if closeApprovals, err := serveApprovals(ctx, dir, newSession(), r, logger.Printf); err != nil {
		logger.Printf("approvals from a terminal are unavailable: %v", err)
	} else {
		defer closeApprovals()
	}
	base := Options{
		Scopes: scopes, Caps: caps, Allow: o.allow, AllowAttach: o.allowAttach, AllowEvaluate: o.allowEvaluate,
		Uploads: o.uploadDir != "", Secrets: secrets.Names(), Version: cmdutil.Version, Logf: logger.Printf, Runner: r.Routes(), Embedded: r,
	}
	h, err := NewHTTPHandler(HTTPOptions{Token: tok, MaxSessions: o.http.sessions, Idle: o.http.idle, NewSession: func() *Server {
		return newHTTPSession(base, dir)
	}})
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if !loopback {
		logger.Printf("serving beyond this machine (--http-remote): anyone who reaches it with the token drives these browsers; the token travels in clear unless TLS is in front")
	}
	fmt.Fprintf(f.IO.Err, "webcodex mcp: serving MCP (Streamable HTTP) at http://%s%s\n", ln.Addr(), HTTPPath)
	return serveHTTP(ctx, ln, h, logger)
}

// newHTTPSession is the server of one HTTP session: base's flags, a
// session of its own on the Runner (its browsers, its output directory),
// ended on the Runner when the HTTP session ends.
func newHTTPSession(base Options, stateDir string) *Server {
	opts := base
	opts.Session = newSession()
	opts.OutputDir = filepath.Join(stateDir, "output", opts.Session)
	s := NewServer(opts)
	s.AtEnd(func(ctx context.Context) {
		ctx = localapi.WithCaller(ctx, localapi.Caller{Session: opts.Session})
		if _, err := localapi.EndSession.Call(ctx, opts.Runner, struct{}{}); err != nil {
			opts.Logf("ending session %s: %v", opts.Session, err)
		}
	})
	return s
}

// serveHTTP serves h on ln until ctx ends, then ends every session (their
// browsers close) and the server.
func serveHTTP(ctx context.Context, ln net.Listener, h *HTTPHandler, logger *log.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10, ErrorLog: logger}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if herr := h.Shutdown(sctx); herr != nil {
		logger.Printf("%v", herr)
	}
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cdp/origin"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/cmd/internal/secret"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// shutdownTimeout bounds closing the embedded Runner's browsers at exit.
const shutdownTimeout = 30 * time.Second

// approvalDir is where embedded servers keep their approval sockets:
// <state root>/mcp/<session>/runner.sock.
const approvalDir = "mcp"

// maxApprovalSockets bounds how many approval sockets are tried or swept.
const maxApprovalSockets = 64

// cmdOptions are the flags of `webcodex mcp`.
type cmdOptions struct {
	runner        bool
	scopes        string
	allow         []string
	allowAttach   bool
	allowEvaluate bool
	uploadDir     string
	caps          string
	secrets       []string
	http          httpFlags
}

// NewCmdMCP is `webcodex mcp`: the MCP server over stdio. It lives here,
// not in cli, because it embeds a Runner.
func NewCmdMCP(f *cmdutil.Factory) *cobra.Command {
	var o cmdOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over stdio for agents (embeds a Runner; --runner uses the running one)",
		Long: `Serve the Model Context Protocol on stdin/stdout for an agent host:

  claude mcp add webcodex -- webcodex mcp
  codex mcp add webcodex -- webcodex mcp

By default the server embeds its own Runner (nothing else to start; it does not
listen on the Runner socket, so it never collides with a daemon). --runner uses the
running daemon instead (starting one in the background when none answers).

Safety flags (the owner's decisions; no tool argument changes them):
  --scopes        what the agent may do: browser:read, browser:launch, browser:control
  --allow ORIGIN  origins its browsers may reach and read (repeatable); none = the open
                  web for launched browsers, nothing for attached ones
  --allow-attach  let it attach to your own browser (each attach still needs your approval)
  --allow-evaluate  JavaScript evaluation and raw page CDP on attached browsers
  --upload-dir    the one directory files may be uploaded from (unset: uploads refused)
  --secret NAME=env:VAR@ORIGIN  a value the agent types as {{secret.NAME}} without
                  reading it, only into pages of ORIGIN (or NAME=file:PATH@ORIGIN, a
                  file only you can read); outputs show the placeholder, never the value

--caps turns on tool groups an agent rarely needs (listed only when on, as in
Playwright MCP): vision (coordinate mouse tools), pdf (save the page as PDF),
devtools (raw CDP, probing), or all.

--http ADDR serves MCP's Streamable HTTP transport at http://ADDR/mcp instead of
stdio (loopback unless --http-remote), each HTTP session its own MCP session with
its own browsers. Every request carries the bearer token you made:
--http-token-file FILE (yours, 0600) or $WEBCODEX_MCP_TOKEN.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runServer(f, o) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.runner, "runner", false, "use the running Runner daemon (webcodex serve) instead of an embedded one")
	fl.StringVar(&o.scopes, "scopes", DefaultScopes, "comma-separated scopes: browser:read, browser:launch, browser:control")
	fl.StringArrayVar(&o.allow, "allow", nil, "origin the agent's browsers may reach, [scheme://]host[:port] (repeatable)")
	fl.BoolVar(&o.allowAttach, "allow-attach", false, "allow attaching to your running browser (needs browser:control and your approval each time)")
	fl.BoolVar(&o.allowEvaluate, "allow-evaluate", false, "allow JavaScript evaluation and raw page CDP on attached browsers")
	fl.StringVar(&o.uploadDir, "upload-dir", os.Getenv("WEBCODEX_UPLOAD_DIR"), "the one directory files may be uploaded from (unset: uploads refused)")
	fl.StringVar(&o.caps, "caps", "", "comma-separated tool groups to list: vision, pdf, devtools, or all")
	fl.StringArrayVar(&o.secrets, "secret", nil, "NAME=env:VAR@ORIGIN[,ORIGIN] or NAME=file:PATH@ORIGIN: typed as {{secret.NAME}}, never shown (repeatable)")
	o.http.add(fl)
	cmd.AddCommand(newCmdApprove(f))
	return cmd
}

func newSession() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Errorf("mcp: crypto/rand: %w", err))
	}
	return "mcp-" + hex.EncodeToString(b[:])
}

// runServer serves until the client disconnects (stdin closes) or a signal.
func runServer(f *cmdutil.Factory, o cmdOptions) error {
	if o.http.addr != "" {
		return runHTTP(f, o)
	}
	scopes, caps, secrets, err := checkFlags(o) // before anything starts
	if err != nil {
		return err
	}
	logger := log.New(f.IO.Err, "webcodex mcp: ", log.LstdFlags)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	dir, err := runner.StateDir()
	if err != nil {
		return err
	}
	opts := Options{
		Scopes: scopes, Caps: caps, Allow: o.allow, AllowAttach: o.allowAttach, AllowEvaluate: o.allowEvaluate,
		Uploads: o.uploadDir != "", Secrets: secrets.Names(), Session: newSession(), Version: cmdutil.Version, Logf: logger.Printf,
	}
	opts.OutputDir = filepath.Join(dir, "output", opts.Session)
	// ends are the steps of the session's end, which its machine runs
	// (newest first) once the client goes. Nothing returns between the
	// first step and the server taking them.
	var ends []func(context.Context)
	if o.runner {
		c, err := f.Client(ctx)
		if err != nil {
			return err
		}
		if o.uploadDir != "" {
			logger.Printf("--upload-dir is the daemon's setting (webcodex serve --upload-dir); ignored with --runner")
			opts.Uploads = false
		}
		// The daemon is shared: this server declares its owner's limits on
		// every call, and sees only browsers created under the same ones.
		c.Boundary = &localapi.Boundary{Allow: origin.Canonical(o.allow), AllowEvaluate: o.allowEvaluate, Scopes: scopes.List()}
		opts.Runner = c
		// The daemon outlives this session: end it, so the browsers it
		// launched close (unless kept) and those it attached detach. The
		// daemon also ends it when this process is gone.
		ends = append(ends, func(ectx context.Context) {
			ectx = localapi.WithCaller(ectx, localapi.Caller{Session: opts.Session})
			if _, err := localapi.EndSession.Call(ectx, c, struct{}{}); err != nil {
				logger.Printf("ending the session on the Runner: %v", err)
			}
		})
	} else {
		r, err := runner.New(runner.Options{StateDir: dir, Version: cmdutil.Version, Logf: logger.Printf, LogWhere: runner.LogWhere(dir, f.IO.Err, "webcodex mcp"), UploadDir: o.uploadDir, Secrets: secrets})
		if err != nil {
			return err
		}
		ends = append(ends, func(sctx context.Context) { r.Shutdown(sctx) })
		closeApprovals, err := serveApprovals(ctx, dir, opts.Session, r, logger.Printf)
		if err != nil {
			logger.Printf("approvals from a terminal are unavailable: %v", err)
		} else {
			ends = append(ends, func(context.Context) { closeApprovals() })
		}
		opts.Runner, opts.Embedded = r.Routes(), r
	}
	s := NewServer(opts)
	for _, end := range ends {
		s.AtEnd(end)
	}
	t := &sdk.IOTransport{Reader: io.NopCloser(f.IO.In), Writer: nopWriteCloser{f.IO.Out}}
	// Run returns nil when the client closes stdin, the normal end; the
	// session's end has run when it returns.
	if err := s.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// checkFlags reads the owner's flags of a stdio server; a bad one is a
// usage error.
func checkFlags(o cmdOptions) (Scopes, Caps, *secret.Set, error) {
	scopes, err := ParseScopes(o.scopes)
	if err != nil {
		return nil, nil, nil, &cmdutil.UsageError{Err: err}
	}
	caps, err := ParseCaps(o.caps)
	if err != nil {
		return nil, nil, nil, &cmdutil.UsageError{Err: err}
	}
	if err := cmdutil.CheckAllow(o.allow); err != nil {
		return nil, nil, nil, &cmdutil.UsageError{Err: err}
	}
	secrets, err := parseSecrets(o)
	return scopes, caps, secrets, err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveApprovals opens the embedded Runner's approval socket, so that
// `webcodex mcp approve ID` reaches it from a terminal. It serves only the
// approval routes (approve checks for a person at a terminal), sweeps the
// sockets of servers that are gone, and returns a func that closes it and
// removes its directory.
func serveApprovals(ctx context.Context, stateDir, session string, r *runner.Runner, logf func(string, ...any)) (func(), error) {
	root := filepath.Join(stateDir, approvalDir)
	if err := platform.EnsurePrivateDir(root); err != nil {
		return nil, err
	}
	sweepApprovalSockets(root)
	dir := filepath.Join(root, session)
	if err := platform.EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	ln, err := localapi.Listen(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	actx, cancel := context.WithCancel(ctx)
	srv := &localapi.Server{Routes: r.ApprovalRoutes(), Logf: logf}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.Run(actx, ln)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			os.RemoveAll(dir)
		})
	}, nil
}

// sweepApprovalSockets removes the directories of approval sockets nobody
// answers on (servers that died).
func sweepApprovalSockets(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for i, e := range entries {
		if i >= maxApprovalSockets || !e.IsDir() || !strings.HasPrefix(e.Name(), "mcp-") {
			continue
		}
		sock := filepath.Join(root, e.Name(), localapi.SocketName)
		c, err := net.DialTimeout("unix", sock, 200*time.Millisecond)
		if err == nil {
			c.Close()
			continue
		}
		os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

// newCmdApprove is `webcodex mcp approve ID`: the person approves, at a
// terminal, an attach an embedded server asked for when its MCP client
// could not ask them itself.
func newCmdApprove(f *cmdutil.Factory) *cobra.Command {
	var deny bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve (or --deny) an attach a `webcodex mcp` server is waiting for: interactive terminal only",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &cmdutil.UsageError{Err: fmt.Errorf("%s takes the approval request id", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if !isTerminal(f.IO.In) || !isTerminal(f.IO.Out) {
				return fsm.Refuse(fsm.ApprovalInvalid, "approval needs a person at an interactive terminal (stdin and stdout must be a TTY)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			c, _, err := findApproval(ctx, args[0])
			if err != nil {
				return err
			}
			return cmdutil.RunApproval(ctx, f.IO.In, f.IO.Out, c, args[0], deny, "The agent can call browser_attach again to connect.")
		},
	}
	cmd.Flags().BoolVar(&deny, "deny", false, "deny the request instead")
	return cmd
}

// findApproval asks each live embedded server's approval socket for the
// request.
func findApproval(ctx context.Context, id string) (*localapi.Client, localapi.ApprovalSummary, error) {
	dir, err := runner.StateDir()
	if err != nil {
		return nil, localapi.ApprovalSummary{}, err
	}
	entries, _ := os.ReadDir(filepath.Join(dir, approvalDir))
	for i, e := range entries {
		if i >= maxApprovalSockets || !e.IsDir() {
			continue
		}
		c := localapi.NewClient(filepath.Join(dir, approvalDir, e.Name()))
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		info, err := localapi.Approval.Call(cctx, c, localapi.ApprovalRequest{ID: id})
		cancel()
		if err == nil {
			return c, info, nil
		}
	}
	return nil, localapi.ApprovalSummary{}, fsm.Refuse(fsm.ApprovalInvalid, "no running `webcodex mcp` server has this approval request (it may have expired); if the agent uses --runner, run `webcodex approve ID` instead")
}

// isTerminal reports whether v is a character device (a terminal).
func isTerminal(v any) bool {
	file, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

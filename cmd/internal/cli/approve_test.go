package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// TestApprovePointsToMCPApprove: `webcodex approve ID` for a request an
// embedded `webcodex mcp` server holds says to run `webcodex mcp approve
// ID`, and starts no Runner; an id nobody holds says so. The MCP server's
// approval socket is a real local API socket answering as one would.
func TestApprovePointsToMCPApprove(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	sockDir := filepath.Join(state, cmdutil.MCPApprovalDir, "mcp-test")
	if err := os.MkdirAll(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WEBCODEX_STATE_DIR", state)
	rt := &localapi.Routes{}
	localapi.Serve(rt, localapi.Approval, func(_ context.Context, req localapi.ApprovalRequest) (localapi.ApprovalSummary, error) {
		if req.ID != "ar-7" {
			return localapi.ApprovalSummary{}, fsm.Refuse(fsm.NotFound, "no such pending request")
		}
		return localapi.ApprovalSummary{Summary: "attach"}, nil
	})
	ln, err := localapi.Listen(sockDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); (&localapi.Server{Routes: rt}).Run(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Run(&Factory{IO: cmdutil.IO{Out: &out, Err: &errb}}, args)
		return code, errb.String()
	}
	code, errs := run("approve", "ar-7")
	if code != ExitRefused || !strings.Contains(errs, "next: webcodex mcp approve ar-7") {
		t.Fatalf("approve of an MCP server's request: exit %d, stderr %q", code, errs)
	}
	code, errs = run("approve", "ar-8")
	if code != ExitRefused || !strings.Contains(errs, "no Runner is running and no `webcodex mcp` server has approval request ar-8") {
		t.Fatalf("approve of an unknown request: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(state, localapi.SocketName)); err == nil {
		t.Fatal("approve started a Runner")
	}
}

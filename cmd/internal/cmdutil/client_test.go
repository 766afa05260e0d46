package cmdutil

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// TestWarningsOnlyWhereTheyHelp: a command reaching a Runner of another
// version, or started with another environment, says so on stderr; `stop`
// (StoppingClient) says neither, since stopping settles both. The Runner
// here is a route table on a real local API socket answering ping as an
// older Runner would.
func TestWarningsOnlyWhereTheyHelp(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WEBCODEX_STATE_DIR", state)
	env := localapi.EnvFingerprint()
	other := map[string]string{}
	for k, v := range env {
		other[k] = v
	}
	other["WEBCODEX_CHROME"] = "/elsewhere/chromium"
	rt := &localapi.Routes{}
	localapi.Serve(rt, localapi.Ping, func(context.Context, struct{}) (localapi.PingResult, error) {
		return localapi.PingResult{OK: true, Version: "v0.0.1-older", Env: other}, nil
	})
	ln, err := localapi.Listen(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); (&localapi.Server{Routes: rt}).Run(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	var errb bytes.Buffer
	f := &Factory{IO: IO{Out: &bytes.Buffer{}, Err: &errb}}
	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer tcancel()
	if c, err := f.RunningClient(tctx); err != nil || c == nil {
		t.Fatalf("RunningClient = %v, %v", c, err)
	}
	for _, want := range []string{"the running Runner is version v0.0.1-older, this command is " + Version, "different WEBCODEX_CHROME"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q does not say %q", errb.String(), want)
		}
	}
	errb.Reset()
	if c, err := f.StoppingClient(tctx); err != nil || c == nil {
		t.Fatalf("StoppingClient = %v, %v", c, err)
	}
	if errb.Len() != 0 {
		t.Errorf("stop warned: %q", errb.String())
	}
}

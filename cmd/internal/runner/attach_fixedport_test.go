package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// TestAttachFixedPort attaches to a Chromium started the way people start a
// debuggable Chrome, --remote-debugging-port=N with --user-data-dir: no
// DevToolsActivePort exists, and the owner is proven by the listening
// socket's process, its executable, its user and its profile lock. The
// same approval is asked for, the tab is read, a cut socket reconnects on
// the re-proven owner, and nothing names the port or profile.
func TestAttachFixedPort(t *testing.T) {
	t.Parallel() // its own Runner and browser
	h := newHarness(t)
	srv := fixtureServer(t, new(atomic.Int32))
	u := chromiumtest.StartOnPort(t, srv.URL+"/")
	if _, err := os.Stat(filepath.Join(u.UserDataDir(), platform.DevToolsActivePortFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a fixed-port browser wrote DevToolsActivePort (%v): this test would prove nothing", err)
	}
	ctx := context.Background()
	req := localapi.AttachRequest{Endpoint: fmt.Sprintf("127.0.0.1:%d", u.Port), Allow: []string{srv.URL}}
	res := h.approvedAttach(h.r, req) // refused browser_consent_required first: the same consent
	if res.Product != "chromium" || res.EndpointOwnership != "listening_socket_pid" {
		t.Fatalf("attach = %+v", res)
	}
	tab := pageByURL(t, res.Browser.Pages, srv.URL+"/")
	// The tab's first document may still be about:blank to the new session
	// (a tab still committing is refused like an unknown page): the read is
	// retried until the committed page answers, within a bound.
	var rd localapi.ReadResult
	waitfor.Until(t, 10*time.Second, "the tab is read", func() bool {
		var err error
		rd, err = runOp(ctx, h.r, op.ReadText, readIn(tab))
		h.record(rd, err)
		return err == nil && strings.Contains(rd.Text, "logged-in page")
	})

	// A cut socket: the reconnect re-proves the owner on the live socket.
	b, _ := h.r.browser(res.Browser.ID)
	h.dial.cut()
	waitfor.Until(t, 15*time.Second, "reconnected on generation 2", func() bool { return b.gens.Current() == 2 && b.state() == "ready" })
	pages, err := h.r.Pages(ctx, localapi.BrowserRequest{Browser: b.id})
	h.record(pages, err)
	if err != nil {
		t.Fatal(err)
	}
	pageByURL(t, pages, srv.URL+"/")

	st, _ := h.r.Status(ctx)
	h.record(st, nil)
	all := h.logs.String() + strings.Join(h.out, "\n")
	for _, secret := range []string{fmt.Sprintf(":%d", u.Port), fmt.Sprintf("%d/", u.Port), "ws://", "/devtools/browser", u.UserDataDir()} {
		if strings.Contains(all, secret) {
			t.Fatalf("output leaks %q:\n%s", secret, all)
		}
	}
}

// TestAttachFixedPortUnprovenProfile: a fixed-port browser whose profile
// lock no longer names it (removed after start) cannot be proven; the
// refusal is browser_requires_setup with the step to take, before any
// approval is asked for.
func TestAttachFixedPortUnprovenProfile(t *testing.T) {
	t.Parallel() // its own Runner and browser
	h := newHarness(t)
	u := chromiumtest.StartOnPort(t, "about:blank")
	if err := os.Remove(filepath.Join(u.UserDataDir(), "SingletonLock")); err != nil {
		t.Fatal(err)
	}
	_, err := h.r.Attach(context.Background(), localapi.AttachRequest{Endpoint: fmt.Sprintf("127.0.0.1:%d", u.Port)})
	ref, ok := fsm.AsRefusal(err)
	if !ok || ref.Code != fsm.RequiresSetup || !strings.Contains(ref.Detail, "--user-data-dir=DIR") {
		t.Fatalf("attach to an unproven fixed-port browser = %v, want %s naming --user-data-dir", err, fsm.RequiresSetup)
	}
}

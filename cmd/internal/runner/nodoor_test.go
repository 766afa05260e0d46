package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/platform"
)

// TestOwnedBrowserListensNowhere: a browser the Runner launches, ephemeral
// or managed, is driven over its DevTools pipe (a page served on 127.0.0.1
// is opened and read) while no process of its tree holds a TCP listener,
// its profile has no DevToolsActivePort, its command line asks for the pipe
// and no port, and its orphan record names no endpoint. Closing it leaves
// no process of its group. (platform's TestOwnedBrowserHasNoOpenDoor runs
// the same-uid and other-uid scanners against the same kind of launch.)
func TestOwnedBrowserListensNowhere(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>pipe-owned</title><p>read over the pipe</p>`)
	}))
	defer srv.Close()
	headless := true
	for _, req := range []localapi.LaunchRequest{{}, {Managed: "pipe-test", Headless: &headless}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		bi, err := h.r.Launch(ctx, req)
		if err != nil {
			t.Fatalf("launch %q: %v", req.Managed, err)
		}
		b, err := h.r.browser(bi.ID)
		if err != nil {
			t.Fatal(err)
		}
		proc := procOf(b)

		pg, err := h.r.Open(ctx, localapi.OpenRequest{Browser: bi.ID, URL: srv.URL + "/"})
		if err != nil {
			t.Fatalf("%s: open: %v", bi.Mode, err)
		}
		if rd, err := runOp(ctx, h.r, op.ReadText, readIn(pg.ID)); err != nil || rd.Text != "read over the pipe" {
			t.Fatalf("%s: read = %+v, %v; want the page's text", bi.Mode, rd, err)
		}
		waitfor.Until(t, 10*time.Second, "the page's title is listed", func() bool {
			pages, _ := h.r.Pages(ctx, localapi.BrowserRequest{Browser: bi.ID})
			for _, pi := range pages {
				if pi.ID == pg.ID && pi.Title == "pipe-owned" {
					return true
				}
			}
			return false
		})

		if ls, err := proc.Listeners(); err != nil || len(ls) != 0 {
			t.Errorf("%s: the browser's tree listens on %d TCP sockets (%v), want none", bi.Mode, len(ls), err)
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(proc.PID()) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(cmdline, []byte("\x00--remote-debugging-pipe\x00")) || bytes.Contains(cmdline, []byte("--remote-debugging-port")) {
			t.Errorf("%s: the browser's command line does not ask for the pipe alone", bi.Mode)
		}
		udd, err := platform.UserDataDirOf(proc.PID())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(udd, platform.DevToolsActivePortFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the profile has a DevToolsActivePort (%v)", bi.Mode, err)
		}
		rec, err := os.ReadFile(b.life.(*ownedBrowser).record)
		if err != nil {
			t.Fatalf("%s: orphan record: %v", bi.Mode, err)
		}
		if bytes.Contains(rec, []byte("ws:")) || bytes.Contains(rec, []byte("devtools")) || bytes.Contains(rec, []byte("port")) {
			t.Errorf("%s: the orphan record names an endpoint", bi.Mode)
		}

		if _, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: bi.ID}); err != nil {
			t.Fatalf("%s: close: %v", bi.Mode, err)
		}
		if platform.GroupAlive(proc.PGID()) {
			t.Errorf("%s: processes of the browser's group survive Close: %v", bi.Mode, platform.GroupMembers(proc.PGID()))
		}
	}
}

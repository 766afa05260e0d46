package chromiumtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/platform"
)

// ExtensionWait bounds each wait on the extension's browser or worker: a
// loaded two-core machine starts a service worker in 0.3-1.6 s; the bound
// is generous.
const ExtensionWait = 45 * time.Second

// ExtensionID is extension/'s id, fixed by its manifest key (tested against
// the key in extension/install).
const ExtensionID = "lbgchfdhfomgaekhbbampfjbpafcjdfk"

// ExtBrowser is a headless Chromium with the unpacked webcodex extension
// loaded, and the test's own CDP connection (over the pipe) to its service
// worker, which stands in for the person clicking the extension's popup.
type ExtBrowser struct {
	tb     testing.TB
	Proc   *platform.Process
	conn   *cdp.Conn
	worker *cdp.Session
}

// ExtensionDir is the repository's extension/ directory.
func ExtensionDir(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("chromiumtest: no source path")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "extension")
}

// BuildBridgeHost builds cmd/webcodex-bridge-host into dir and returns its
// path.
func BuildBridgeHost(tb testing.TB, dir string) string {
	tb.Helper()
	out := filepath.Join(dir, "webcodex-bridge-host")
	if b, err := exec.Command("go", "build", "-o", out, "github.com/webcodex/webcodex/cmd/webcodex-bridge-host").CombinedOutput(); err != nil {
		tb.Fatalf("chromiumtest: build the native host: %v\n%s", err, b)
	}
	return out
}

// StartWithExtension launches Chromium on profile udd with the extension
// loaded and WEBCODEX_STATE_DIR=state in its environment (which its native
// host inherits), and waits until the worker has bound its actions.
func StartWithExtension(tb testing.TB, udd, state string) *ExtBrowser {
	tb.Helper()
	exe := chromePath(tb)
	ctx, cancel := context.WithTimeout(context.Background(), ExtensionWait)
	defer cancel()
	proc, err := platform.Launch(ctx, platform.LaunchOptions{Exec: exe, UserDataDir: udd, Headless: true,
		ExtraArgs: []string{"--load-extension=" + ExtensionDir(tb)}, Env: []string{"WEBCODEX_STATE_DIR=" + state}})
	if err != nil {
		tb.Fatal(err)
	}
	from, to := proc.Pipe()
	eb := &ExtBrowser{tb: tb, Proc: proc, conn: cdp.NewConn(cdp.NewPipeSocket(from, to, cdp.PipeOptions{}), cdp.ConnOptions{})}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		proc.Close(ctx, func(ctx context.Context) error { return eb.conn.Browser().Call(ctx, "Browser.close", nil, nil) })
		eb.conn.Close()
	})
	// The worker's target exists before its script ran: wait until the
	// popup's actions are bound.
	workerURL := "chrome-extension://" + ExtensionID + "/src/worker.js"
	deadline := time.Now().Add(ExtensionWait)
	for eb.worker == nil {
		if time.Now().After(deadline) {
			tb.Fatal("chromiumtest: the extension's service worker did not start")
		}
		res, err := cdproto.Call(ctx, eb.conn.Browser(), target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			tb.Fatal(err)
		}
		for _, ti := range res.TargetInfos {
			if ti.Type == "service_worker" && ti.URL == workerURL {
				if eb.worker, err = eb.conn.AttachTarget(ctx, ti.TargetID); err != nil {
					tb.Fatal(err)
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // polled: no event announces the worker before this
	}
	for eb.Eval(`typeof globalThis.webcodex`) != "object" {
		if time.Now().After(deadline) {
			tb.Fatal("chromiumtest: the worker never bound its actions")
		}
		time.Sleep(50 * time.Millisecond) // polled: the worker's script gives no signal
	}
	return eb
}

// Eval runs expr in the service worker, awaiting a promise, and returns its
// value decoded from JSON.
func (eb *ExtBrowser) Eval(expr string) any {
	eb.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ExtensionWait)
	defer cancel()
	res, err := cdproto.Call(ctx, eb.worker, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: expr, AwaitPromise: new(true), ReturnByValue: new(true)})
	if err != nil {
		eb.tb.Fatalf("chromiumtest: evaluate in the worker: %v", err)
	}
	if res.ExceptionDetails != nil {
		eb.tb.Fatalf("chromiumtest: evaluate in the worker threw: %s", res.ExceptionDetails.Text)
	}
	var v any
	if res.Result != nil && len(res.Result.Value) > 0 {
		json.Unmarshal(res.Result.Value, &v)
	}
	return v
}

// Popup calls the popup's action op (share, revoke or status) for tab, as
// the person's click would, and returns its answer.
func (eb *ExtBrowser) Popup(op string, tab int) map[string]any {
	eb.tb.Helper()
	v, _ := eb.Eval(fmt.Sprintf(`webcodex.%s(%d)`, op, tab)).(map[string]any)
	return v
}

// OpenTab opens url in a new tab, waits until its document titled title is
// in, and returns its tab id (chrome.debugger.getTargets maps target ids to
// tab ids) and target id.
func (eb *ExtBrowser) OpenTab(rawURL, title string) (int, string) {
	eb.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ExtensionWait)
	defer cancel()
	res, err := cdproto.Call(ctx, eb.conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: rawURL})
	if err != nil {
		eb.tb.Fatal(err)
	}
	deadline := time.Now().Add(ExtensionWait)
	for {
		v := eb.Eval(fmt.Sprintf(`chrome.debugger.getTargets().then(ts => { const t = ts.find(t => t.id === %q); return t && t.title === %q ? t.tabId : 0 })`, res.TargetID, title))
		if n, ok := v.(float64); ok && n > 0 {
			return int(n), string(res.TargetID)
		}
		if time.Now().After(deadline) {
			eb.tb.Fatal("chromiumtest: the new tab never loaded")
		}
		time.Sleep(50 * time.Millisecond) // polled: the tab loads asynchronously
	}
}

// DebuggerAttached reports whether a debugger is attached to the target.
func (eb *ExtBrowser) DebuggerAttached(targetID string) bool {
	v := eb.Eval(fmt.Sprintf(`chrome.debugger.getTargets().then(ts => { const t = ts.find(t => t.id === %q); return !!(t && t.attached) })`, targetID))
	b, _ := v.(bool)
	return b
}

// TabExists reports whether the target is still open.
func (eb *ExtBrowser) TabExists(targetID string) bool {
	v := eb.Eval(fmt.Sprintf(`chrome.debugger.getTargets().then(ts => ts.some(t => t.id === %q))`, targetID))
	b, _ := v.(bool)
	return b
}

// ProcessRunning reports whether a process runs the executable exe.
func ProcessRunning(exe string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if got, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && got == exe {
			return true
		}
	}
	return false
}

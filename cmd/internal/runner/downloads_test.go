package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/internal/waitfor"
	"github.com/webcodex/webcodex/netguard"
)

// downloadServer offers a small file and a big one that never ends by
// itself: only a cancelled download closes its request (bigGone).
func downloadServer(t *testing.T, report string, bigGone chan<- struct{}) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>files</title><a href="/report" download="report.txt">Get report</a> <a href="/big">Get big</a>`)
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, report)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
		chunk := make([]byte, 32<<10)
		for range 8 { // 256 KiB, over the test's 64 KiB bound; no length sent
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // never finishes by itself
		close(bigGone)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestDownloadsJailed: an owned ephemeral browser's download lands in its
// private jail (never under HOME), is listed without a path, is saved to a
// directory of the caller's on request, and what was not saved goes with
// the browser; a download over the bound is cancelled and reported.
func TestDownloadsJailed(t *testing.T) {
	tracecheck.Track(t)
	home := t.TempDir()
	t.Setenv("HOME", home) // what a leak would reach: the browser must not
	const report = "quarterly numbers\n"
	bigGone := make(chan struct{})
	srv := downloadServer(t, report, bigGone)
	logs := &logSink{}
	r := newTestRunner(t, Options{Logf: logs.logf, MaxDownloadBytes: 64 << 10})
	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	click := func(name string) {
		t.Helper()
		if _, err := runAct(ctx, r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: name})); err != nil {
			t.Fatalf("click %s: %v", name, err)
		}
	}

	click("Get report")
	var list localapi.DownloadsResult
	waitfor.Until(t, 20*time.Second, "the download is listed", func() bool {
		list, err = r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID})
		return err == nil && len(list.Downloads) == 1
	})
	// An action's result names the download by the browser's id: it
	// addresses the download as well as d1 does.
	ob, err := r.browser(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed, _, _, _, _ := ob.dl.List("")
	guid := listed[0].GUID
	list, err = r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: guid, WaitMS: 20000})
	if err != nil {
		t.Fatal(err)
	}
	d := list.Downloads[0]
	if d.State != string(netguard.DownloadCompleted) || d.FileName != "report.txt" || d.ReceivedBytes != int64(len(report)) {
		t.Fatalf("download = %+v, want report.txt completed with %d bytes", d, len(report))
	}
	jail := ob.dl.Dir()
	raw, _ := json.Marshal(list)
	if strings.Contains(string(raw), jail) || strings.Contains(string(raw), "/") {
		t.Fatalf("the listing names a path: %s", raw)
	}
	if got, err := os.ReadDir(jail); err != nil || len(got) != 1 {
		t.Fatalf("jail holds %v, %v; want the one file", got, err)
	}
	if !strings.HasPrefix(jail, os.TempDir()) || strings.HasPrefix(jail, home) {
		t.Fatalf("the jail is not the browser's own: %s", jail)
	}

	// Over the bound: cancelled by webcodex (the server sees its request
	// end), reported, and nothing of it left in the jail.
	click("Get big")
	select {
	case <-bigGone:
	case <-time.After(30 * time.Second):
		t.Fatal("the over-bound download was never cancelled")
	}
	list, err = r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d2", WaitMS: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if big := list.Downloads[1]; big.State != string(netguard.DownloadCanceled) || big.Reason != netguard.ReasonOverCap || big.FileName != "big.bin" {
		t.Fatalf("over-bound download = %+v, want canceled over_cap", big)
	}
	waitfor.Until(t, 10*time.Second, "the cancelled file is removed", func() bool {
		got, _ := os.ReadDir(jail)
		return len(got) == 1
	})

	// Saving: only into an existing directory of the caller's, never over a file.
	if _, err := r.SaveDownload(ctx, localapi.SaveDownloadRequest{Browser: b.ID, ID: "d1", Dir: filepath.Join(home, "missing")}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("save into a missing directory = %v", err)
	}
	if _, err := r.SaveDownload(ctx, localapi.SaveDownloadRequest{Browser: b.ID, ID: "d2", Dir: home}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("save of a cancelled download = %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SaveDownload(ctx, localapi.SaveDownloadRequest{Browser: b.ID, ID: "d1", Dir: link}); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("save through a symbolic link = %v", err)
	}
	keep := t.TempDir()
	saved, err := r.SaveDownload(ctx, localapi.SaveDownloadRequest{Browser: b.ID, ID: "d1", Dir: keep})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(keep, "report.txt")); err != nil || string(got) != report || saved.Path != filepath.Join(keep, "report.txt") {
		t.Fatalf("saved %+v: %q, %v", saved, got, err)
	}

	// A second copy stays in the jail, unsaved: it goes with the browser.
	click("Get report")
	waitfor.Until(t, 20*time.Second, "the second download is listed", func() bool {
		l, err := r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID})
		return err == nil && len(l.Downloads) == 3
	})
	if _, err := r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d3", WaitMS: 20000}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadDir(jail); len(got) != 1 {
		t.Fatalf("jail holds %d files before close, want the unsaved one", len(got))
	}

	// A completed file that went from the jail behind webcodex's back is
	// reported gone on save, and listed cancelled (file_missing).
	click("Get report")
	list, err = r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d4", WaitMS: 20000})
	if err != nil || len(list.Downloads) != 4 || list.Downloads[3].State != string(netguard.DownloadCompleted) {
		t.Fatalf("the third copy = %+v, %v; want d4 completed", list.Downloads, err)
	}
	gone, _, _, _, _ := ob.dl.List("d4")
	if err := os.Remove(filepath.Join(jail, gone[3].GUID)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SaveDownload(ctx, localapi.SaveDownloadRequest{Browser: b.ID, ID: "d4", Dir: keep}); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("save of a file gone from the jail = %v, want not_found", err)
	}
	list, err = r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d4"})
	if d := list.Downloads[3]; err != nil || d.State != string(netguard.DownloadCanceled) || d.Reason != netguard.ReasonFileError {
		t.Fatalf("a download whose file went = %+v, %v; want canceled, file_missing", d, err)
	}
	if got, _ := os.ReadDir(jail); len(got) != 1 {
		t.Fatalf("jail holds %d files before close, want the unsaved one", len(got))
	}
	if _, err := r.Close(ctx, localapi.BrowserRequest{Browser: b.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jail); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the jail outlived the ephemeral browser: %v", err)
	}
	if _, err := os.Stat(filepath.Join(keep, "report.txt")); err != nil {
		t.Fatalf("the saved file went with the browser: %v", err)
	}
	// Nothing reached the HOME the Runner ran with.
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Fatalf("HOME holds %v after the session, want nothing (no ~/Downloads)", entries)
	}
}

// TestDownloadsWaitBound: a wait for a download that does not finish ends
// at its bound with a timeout refusal, and an unknown id is not found.
func TestDownloadsWaitBound(t *testing.T) {
	t.Parallel() // its own Runner and browser
	bigGone := make(chan struct{})
	srv := downloadServer(t, "x", bigGone) // closed after the browser: its request ends first
	h := newHarness(t)
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d9"}); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("unknown download = %v", err)
	}
	// Under the default bound the big file never ends: the wait does.
	if _, err := runAct(ctx, h.r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: "Get big"})); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the download is listed", func() bool {
		l, err := h.r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID})
		return err == nil && len(l.Downloads) == 1
	})
	if _, err := h.r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, WaitMS: 300}); !fsm.IsCode(err, fsm.Timeout) {
		t.Fatalf("wait on an endless download = %v, want %s", err, fsm.Timeout)
	}
}

// TestManagedDownloadsGoAtClose: a managed profile's jail is beside the
// profile, and what was not saved is removed at close (the profile stays).
func TestManagedDownloadsGoAtClose(t *testing.T) {
	t.Parallel() // its own Runner and browser
	bigGone := make(chan struct{})
	srv := downloadServer(t, "kept?", bigGone)
	h := newHarness(t)
	ctx := context.Background()
	headless := true
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Managed: "dl", Headless: &headless})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runAct(ctx, h.r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: "Get report"})); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the download is listed", func() bool {
		l, err := h.r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID})
		return err == nil && len(l.Downloads) == 1
	})
	if _, err := h.r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, ID: "d1", WaitMS: 20000}); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(h.r.opts.StateDir, "browser", "profiles", "dl")
	jail := filepath.Join(root, "downloads")
	if got, err := os.ReadDir(jail); err != nil || len(got) != 1 {
		t.Fatalf("managed jail holds %v, %v; want the one file", got, err)
	}
	if _, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: b.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jail); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the unsaved download outlived its run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		t.Fatalf("the profile went with the downloads: %v", err)
	}
}

// TestParallelDownloadsAreBounded: eight downloads that would never end
// start at once under a 4 MiB bound. A download is admitted only while a
// whole bound for each one in progress still fits the jail's bound, so at
// most four are written at a time; the others are cancelled at their start
// (jail_full), the admitted ones once a progress report passes the bound
// (over_cap). Each ends cancelled, its request ends, the jail is empty
// after, and the browser still answers. A sampler reads the jail as fast as
// it can while they run and logs the largest file and the largest jail it
// saw against their bounds (the overshoot: Chromium writes the file itself,
// and a cancel lands after the report that passes the bound).
func TestParallelDownloadsAreBounded(t *testing.T) {
	t.Parallel() // its own Runner and browser
	const limit, n = 4 << 20, 8
	var served sync.WaitGroup
	mux := http.NewServeMux()
	var links strings.Builder
	for i := range n {
		fmt.Fprintf(&links, `<a href="/huge%d">Get %d</a> `, i, i)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>files</title>`+links.String())
	})
	for i := range n {
		mux.HandleFunc(fmt.Sprintf("/huge%d", i), func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			defer served.Done()
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="huge%d.bin"`, i))
			chunk := make([]byte, 256<<10)
			for { // no length sent, never ends by itself
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := newTestRunner(t, Options{Logf: (&logSink{}).logf, MaxDownloadBytes: limit})
	ctx := context.Background()
	b, err := r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := r.browser(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	jail := ob.dl.Dir()

	// The sampler: the largest file and the largest jail it ever saw.
	var maxFile, maxJail atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			entries, _ := os.ReadDir(jail)
			var sum int64
			for _, e := range entries {
				if fi, err := e.Info(); err == nil {
					sum += fi.Size()
					if fi.Size() > maxFile.Load() {
						maxFile.Store(fi.Size())
					}
				}
			}
			if sum > maxJail.Load() {
				maxJail.Store(sum)
			}
		}
	}()
	for i := range n {
		if _, err := runAct(ctx, r, op.Click, clickOn(p.ID, localapi.Target{Role: "link", Name: fmt.Sprintf("Get %d", i)})); err != nil {
			t.Fatalf("click %d: %v", i, err)
		}
	}
	list, err := r.Downloads(ctx, localapi.DownloadsRequest{Browser: b.ID, WaitMS: 30000})
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-sampled
	refused := 0
	for _, d := range list.Downloads {
		if d.State != string(netguard.DownloadCanceled) || (d.Reason != netguard.ReasonOverCap && d.Reason != netguard.ReasonJailFull) {
			t.Errorf("download %+v: want canceled, over_cap or jail_full", d)
		}
		if d.Reason == netguard.ReasonJailFull {
			refused++
		}
	}
	if len(list.Downloads) != n {
		t.Errorf("%d downloads listed, want %d", len(list.Downloads), n)
	}
	t.Logf("largest file seen %.2f× its bound, largest jail %.2f× its bound; %d of %d refused at their start",
		float64(maxFile.Load())/limit, float64(maxJail.Load())/(netguard.JailFactor*limit), refused, n)
	done := make(chan struct{})
	go func() { served.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled download's request never ended")
	}
	waitfor.Until(t, 10*time.Second, "the jail is emptied", func() bool {
		got, _ := os.ReadDir(jail)
		return len(got) == 0
	})
	if _, err := runOp(ctx, r, op.Eval, op.EvalIn{OnPage: op.OnPage{Page: p.ID}, Expr: "1+1"}); err != nil {
		t.Fatalf("the browser is not answering after its writes hit the bound: %v", err)
	}
}

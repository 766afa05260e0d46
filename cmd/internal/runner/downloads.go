package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/netguard"
	"github.com/webcodex/webcodex/platform"
)

// Downloads. An owned browser's downloads go to its jail (netguard.Jail):
// an ephemeral browser's inside its launch directory, a managed profile's
// beside the profile (a managed profile keeps its logins, not its
// downloads, which nothing could reach after the run). An attached
// browser's downloads are the person's own business: webcodex neither
// redirects nor lists them.

// DefaultMaxDownloadBytes bounds one download when Options.MaxDownloadBytes
// is zero; a larger one is cancelled.
const DefaultMaxDownloadBytes = netguard.DefaultMaxDownloadBytes

// maxDownloadWait bounds a wait for downloads to finish.
const maxDownloadWait = 40 * time.Second

// jailDir is where b's downloads go: inside the launch directory of an
// ephemeral browser, beside the profile of a managed one.
func (b *Browser) jailDir(launchDir string) (string, error) {
	if b.managed() {
		dir := filepath.Join(b.r.opts.StateDir, "browser", "profiles", b.profile, "downloads")
		if err := os.RemoveAll(dir); err != nil { // what a run that died left
			return "", fmt.Errorf("runner: download directory: %w", err)
		}
		return dir, platform.EnsurePrivateDir(dir)
	}
	if launchDir == "" {
		return "", errors.New("runner: downloads: no launch directory")
	}
	dir := filepath.Join(launchDir, "downloads")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("runner: download directory: %w", err)
	}
	return dir, nil
}

// downloadCap is the bound of one download.
func (r *Runner) downloadCap() int64 {
	if r.opts.MaxDownloadBytes > 0 {
		return r.opts.MaxDownloadBytes
	}
	return DefaultMaxDownloadBytes
}

// jailDownloads points an owned browser's downloads at its jail before any
// page can start one (at launch, on its one connection).
func (b *Browser) jailDownloads(ctx context.Context, launchDir string) error {
	if b.attached() {
		return nil // the person's browser: its downloads are left alone
	}
	dir, err := b.jailDir(launchDir)
	if err != nil {
		return err
	}
	// The action in progress on the page that started a download reports
	// it; each page ignores frames not its own.
	began := func(ev browser.EventDownloadWillBegin) {
		for _, p := range b.pageList() {
			p.surf.NoteDownload(string(ev.FrameID), ev.GUID, ev.URL, ev.SuggestedFilename)
		}
	}
	dl, err := netguard.StartJail(ctx, b.c(), dir, b.r.downloadCap(), began)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.dl = dl
	b.mu.Unlock()
	return nil
}

// ownedDownloads returns b's jail, or the refusal for a browser without one.
func (b *Browser) ownedDownloads() (*netguard.Jail, error) {
	if b.attached() {
		return nil, fsm.Refuse(fsm.RouteUnavailable, "an attached browser's downloads are the person's own; webcodex neither redirects nor lists them")
	}
	b.mu.Lock()
	dl := b.dl
	b.mu.Unlock()
	if dl == nil {
		return nil, fsm.Refuse(fsm.RouteUnavailable, "this browser has no download directory")
	}
	return dl, nil
}

// Downloads lists an owned browser's downloads, after waiting (bounded)
// for them to end when asked.
func (r *Runner) Downloads(ctx context.Context, req localapi.DownloadsRequest) (_ localapi.DownloadsResult, err error) {
	ctx, settle := r.call(ctx, "", "waiting for downloads", r.callBound())
	defer func() { err = settle(err) }()
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.DownloadsResult{}, err
	}
	dl, err := b.ownedDownloads()
	if err != nil {
		return localapi.DownloadsResult{}, err
	}
	if req.WaitMS < 0 {
		return localapi.DownloadsResult{}, fsm.Refuse(fsm.InvalidArgument, "waitMs is not negative")
	}
	wait := min(time.Duration(req.WaitMS)*time.Millisecond, maxDownloadWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		list, ended, found, upcoming, changed := dl.List(req.ID)
		switch {
		case !found && (!upcoming || req.WaitMS == 0):
			return localapi.DownloadsResult{}, fsm.Refuse(fsm.NotFound, "no such download")
		case found && (ended || req.WaitMS == 0):
			return localapi.DownloadsResult{Browser: b.id, Downloads: downloadInfos(list)}, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			if !found {
				return localapi.DownloadsResult{}, fsm.Refusef(fsm.Timeout, "download %s had not begun after %s", req.ID, wait)
			}
			return localapi.DownloadsResult{}, fsm.Refusef(fsm.Timeout, "downloads still in progress after %s; list them again or wait longer", wait)
		case <-ctx.Done():
			return localapi.DownloadsResult{}, fsm.Refuse(fsm.Timeout, "downloads still in progress at the call's bound").WithCause(ctx.Err())
		}
	}
}

// downloadInfos is the wire's form of a jail's listing.
func downloadInfos(list []netguard.Download) []localapi.DownloadInfo {
	out := make([]localapi.DownloadInfo, 0, len(list))
	for _, d := range list {
		out = append(out, localapi.DownloadInfo{ID: d.ID, FileName: d.FileName, State: string(d.State), ReceivedBytes: d.Received, TotalBytes: d.Total, Reason: d.Reason})
	}
	return out
}

// SaveDownload moves a completed download out of the jail into a directory
// the caller names (netguard.Jail.Save says which).
func (r *Runner) SaveDownload(ctx context.Context, req localapi.SaveDownloadRequest) (_ localapi.SaveDownloadResult, err error) {
	defer func() { r.auditBrowser(ctx, req.Browser, "save_download", err) }()
	b, err := r.browser(req.Browser)
	if err != nil {
		return localapi.SaveDownloadResult{}, err
	}
	dl, err := b.ownedDownloads()
	if err != nil {
		return localapi.SaveDownloadResult{}, err
	}
	saved, err := dl.Save(req.ID, req.Dir)
	if err != nil {
		return localapi.SaveDownloadResult{}, err
	}
	return localapi.SaveDownloadResult{Browser: b.id, ID: saved.ID, Path: saved.Path, Bytes: saved.Bytes}, nil
}

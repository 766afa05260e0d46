package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/fsm"
)

// The download jail. A browser webcodex owns saves only into its jail, a
// private directory the Runner names for it. A file lives there while its
// browser runs: what the caller did not save elsewhere is removed at
// close. Files are named by the browser's download id (allowAndName), so a
// site's suggested name never becomes a path. Each download's life is its
// machine (DownloadSpec); the jail owns those machines.
const (
	// DefaultMaxDownloadBytes bounds one download when the Runner names no
	// other bound; a larger one is cancelled.
	DefaultMaxDownloadBytes = 256 << 20
	// JailFactor bounds the jail: all downloads together hold at most this
	// many times the per-download bound.
	JailFactor = 4
	// maxDownloads bounds the downloads one browser tracks; later ones are
	// cancelled (too_many).
	maxDownloads = 256
	// cancelBound bounds one Browser.cancelDownload, and each step of a
	// download's machine.
	cancelBound = 5 * time.Second
)

// Why webcodex cancelled a download.
const (
	ReasonOverCap   = "over_cap"
	ReasonJailFull  = "jail_full"
	ReasonTooMany   = "too_many"
	ReasonFileError = "file_missing"
)

// Jail is one owned browser's download directory and what went into it.
type Jail struct {
	dir  string // never reported
	cap  int64  // per download
	conn *cdp.Conn

	mu      sync.Mutex // guards what follows and each download's fields
	byGUID  map[string]*download
	order   []*download   // in the order they began
	changed chan struct{} // closed and replaced at every change
	seq     int

	onBegin func(browser.EventDownloadWillBegin) // tells the pages
	quit    chan struct{}                        // ends the follower
	closing sync.Once
	wg      sync.WaitGroup
}

// Download is one download as a listing shows it: no path, ever.
type Download struct {
	ID       string // d1, d2, … in the order they began
	GUID     string // the browser's id, which an action's result reports
	FileName string // the site's suggestion, made a plain file name
	// State is the machine's, with cancelling listed as in_progress: its
	// file is there until the browser confirms.
	State    DownloadState
	Reason   string // why webcodex cancelled it
	Received int64
	Total    int64
}

// downloadOwner drives one download's machine.
type downloadOwner = *fsm.Owner[DownloadState, DownloadTrigger, DownloadFacts]

// download is one download and its machine. Its fields are guarded by the
// jail's mu; the machine guards its own state.
type download struct {
	jail           *Jail
	id, guid, name string
	reason         string
	received       int64
	total          int64
	owner          downloadOwner
}

func (dl *Jail) newDownload(id, guid, name string) *download {
	d := &download{jail: dl, id: id, guid: guid, name: name}
	d.owner = fsm.NewOwner(DownloadSpec, fsm.Effects[DownloadState, DownloadTrigger]{
		EffectCancelDownload: d.cancel,
		EffectRemoveFile:     d.removeFile,
	})
	return d
}

// cancel is cancel_download: the browser is asked to cancel the download.
// Once it accepts, the download is cancelled here too, so a listing right
// after says so even if the browser's own report is late; a cancel it does
// not accept (the connection is gone) leaves the download cancelling.
func (d *download) cancel(ctx context.Context, _ fsm.Step[DownloadState, DownloadTrigger]) (DownloadTrigger, error) {
	if _, err := cdproto.Call(ctx, d.jail.conn.Browser(), browser.CancelDownload, browser.CancelDownloadParams{GUID: d.guid}); err != nil {
		return "", nil
	}
	return DownloadCancelled, nil
}

// removeFile is remove_file: what the download left in the jail goes.
func (d *download) removeFile(context.Context, fsm.Step[DownloadState, DownloadTrigger]) (DownloadTrigger, error) {
	os.Remove(filepath.Join(d.jail.dir, d.guid))
	os.Remove(filepath.Join(d.jail.dir, d.guid+".crdownload"))
	return "", nil
}

// fire fires t at d's machine; a refusal means t does not apply in d's
// state (a late or repeated report) and changes nothing.
func (d *download) fire(t DownloadTrigger) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelBound)
	defer cancel()
	_, _ = d.owner.Fire(ctx, t)
}

// named reports whether id names d: its listing id (d1), or the browser's
// id that an action's result reports for the download it started.
func (d *download) named(id string) bool { return id == d.id || id == d.guid }

// listedState is d's state as a listing names it.
func listedState(st DownloadState) DownloadState {
	if st == DownloadCancelling {
		return DownloadInProgress
	}
	return st
}

func (d *download) info() Download {
	return Download{ID: d.id, GUID: d.guid, FileName: d.name, State: listedState(d.owner.State()), Received: d.received, Total: d.total, Reason: d.reason}
}

// holding reports whether d's file is (or may still be) in the jail.
func holding(st DownloadState) bool {
	return st == DownloadInProgress || st == DownloadCancelling || st == DownloadCompleted
}

// StartJail sets the browser's download behaviour to dir, a private
// directory of the caller's, with limit bytes per download, and follows its
// downloads until the connection ends or Close: the events are subscribed
// first, so none is missed. onBegin hears each download admitted.
func StartJail(ctx context.Context, conn *cdp.Conn, dir string, limit int64, onBegin func(browser.EventDownloadWillBegin)) (*Jail, error) {
	dl := &Jail{dir: dir, cap: limit, conn: conn, byGUID: map[string]*download{}, changed: make(chan struct{}), quit: make(chan struct{}), onBegin: onBegin}
	began, stopBegan := conn.Browser().Subscribe(browser.DownloadWillBegin.Method)
	progress, stopProgress := conn.Browser().Subscribe(browser.DownloadProgress.Method)
	_, err := cdproto.Call(ctx, conn.Browser(), browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: new(true),
	})
	if err != nil {
		stopBegan()
		stopProgress()
		return nil, fmt.Errorf("netguard: jail downloads: %w", err)
	}
	dl.wg.Add(1)
	go func() {
		defer dl.wg.Done()
		defer stopBegan()
		defer stopProgress()
		dl.follow(began, progress)
	}()
	return dl, nil
}

// Close stops following downloads, waits for the follower and removes the
// jail with what the caller did not save; nil-safe. The browser is gone by
// then: nothing writes there any more.
func (dl *Jail) Close() {
	if dl == nil {
		return
	}
	dl.closing.Do(func() { close(dl.quit) })
	dl.wg.Wait()
	os.RemoveAll(dl.dir)
}

// follow records downloads as the browser reports them and cancels those
// over the bounds, until the connection ends or the browser is torn down.
// It alone fires over_bound, outside the jail's lock: the cancel it runs
// waits for the browser.
func (dl *Jail) follow(began, progress <-chan jsonv2.Value) {
	var measure <-chan time.Time // armed while a download is in progress
	for {
		if measure == nil && dl.writing() {
			measure = time.After(diskPoll)
		}
		select {
		case <-measure:
			measure = nil
			for _, d := range dl.overOnDisk() {
				dl.overBound(d)
			}
		case raw, ok := <-began:
			if !ok {
				return
			}
			var ev browser.EventDownloadWillBegin
			if jsonv2.Unmarshal(raw, &ev) == nil {
				switch d, reason := dl.begin(ev); {
				case reason == ReasonTooMany:
					dl.cancelUnlisted(ev.GUID)
				case reason != "":
					dl.overBound(d)
				case dl.onBegin != nil:
					dl.onBegin(ev)
				}
			}
		case raw, ok := <-progress:
			if !ok {
				return
			}
			var ev browser.EventDownloadProgress
			if jsonv2.Unmarshal(raw, &ev) == nil {
				if d, unlisted := dl.progress(ev); unlisted {
					dl.cancelUnlisted(ev.GUID)
				} else if d != nil {
					dl.overBound(d)
				}
			}
		case <-dl.conn.Done():
			return
		case <-dl.quit:
			return
		}
	}
}

// diskPoll is how often the jail's files are measured while a download is
// written: Chromium reports progress less often than it writes, and a
// cancel that waits for its report lets the file grow past its bound.
const diskPoll = 2 * time.Millisecond

// writing reports whether a download is in progress and not yet being
// cancelled.
func (dl *Jail) writing() bool {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for _, d := range dl.order {
		if d.owner.State() == DownloadInProgress {
			return true
		}
	}
	return false
}

// overOnDisk measures the files in the jail and returns the downloads to
// cancel, their reasons set: each in progress whose file is past the
// bound, and, while the files together are past the jail's bound, the
// largest in progress.
func (dl *Jail) overOnDisk() []*download {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	var out []*download
	var total int64
	sizes := map[*download]int64{} // in progress, not yet over
	for _, d := range dl.order {
		st := d.owner.State()
		if !holding(st) {
			continue
		}
		var n int64
		for _, name := range []string{d.guid, d.guid + ".crdownload"} {
			if fi, err := os.Lstat(filepath.Join(dl.dir, name)); err == nil {
				n = max(n, fi.Size())
			}
		}
		total += n
		if st != DownloadInProgress {
			continue
		}
		if n > dl.cap {
			d.reason = ReasonOverCap
			out = append(out, d)
			continue
		}
		sizes[d] = n
	}
	for total > JailFactor*dl.cap {
		var big *download
		for d := range sizes {
			if big == nil || sizes[d] > sizes[big] {
				big = d
			}
		}
		if big == nil {
			break
		}
		big.reason = ReasonJailFull
		out = append(out, big)
		total -= sizes[big]
		delete(sizes, big)
	}
	return out
}

// overBound fires over_bound at d, whose reason is set: its machine asks
// the browser to cancel it (cancel_download) and, once the browser
// accepts, removes its file.
func (dl *Jail) overBound(d *download) {
	d.fire(DownloadOverBound)
	dl.mu.Lock()
	dl.notifyLocked()
	dl.mu.Unlock()
}

// cancelUnlisted cancels a download the jail refused to list (too_many):
// it has no life here, only its cancel.
func (dl *Jail) cancelUnlisted(guid string) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelBound)
	defer cancel()
	_, _ = cdproto.Call(ctx, dl.conn.Browser(), browser.CancelDownload, browser.CancelDownloadParams{GUID: guid})
}

// begin records a new download; a reason is returned when it must be
// cancelled at once (too_many: not listed, d is nil).
func (dl *Jail) begin(ev browser.EventDownloadWillBegin) (d *download, reason string) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if _, dup := dl.byGUID[ev.GUID]; dup || ev.GUID == "" {
		return nil, ""
	}
	dl.seq++
	if len(dl.order) >= maxDownloads {
		// Not listed (the list is bounded), only cancelled.
		return nil, ReasonTooMany
	}
	// Each download in progress may grow to the bound (the kernel stops it
	// there): one is admitted only while every one of them could, beside
	// what completed ones hold, and the jail still stay within its bound.
	full := dl.reservedLocked()+dl.cap > JailFactor*dl.cap
	d = dl.newDownload(fmt.Sprintf("d%d", dl.seq), ev.GUID, safeFileName(ev.SuggestedFilename))
	dl.byGUID[ev.GUID] = d
	dl.order = append(dl.order, d)
	dl.notifyLocked()
	if full {
		d.reason = ReasonJailFull
		return d, ReasonJailFull
	}
	return d, ""
}

// reservedLocked is what the jail may come to hold without admitting
// another download: a whole bound for each download in progress (or being
// cancelled, until its file is gone), what each completed one holds.
func (dl *Jail) reservedLocked() int64 {
	var n int64
	for _, d := range dl.order {
		switch d.owner.State() {
		case DownloadInProgress, DownloadCancelling:
			n += dl.cap
		case DownloadCompleted:
			n += d.received
		}
	}
	return n
}

// progress applies a progress report: the browser's end of a download goes
// to its machine at once; a download in progress past a bound is returned
// with its reason set, for over_bound. unlisted says the report is of a
// download refused at its start (too_many), which is cancelled again.
func (dl *Jail) progress(ev browser.EventDownloadProgress) (over *download, unlisted bool) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	d := dl.byGUID[ev.GUID]
	if d == nil {
		// Begin and progress arrive on two subscriptions: a report may come
		// before its download's begin, which lists it. Only a full listing
		// (too_many) means the download was refused.
		return nil, ev.State == browser.DownloadProgressStateInProgress && len(dl.order) >= maxDownloads
	}
	defer dl.notifyLocked()
	d.received, d.total = int64(ev.ReceivedBytes), int64(ev.TotalBytes)
	st := d.owner.State()
	switch ev.State {
	case browser.DownloadProgressStateCompleted:
		// Finished between two reports past its bound: it is removed all
		// the same, and reported as if cancelled.
		within := d.received <= dl.cap
		d.owner.SetFacts(func(f *DownloadFacts) { f.WithinBound = within })
		if st == DownloadInProgress && !within {
			d.reason = ReasonOverCap
		}
		d.fire(DownloadFinished)
		return nil, false
	case browser.DownloadProgressStateCanceled:
		if st == DownloadInProgress && d.reason == "" && (d.received >= dl.cap || d.total > dl.cap) {
			d.reason = ReasonOverCap // its write stopped at the bound (EFBIG)
		}
		d.fire(DownloadCancelled)
		return nil, false
	}
	if st != DownloadInProgress {
		return nil, false
	}
	switch {
	case d.received > dl.cap || d.total > dl.cap:
		d.reason = ReasonOverCap
	case dl.heldLocked() > JailFactor*dl.cap:
		d.reason = ReasonJailFull
	default:
		return nil, false
	}
	return d, false
}

// heldLocked is what the jail holds: every download not cancelled or saved.
func (dl *Jail) heldLocked() int64 {
	var n int64
	for _, d := range dl.order {
		if holding(d.owner.State()) {
			n += d.received
		}
	}
	return n
}

func (dl *Jail) notifyLocked() {
	close(dl.changed)
	dl.changed = make(chan struct{})
}

// List returns the downloads, whether the one named id (or, with id
// empty, every one) has ended, whether id names one, and the channel that
// says the next change. An id the jail has not issued yet ("d5" after d4)
// is not found but upcoming: a caller that clicked a link and asks for its
// download before Chromium announced it may wait for it.
func (dl *Jail) List(id string) (list []Download, ended, found, upcoming bool, changed <-chan struct{}) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	var n int
	if _, err := fmt.Sscanf(id, "d%d", &n); err == nil && id == fmt.Sprintf("d%d", n) && n > dl.seq {
		upcoming = true
	}
	list = make([]Download, 0, len(dl.order))
	ended, found = true, id == ""
	for _, d := range dl.order {
		info := d.info()
		list = append(list, info)
		if id == "" || d.named(id) {
			found = found || d.named(id)
			if info.State == DownloadInProgress {
				ended = false
			}
		}
	}
	return list, ended, found, upcoming, dl.changed
}

// Saved is where Save put a download: the directory the caller named.
type Saved struct {
	ID    string
	Path  string
	Bytes int64
}

// Save moves the completed download named id out of the jail into dir,
// which must exist, be a real directory (not a link) and belong to the
// user webcodex runs as. An existing file is never replaced. The machine
// records what the move found (moved, or file_gone).
func (dl *Jail) Save(id, dir string) (Saved, error) {
	if err := callersDir(dir); err != nil {
		return Saved{}, err
	}
	dl.mu.Lock()
	defer dl.mu.Unlock()
	var d *download
	for _, x := range dl.order {
		if x.named(id) {
			d = x
		}
	}
	if d == nil {
		return Saved{}, fsm.Refuse(fsm.NotFound, "no such download")
	}
	if st := d.owner.State(); st != DownloadCompleted {
		return Saved{}, fsm.Refusef(fsm.InvalidArgument, "the download is %s; only a completed one is saved", listedState(st))
	}
	dst := filepath.Join(dir, d.name)
	n, err := moveFile(filepath.Join(dl.dir, d.guid), dst)
	if errors.Is(err, fs.ErrExist) {
		return Saved{}, fsm.Refusef(fsm.InvalidArgument, "%s already exists there; it is never replaced", d.name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		d.reason = ReasonFileError
		d.fire(DownloadFileGone)
		dl.notifyLocked()
		return Saved{}, fsm.Refuse(fsm.NotFound, "the downloaded file is gone")
	}
	if err != nil {
		return Saved{}, fmt.Errorf("netguard: save download: %w", err)
	}
	d.fire(DownloadMoved)
	dl.notifyLocked()
	return Saved{ID: d.id, Path: dst, Bytes: n}, nil
}

// Dir is the jail's directory, for the Runner's own checks and tests;
// it never reaches a caller.
func (dl *Jail) Dir() string { return dl.dir }

// callersDir checks a directory a caller wants a file saved to.
func callersDir(dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return fsm.Refuse(fsm.InvalidArgument, "dir is an absolute path to an existing directory")
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fsm.Refuse(fsm.InvalidArgument, "dir does not exist").WithCause(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fsm.Refuse(fsm.InvalidArgument, "dir is not a directory (a symbolic link is not followed)")
	case !ok || int(st.Uid) != os.Getuid():
		return fsm.Refuse(fsm.PolicyDenied, "dir belongs to another user")
	case fi.Mode().Perm()&0o002 != 0:
		return fsm.Refuse(fsm.PolicyDenied, "dir is writable by every user")
	}
	return nil
}

// moveFile moves src to dst without replacing dst: a hard link where both
// are on one file system, a copy otherwise; src is removed after.
func moveFile(src, dst string) (int64, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return 0, err
	}
	if err := os.Link(src, dst); err == nil {
		return fi.Size(), os.Remove(src)
	} else if errors.Is(err, fs.ErrExist) {
		return 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return 0, err
	}
	return n, os.Remove(src)
}

// slashLookalikes are characters a file name may show as a path separator:
// each becomes '_' so that no listed name reads as a path.
var slashLookalikes = strings.NewReplacer(
	"\u2215", "_", // ∕ division slash
	"\u2044", "_", // ⁄ fraction slash
	"\uff0f", "_", // ／ fullwidth solidus
	"\u29f8", "_", // ⧸ big solidus
	"\u2571", "_", // ╱ box drawings diagonal
	"\uff3c", "_", // ＼ fullwidth reverse solidus
	"\u2216", "_", // ∖ set minus
	"\u29f5", "_", // ⧵ reverse solidus operator
	"\u29f9", "_", // ⧹ big reverse solidus
)

// safeFileName turns a site's suggested name into one plain file name,
// before it reaches the listing or the disk: no directories, no character
// that shows as a separator (slash look-alikes become '_'), no control or
// format character (bidi overrides and isolates, zero-width marks: a name
// that reads differently from what it is), no leading dot, at most 200
// bytes; "download" when nothing is left.
func safeFileName(s string) string {
	s = filepath.Base(strings.ReplaceAll(s, `\`, "/"))
	s = slashLookalikes.Replace(s)
	s = strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || r == '/' || r == unicode.ReplacementChar ||
			r == '\u2028' || r == '\u2029' {
			return -1
		}
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimLeft(strings.TrimSpace(s), ".")
	for len(s) > 200 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" {
		return "download"
	}
	return s
}

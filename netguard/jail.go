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
// site's suggested name never becomes a path.
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
	// cancelBound bounds one Browser.cancelDownload.
	cancelBound = 5 * time.Second
)

// Download states and the reasons webcodex cancels one.
const (
	StateInProgress = "in_progress"
	StateCompleted  = "completed"
	StateCanceled   = "canceled"
	StateSaved      = "saved"

	ReasonOverCap   = "over_cap"
	ReasonJailFull  = "jail_full"
	ReasonTooMany   = "too_many"
	ReasonFileError = "file_missing"
)

// Jail is one owned browser's download directory and what went into it.
type Jail struct {
	dir string // never reported
	cap int64  // per download

	mu      sync.Mutex
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
	State    string
	Reason   string // why webcodex cancelled it
	Received int64
	Total    int64
}

type download struct {
	id, guid, name string
	state, reason  string
	received       int64
	total          int64
	cancelling     bool
}

// named reports whether id names d: its listing id (d1), or the browser's
// id that an action's result reports for the download it started.
func (d *download) named(id string) bool { return id == d.id || id == d.guid }

func (d *download) info() Download {
	return Download{ID: d.id, GUID: d.guid, FileName: d.name, State: d.state, Received: d.received, Total: d.total, Reason: d.reason}
}

// StartJail sets the browser's download behaviour to dir, a private
// directory of the caller's, with limit bytes per download, and follows its
// downloads until the connection ends or Close: the events are subscribed
// first, so none is missed. onBegin hears each download admitted.
func StartJail(ctx context.Context, conn *cdp.Conn, dir string, limit int64, onBegin func(browser.EventDownloadWillBegin)) (*Jail, error) {
	dl := &Jail{dir: dir, cap: limit, byGUID: map[string]*download{}, changed: make(chan struct{}), quit: make(chan struct{}), onBegin: onBegin}
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
		dl.follow(conn, began, progress)
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
func (dl *Jail) follow(conn *cdp.Conn, began, progress <-chan jsonv2.Value) {
	var measure <-chan time.Time // armed while a download is in progress
	for {
		if measure == nil && dl.writing() {
			measure = time.After(diskPoll)
		}
		select {
		case <-measure:
			measure = nil
			for _, c := range dl.overOnDisk() {
				dl.cancel(conn, c.guid, c.reason)
			}
		case raw, ok := <-began:
			if !ok {
				return
			}
			var ev browser.EventDownloadWillBegin
			if jsonv2.Unmarshal(raw, &ev) == nil {
				if reason := dl.begin(ev); reason != "" {
					dl.cancel(conn, ev.GUID, reason)
				} else if dl.onBegin != nil {
					dl.onBegin(ev)
				}
			}
		case raw, ok := <-progress:
			if !ok {
				return
			}
			var ev browser.EventDownloadProgress
			if jsonv2.Unmarshal(raw, &ev) == nil {
				if reason := dl.progress(ev); reason != "" {
					dl.cancel(conn, ev.GUID, reason)
				}
			}
		case <-conn.Done():
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
		if d.state == StateInProgress && !d.cancelling {
			return true
		}
	}
	return false
}

type overBound struct{ guid, reason string }

// overOnDisk measures the files in the jail and returns the downloads to
// cancel: each in progress whose file is past the bound, and, while the
// files together are past the jail's bound, the largest in progress.
func (dl *Jail) overOnDisk() []overBound {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	var out []overBound
	var total int64
	sizes := map[*download]int64{}
	for _, d := range dl.order {
		if d.state != StateInProgress && d.state != StateCompleted {
			continue
		}
		var n int64
		for _, name := range []string{d.guid, d.guid + ".crdownload"} {
			if fi, err := os.Lstat(filepath.Join(dl.dir, name)); err == nil {
				n = max(n, fi.Size())
			}
		}
		total += n
		if d.state == StateInProgress && !d.cancelling {
			sizes[d] = n
			if n > dl.cap {
				d.cancelling, d.reason = true, ReasonOverCap
				out = append(out, overBound{d.guid, ReasonOverCap})
			}
		}
	}
	for total > JailFactor*dl.cap {
		var big *download
		for d := range sizes {
			if !d.cancelling && (big == nil || sizes[d] > sizes[big]) {
				big = d
			}
		}
		if big == nil {
			break
		}
		big.cancelling, big.reason = true, ReasonJailFull
		out = append(out, overBound{big.guid, ReasonJailFull})
		total -= sizes[big]
	}
	return out
}

// begin records a new download; a reason is returned when it must be
// cancelled at once.
func (dl *Jail) begin(ev browser.EventDownloadWillBegin) string {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if _, dup := dl.byGUID[ev.GUID]; dup || ev.GUID == "" {
		return ""
	}
	dl.seq++
	d := &download{id: fmt.Sprintf("d%d", dl.seq), guid: ev.GUID, name: safeFileName(ev.SuggestedFilename), state: StateInProgress}
	if len(dl.order) >= maxDownloads {
		// Not listed (the list is bounded), only cancelled.
		return ReasonTooMany
	}
	// Each download in progress may grow to the bound (the kernel stops it
	// there): one is admitted only while every one of them could, beside
	// what completed ones hold, and the jail still stay within its bound.
	full := dl.reservedLocked()+dl.cap > JailFactor*dl.cap
	dl.byGUID[ev.GUID] = d
	dl.order = append(dl.order, d)
	dl.notifyLocked()
	if full {
		d.cancelling, d.reason = true, ReasonJailFull
		return ReasonJailFull
	}
	return ""
}

// reservedLocked is what the jail may come to hold without admitting
// another download: a whole bound for each download in progress (or being
// cancelled, until its file is gone), what each completed one holds.
func (dl *Jail) reservedLocked() int64 {
	var n int64
	for _, d := range dl.order {
		switch d.state {
		case StateInProgress:
			n += dl.cap
		case StateCompleted:
			n += d.received
		}
	}
	return n
}

// progress applies a progress event; a reason is returned when the
// download went over a bound and must be cancelled.
func (dl *Jail) progress(ev browser.EventDownloadProgress) string {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	d := dl.byGUID[ev.GUID]
	if d == nil {
		if ev.State == browser.DownloadProgressStateInProgress {
			return ReasonTooMany // one begin refused: keep cancelling it
		}
		return ""
	}
	defer dl.notifyLocked()
	d.received, d.total = int64(ev.ReceivedBytes), int64(ev.TotalBytes)
	switch ev.State {
	case browser.DownloadProgressStateCompleted:
		if d.state != StateInProgress {
			return ""
		}
		d.state = StateCompleted
		if d.received > dl.cap {
			// Finished between two progress reports: it is removed all the
			// same, and reported as if cancelled.
			d.state, d.reason = StateCanceled, ReasonOverCap
			dl.removeFileLocked(d)
		}
		return ""
	case browser.DownloadProgressStateCanceled:
		d.state = StateCanceled
		if d.reason == "" && (d.received >= dl.cap || d.total > dl.cap) {
			d.reason = ReasonOverCap // its write stopped at the bound (EFBIG)
		}
		dl.removeFileLocked(d)
		return ""
	}
	if d.cancelling {
		return ""
	}
	var reason string
	switch {
	case d.received > dl.cap || d.total > dl.cap:
		reason = ReasonOverCap
	case dl.heldLocked() > JailFactor*dl.cap:
		reason = ReasonJailFull
	}
	if reason != "" {
		d.cancelling, d.reason = true, reason
	}
	return reason
}

// heldLocked is what the jail holds: every download not cancelled or saved.
func (dl *Jail) heldLocked() int64 {
	var n int64
	for _, d := range dl.order {
		if d.state == StateInProgress || d.state == StateCompleted {
			n += d.received
		}
	}
	return n
}

// cancel cancels a download over a bound. The browser then reports it
// canceled, which removes its partial file; the state is set here too, so
// a listing right after says so even if that event is late.
func (dl *Jail) cancel(conn *cdp.Conn, guid, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelBound)
	defer cancel()
	_, err := cdproto.Call(ctx, conn.Browser(), browser.CancelDownload, browser.CancelDownloadParams{GUID: guid})
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if d := dl.byGUID[guid]; d != nil && err == nil {
		d.state, d.reason = StateCanceled, reason
		dl.removeFileLocked(d)
		dl.notifyLocked()
	}
}

// removeFileLocked deletes what a cancelled download left in the jail.
func (dl *Jail) removeFileLocked(d *download) {
	os.Remove(filepath.Join(dl.dir, d.guid))
	os.Remove(filepath.Join(dl.dir, d.guid+".crdownload"))
}

func (dl *Jail) notifyLocked() {
	close(dl.changed)
	dl.changed = make(chan struct{})
}

// List returns the downloads, whether the one named id (or, with id
// empty, every one) has ended, whether id names one, and the channel that
// says the next change.
func (dl *Jail) List(id string) (list []Download, ended, found bool, changed <-chan struct{}) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	list = make([]Download, 0, len(dl.order))
	ended, found = true, id == ""
	for _, d := range dl.order {
		list = append(list, d.info())
		if id == "" || d.named(id) {
			found = found || d.named(id)
			if d.state == StateInProgress {
				ended = false
			}
		}
	}
	return list, ended, found, dl.changed
}

// Saved is where Save put a download: the directory the caller named.
type Saved struct {
	ID    string
	Path  string
	Bytes int64
}

// Save moves the completed download named id out of the jail into dir,
// which must exist, be a real directory (not a link) and belong to the
// user webcodex runs as. An existing file is never replaced.
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
	switch {
	case d == nil:
		return Saved{}, fsm.Refuse(fsm.NotFound, "no such download")
	case d.state != StateCompleted:
		return Saved{}, fsm.Refusef(fsm.InvalidArgument, "the download is %s; only a completed one is saved", d.state)
	}
	dst := filepath.Join(dir, d.name)
	n, err := moveFile(filepath.Join(dl.dir, d.guid), dst)
	if errors.Is(err, fs.ErrExist) {
		return Saved{}, fsm.Refusef(fsm.InvalidArgument, "%s already exists there; it is never replaced", d.name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		d.state, d.reason = StateCanceled, ReasonFileError
		dl.notifyLocked()
		return Saved{}, fsm.Refuse(fsm.NotFound, "the downloaded file is gone")
	}
	if err != nil {
		return Saved{}, fmt.Errorf("netguard: save download: %w", err)
	}
	d.state = StateSaved
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

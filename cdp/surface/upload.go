package surface

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"

	"github.com/webcodex/webcodex/fsm"
)

// Upload sets files on a file input through DOM.setFileInputFiles. Each
// name is resolved inside Options.UploadDir, lexically and after resolving
// symlinks, and must be a regular file with no other hard link, on the
// upload directory's own device; anything else (a FIFO, a device, a socket,
// a /proc or /sys file), or no directory, is upload_denied. The file that
// was checked is then copied into the page's private staging directory and
// the browser is given the copy: what the page reads is what was checked,
// whatever happens to the path later. The result names files by base name
// only.
func (p *Page) Upload(ctx context.Context, t Target, names ...string) (*ActionResult, error) {
	if len(names) == 0 {
		return nil, fsm.Refuse(fsm.InvalidArgument, "upload needs at least one file")
	}
	files := make([]string, 0, len(names))
	for _, n := range names {
		real, checked, err := confine(p.opts.UploadDir, n)
		if err != nil {
			return nil, err
		}
		staged, err := p.stage(real, checked)
		if err != nil {
			return nil, err
		}
		files = append(files, staged)
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	w, res, err := p.prepare(ctx, t, prepareArgs{Kind: "upload"})
	if err != nil {
		return nil, err
	}
	out := &ActionResult{Action: "upload", Role: res.Role, Tag: res.Tag, Rebound: res.Rebound}
	el, err := p.invokeObject(ctx, w, jsPendingElement, none{}) // pinned to the world's document, like every call
	if err != nil || el == nil || el.ObjectID == "" {
		if err == nil {
			err = errors.New("no element")
		}
		return nil, p.readErr(ctx, fmt.Errorf("surface: upload: %w", err))
	}
	defer p.release(ctx, w.sess, el.ObjectID)
	if _, err := cdproto.Call(ctx, w.sess, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: files, ObjectID: el.ObjectID}); err != nil {
		return out, p.dispatchErr(ctx, err)
	}
	for _, f := range files {
		out.Files = append(out.Files, filepath.Base(f))
	}
	return out, nil
}

// confine resolves name inside dir, refusing anything that leaves it
// lexically or through a symlink, and anything but a regular file. A file
// with another hard link may be the same inode as a file outside dir, and
// a file on another device than dir's sits under a mount point inside it:
// both are refused, since neither check of the path can see where their
// content lives. Refusals name no path.
func confine(dir, name string) (string, os.FileInfo, error) {
	if dir == "" {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "no upload directory is set")
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the upload directory is unusable")
	}
	var path string
	if filepath.IsAbs(name) {
		path = filepath.Clean(name)
	} else {
		path = filepath.Join(absDir, name)
	}
	if !within(absDir, path) {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the file is outside the upload directory")
	}
	realDir, err := filepath.EvalSymlinks(absDir)
	if err != nil {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the upload directory is unusable")
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "no such file in the upload directory")
	}
	if !within(realDir, real) {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the file resolves outside the upload directory")
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "not a regular file")
	}
	dirSt, err := os.Stat(realDir)
	if err != nil {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the upload directory is unusable")
	}
	links, fileDev, ok1 := linksAndDevice(st)
	_, dirDev, ok2 := linksAndDevice(dirSt)
	if !ok1 || !ok2 {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the file's links and device cannot be checked on this system")
	}
	if links > 1 {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the file has another hard link: it may be a file outside the upload directory")
	}
	if fileDev != dirDev {
		return "", nil, fsm.Refuse(fsm.UploadDenied, "the file is on another device than the upload directory")
	}
	return real, st, nil
}

func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	return true
}

// maxUploadBytes bounds one uploaded file: it is copied before the browser
// sees it.
const maxUploadBytes = 1 << 30

// stage copies the file confine checked (checked is what it saw at real)
// into the page's staging directory and returns the copy's path. The file
// is opened without following a link and without blocking (a FIFO or a
// device swapped in meanwhile opens at once, or fails), and the open file
// must be that same regular file, with one link: only then are exactly its
// checked bytes copied, from the open file. Refusals name no path.
func (p *Page) stage(real string, checked os.FileInfo) (string, error) {
	if checked.Size() > maxUploadBytes {
		return "", fsm.Refusef(fsm.UploadDenied, "the file is over the %d MiB upload bound", maxUploadBytes>>20)
	}
	f, err := openNoFollow(real)
	if err != nil {
		return "", fsm.Refuse(fsm.UploadDenied, "the file changed after it was checked")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !os.SameFile(st, checked) || st.Size() != checked.Size() {
		return "", fsm.Refuse(fsm.UploadDenied, "the file changed after it was checked")
	}
	if links, _, ok := linksAndDevice(st); !ok || links > 1 {
		return "", fsm.Refuse(fsm.UploadDenied, "the file has another hard link: it may be a file outside the upload directory")
	}
	dir, err := p.stagingDir()
	if err != nil {
		return "", err
	}
	sub, err := os.MkdirTemp(dir, "f")
	if err != nil {
		return "", fmt.Errorf("surface: upload staging: %w", err)
	}
	dst := filepath.Join(sub, filepath.Base(real))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("surface: upload staging: %w", err)
	}
	n, err := io.CopyN(out, f, st.Size())
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != st.Size() {
		os.RemoveAll(sub)
		return "", fsm.Refuse(fsm.UploadDenied, "the file changed while it was copied")
	}
	return dst, nil
}

// stagingDir returns the page's private staging directory (0700, made on
// first use, removed by Close).
func (p *Page) stagingDir() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.staging == "" {
		dir, err := os.MkdirTemp("", "webcodex-upload-")
		if err != nil {
			return "", fmt.Errorf("surface: upload staging: %w", err)
		}
		p.staging = dir
	}
	return p.staging, nil
}

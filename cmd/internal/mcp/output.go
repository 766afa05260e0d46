package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/platform"
)

// maxOutputName bounds a filename argument.
const maxOutputName = 200

// outputName checks a filename argument: a plain file name, written into
// the session's output directory and nowhere else. A path (absolute, with
// a directory or ..) is refused, never resolved.
func outputName(name string) error {
	switch {
	case len(name) > maxOutputName:
		return fsm.Refusef(fsm.InvalidArgument, "filename is a file name of at most %d bytes", maxOutputName)
	case name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || filepath.IsAbs(name):
		return fsm.Refusef(fsm.InvalidArgument, "filename %q is not a plain file name: files go into this session's output directory only (no directories, .., or absolute paths)", capText(name, 60))
	}
	return nil
}

// saveOutput writes data as name into the session's output directory
// (private, created on first use) and returns its path. An existing link
// there is refused, not followed.
func (s *Server) saveOutput(name string, data []byte) (string, error) {
	if err := outputName(name); err != nil {
		return "", err
	}
	if s.opts.OutputDir == "" {
		return "", fsm.Refuse(fsm.InvalidArgument, "this server has no output directory: filename is unavailable")
	}
	if err := platform.EnsurePrivateDir(s.opts.OutputDir); err != nil {
		return "", fmt.Errorf("mcp: the output directory: %w", err)
	}
	path := filepath.Join(s.opts.OutputDir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return "", fsm.Refusef(fsm.InvalidArgument, "filename %q is a link in the output directory; links are not followed", capText(name, 60))
	}
	if err != nil {
		return "", fmt.Errorf("mcp: write %s: %w", name, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file")
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("mcp: write %s: %w", name, err)
	}
	return path, nil
}

// pngToJPEG re-encodes a screenshot as JPEG (quality 90, as Playwright).
func pngToJPEG(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("mcp: decode the screenshot: %w", err)
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, fmt.Errorf("mcp: encode the screenshot: %w", err)
	}
	return out.Bytes(), nil
}

// limitDepth keeps the outline lines at most depth levels deep (two spaces
// of indent a level) and says how many it cut.
func limitDepth(text string, depth int) (string, int) {
	var b strings.Builder
	cut := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "- ") && (len(line)-len(trimmed))/2 >= depth {
			cut++
			continue
		}
		b.WriteString(line)
	}
	return b.String(), cut
}

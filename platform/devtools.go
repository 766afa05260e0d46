package platform

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DevToolsActivePortFile is the file Chromium writes in its user-data-dir
// once its DevTools server listens. As of Chromium 156 it appears only with
// --remote-debugging-port (0 picks a free port) and is left behind at exit.
const DevToolsActivePortFile = "DevToolsActivePort"

// ErrMalformedDevToolsActivePort reports a DevToolsActivePort file that is
// not "PORT\n/devtools/browser/ID": a foreign file, or one still being
// written.
var ErrMalformedDevToolsActivePort = errors.New("platform: malformed DevToolsActivePort")

// maxDevToolsActivePort bounds the read: the real file is under 100 bytes.
const maxDevToolsActivePort = 4096

// ReadDevToolsActivePort reads userDataDir's DevToolsActivePort: line 1 is
// the port, line 2 the browser target path ("/devtools/browser/<id>"). A
// missing file returns an error wrapping [fs.ErrNotExist]; a malformed one
// wraps [ErrMalformedDevToolsActivePort]. The result is internal: never log
// the port or the path.
func ReadDevToolsActivePort(userDataDir string) (port int, path string, err error) {
	f, err := os.Open(filepath.Join(userDataDir, DevToolsActivePortFile))
	if err != nil {
		return 0, "", fmt.Errorf("platform: read DevToolsActivePort: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDevToolsActivePort+1))
	if err != nil {
		return 0, "", fmt.Errorf("platform: read DevToolsActivePort: %w", err)
	}
	return parseDevToolsActivePort(data)
}

func parseDevToolsActivePort(data []byte) (int, string, error) {
	if len(data) > maxDevToolsActivePort {
		return 0, "", fmt.Errorf("%w: too large", ErrMalformedDevToolsActivePort)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) != 2 {
		return 0, "", fmt.Errorf("%w: want 2 lines, have %d", ErrMalformedDevToolsActivePort, len(lines))
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || port < 1 || port > 65535 {
		return 0, "", fmt.Errorf("%w: bad port", ErrMalformedDevToolsActivePort)
	}
	path := strings.TrimSpace(lines[1])
	id, ok := strings.CutPrefix(path, "/devtools/browser/")
	if !ok || id == "" || strings.ContainsAny(id, "/?#% ") {
		return 0, "", fmt.Errorf("%w: bad browser path", ErrMalformedDevToolsActivePort)
	}
	return port, path, nil
}

package platform

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProduct(t *testing.T) {
	t.Parallel()
	tests := []struct{ exe, want string }{
		{"/usr/lib/chromium/chromium", "chromium"},
		{"/usr/bin/chromium", "chromium"},
		{"/usr/bin/chromium-browser", "chromium"},
		{"/usr/lib/chromium-browser/chrome", "chromium"},
		{"/snap/chromium/3000/usr/lib/chromium-browser/chrome", "chromium"},
		{"/usr/lib/chromium/chromium (deleted)", "chromium"},
		{"/opt/google/chrome/chrome", "chrome"},
		{"/usr/bin/google-chrome", "chrome"},
		{"/usr/bin/google-chrome-stable", "chrome"},
		{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "chrome"},
		{`C:\Program Files\Google\Chrome\Application\chrome.exe`, "chrome"},
		{"/opt/microsoft/msedge/msedge", "edge"},
		{"/usr/bin/microsoft-edge", "edge"},
		{"/usr/bin/microsoft-edge-stable", "edge"},
		{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`, "edge"},
		{"/usr/bin/firefox", ""},
		{"/bin/sh", ""},
		{"/tmp/chromium-evil/sh", ""},
		{"/usr/bin/chromedriver", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Product(tt.exe); got != tt.want {
			t.Errorf("Product(%q) = %q, want %q", tt.exe, got, tt.want)
		}
	}
}

func TestParseDevToolsActivePort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data string
		port       int
		path       string
		ok         bool
	}{
		{"valid", "40123\n/devtools/browser/8a1c-44\n", 40123, "/devtools/browser/8a1c-44", true},
		{"no trailing newline", "9222\n/devtools/browser/x", 9222, "/devtools/browser/x", true},
		{"one line", "9222\n", 0, "", false},
		{"three lines", "9222\n/devtools/browser/x\nmore\n", 0, "", false},
		{"port zero", "0\n/devtools/browser/x\n", 0, "", false},
		{"port too big", "70000\n/devtools/browser/x\n", 0, "", false},
		{"port not a number", "abc\n/devtools/browser/x\n", 0, "", false},
		{"page path", "9222\n/devtools/page/x\n", 0, "", false},
		{"empty id", "9222\n/devtools/browser/\n", 0, "", false},
		{"id with query", "9222\n/devtools/browser/x?y\n", 0, "", false},
		{"empty", "", 0, "", false},
		{"too large", "9222\n/devtools/browser/" + strings.Repeat("a", maxDevToolsActivePort) + "\n", 0, "", false},
	}
	for _, tt := range tests {
		port, path, err := parseDevToolsActivePort([]byte(tt.data))
		if tt.ok != (err == nil) || port != tt.port || path != tt.path {
			t.Errorf("%s: parse = %d, %q, %v; want %d, %q, ok=%v", tt.name, port, path, err, tt.port, tt.path, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrMalformedDevToolsActivePort) {
			t.Errorf("%s: error %v does not wrap ErrMalformedDevToolsActivePort", tt.name, err)
		}
	}
}

func TestReadDevToolsActivePort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, _, err := ReadDevToolsActivePort(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(filepath.Join(dir, DevToolsActivePortFile), []byte("1234\n/devtools/browser/abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, path, err := ReadDevToolsActivePort(dir)
	if err != nil || port != 1234 || path != "/devtools/browser/abc" {
		t.Errorf("ReadDevToolsActivePort = %d, %q, %v", port, path, err)
	}
}

func TestParseLockTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target, host string
		pid          int
		ok           bool
	}{
		{"myhost-42", "myhost", 42, true},
		{"my-host-name-7", "my-host-name", 7, true},
		{"host.example-1234567", "host.example", 1234567, true},
		{"-42", "", 0, false},
		{"host-", "", 0, false},
		{"host-0", "", 0, false},
		{"host--3", "host-", 3, true},
		{"host-+3", "", 0, false},
		{"host- 3", "", 0, false},
		{"host", "", 0, false},
		{"host-12x", "", 0, false},
	}
	for _, tt := range tests {
		host, pid, ok := parseLockTarget(tt.target)
		if host != tt.host || pid != tt.pid || ok != tt.ok {
			t.Errorf("parseLockTarget(%q) = %q, %d, %v; want %q, %d, %v", tt.target, host, pid, ok, tt.host, tt.pid, tt.ok)
		}
	}
}

func TestTailBufferBound(t *testing.T) {
	t.Parallel()
	b := newTailBuffer(OutputLimit)
	chunk := bytes.Repeat([]byte("x"), 1000)
	for range 20 { // 20,000 bytes through a 16 KiB buffer
		b.Write(chunk)
	}
	b.Write([]byte("END"))
	got := b.Bytes()
	if len(got) != OutputLimit || !bytes.HasSuffix(got, []byte("xxEND")) {
		t.Errorf("tail: len %d, suffix %q; want len %d ending in END", len(got), got[len(got)-5:], OutputLimit)
	}
	big := bytes.Repeat([]byte("y"), 3*OutputLimit)
	big[len(big)-1] = 'Z'
	b.Write(big)
	if got := b.Bytes(); len(got) != OutputLimit || got[len(got)-1] != 'Z' || bytes.Contains(got, []byte("x")) {
		t.Errorf("one oversized write: len %d, want %d holding only its tail", len(got), OutputLimit)
	}
}

func TestTailBufferRedactsEndpoint(t *testing.T) {
	t.Parallel()
	b := newTailBuffer(OutputLimit)
	b.Write([]byte("DevTools listening on ws://127.0.0.1:40123/devtools/browser/0f3e\nnext line\n"))
	got := string(b.Bytes())
	if strings.Contains(got, "40123") || strings.Contains(got, "0f3e") || !strings.Contains(got, "ws://[redacted]") || !strings.Contains(got, "next line") {
		t.Errorf("Bytes() = %q, want the URL redacted and other text kept", got)
	}
}

func TestLaunchErrorText(t *testing.T) {
	t.Parallel()
	e := &LaunchError{ExitCode: 3, Output: []byte("secret"), Err: ErrExitedEarly}
	if s := e.Error(); strings.Contains(s, "secret") || !strings.Contains(s, "exit status 3") || !errors.Is(e, ErrExitedEarly) {
		t.Errorf("LaunchError = %q (Is ErrExitedEarly %v)", s, errors.Is(e, ErrExitedEarly))
	}
}

// TestBrowserReason: the reason a launch error carries is the browser's
// last fatal line, cut before any path, with addresses replaced; noise
// (ERROR lines of other kinds) is not a reason.
func TestBrowserReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ out, want string }{
		{"[14278:14278:1202/013816.483727:FATAL:chrome/browser/process_singleton_posix.cc:315] Socket path too long: /tmp/x/org.chromium.Chromium.RbXASo/SingletonSocket.\n" +
			"[1202/013816.610778:ERROR:third_party/crashpad/crashpad/util/file/file_io_posix.cc:145] open /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq: No such file or directory (2)\n", "Socket path too long"},
		{"[1:1:0101/000000.0:ERROR:ui/ozone/platform/x11/ozone_platform_x11.cc(240)] Missing X server or $DISPLAY\n", "Missing X server or $DISPLAY"},
		{"[1:1:0101/000000.0:FATAL:x.cc(1)] bind() to 127.0.0.1:9222 failed\n", "bind() to [address] failed"},
		{"[1:1:0101/000000.0:ERROR:bus.cc(407)] Failed to connect to the bus\n", ""},
		{"", ""},
		{"[1:1:0101/000000.0:FATAL:x.cc(1)] " + strings.Repeat("é", 200), strings.Repeat("é", 60) + "…"},
	} {
		got := BrowserReason([]byte(c.out))
		if got != c.want {
			t.Errorf("BrowserReason(%.60q) = %q, want %q", c.out, got, c.want)
		}
	}
	e := &LaunchError{ExitCode: 133, Err: ErrExitedEarly, Reason: "Socket path too long"}
	if s := e.Error(); !strings.Contains(s, "exited during start-up") || !strings.HasSuffix(s, `the browser says "Socket path too long"`) || strings.Count(s, "\n") != 0 {
		t.Errorf("LaunchError = %q", s)
	}
}

// TestDeps checks the import boundary: platform may use fsm's refusal codes
// but no machine package and not cdp.
func TestDeps(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/webcodex/webcodex/"
	for _, dep := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(dep, mod)
		if ok && rest != "fsm" && rest != "platform" {
			t.Errorf("platform depends on %s; only fsm is allowed", dep)
		}
	}
}

package chromiumtest

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestMain(m *testing.M) { Main(m) }

// getVersion asks the browser for Browser.getVersion over a bare WebSocket
// with no Origin header.
func getVersion(t *testing.T, b *Browser) string {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.Dial(b.WebSocketURL, nil)
	if err != nil {
		t.Fatalf("dial the browser: %v", err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"id":1,"method":"Browser.getVersion"}`)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

func TestStartAndClose(t *testing.T) {
	b := Start(t)
	if !strings.HasPrefix(b.WebSocketURL, "ws://127.0.0.1:") || !strings.Contains(b.WebSocketURL, "/devtools/browser/") {
		t.Fatal("WebSocketURL is not a browser endpoint on loopback")
	}
	if v := getVersion(t, b); !strings.Contains(v, `"product":"`) {
		t.Fatalf("Browser.getVersion = %.200s", v)
	}
	if err := leadsOwnTree(b); err != nil {
		t.Error(err)
	}
	if len(b.ours()) < 2 {
		t.Errorf("expected the browser and its helpers, found %v", b.ours())
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	select {
	case <-b.Exited():
	default:
		t.Error("Exited not closed after Close")
	}
	if left := b.ours(); len(left) != 0 {
		t.Errorf("processes left after Close: %v", left)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := os.RemoveAll(b.dir); err != nil {
		t.Errorf("removing the browser directory after Close: %v", err)
	}
}

func TestStartSeparateProfiles(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.WebSocketURL == b.WebSocketURL || a.dir == b.dir {
		t.Error("two browsers share an endpoint or a directory")
	}
}

func TestShared(t *testing.T) {
	a := Shared(t)
	b := Shared(t)
	if a != b {
		t.Error("Shared returned two browsers")
	}
	select {
	case <-a.Exited():
		t.Fatal("shared browser exited")
	default:
	}
	getVersion(t, a)
}

func TestChromePathMissing(t *testing.T) {
	t.Setenv("WEBCODEX_CHROME", t.TempDir()+"/no-chromium-here")
	_, err := ChromePath()
	if err == nil || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("ChromePath() = %v, want the install hint", err)
	}
}

func TestLaunchFailsWhenBrowserExits(t *testing.T) {
	// /bin/false exits at once: launch must notice, not wait LaunchTimeout.
	start := time.Now()
	_, err := launch("/bin/false", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("launch(/bin/false) = %v, want an exit error", err)
	}
	if d := time.Since(start); d > LaunchTimeout/2 {
		t.Errorf("launch took %v to notice the exit", d)
	}
}

func TestServeHTML(t *testing.T) {
	base := ServeHTML(t, "<p>hi</p>")
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("base URL %q is not loopback", base)
	}
	resp, err := http.Get(base + "/any/path")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "<p>hi</p>" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("got %q (%s)", body, resp.Header.Get("Content-Type"))
	}
}

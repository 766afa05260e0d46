package main_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// TestDeniedOriginsThroughCLI: an owned browser launched with --allow for
// one origin loads a page that embeds a same-site denied frame (another
// port) and a cross-site one (localhost), fetches both and logs. No CLI
// verb's output holds the denied pages' secret, the screenshot holds none
// of their colour, and the denied servers were never asked for anything.
func TestDeniedOriginsThroughCLI(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	const secret = "CLI-FRAME-SECRET-88a0"
	var mu sync.Mutex
	var hits []string
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<body style="background:#ff00ff"><p>%s</p><script>console.log(%q)</script>`, secret, secret)
	}))
	defer denied.Close()
	cross := strings.Replace(denied.URL, "127.0.0.1", "localhost", 1)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>allowed</title><p>allowed text</p>
<iframe src="%[1]s/f" style="width:300px;height:200px"></iframe><iframe src="%[2]s/f" style="width:300px;height:200px"></iframe>
<script>fetch("%[1]s/x?%[3]s").catch(()=>{}); console.log("allowed log")</script>`, denied.URL, cross, secret)
	}))
	defer allowed.Close()

	var b localapi.BrowserInfo
	e.json(&b, "launch", "--allow", allowed.URL)
	var p localapi.PageInfo
	e.json(&p, "open", b.ID, allowed.URL+"/")
	var outputs []string
	for _, args := range [][]string{
		{"snapshot", p.ID}, {"read", p.ID}, {"console", p.ID}, {"network", p.ID}, {"pages", b.ID}, {"status"},
	} {
		_, out, errs := e.run(append(args, "--json")...)
		outputs = append(outputs, out+errs)
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	if code, _, errs := e.run("screenshot", p.ID, "-o", shot); code != 0 {
		t.Fatalf("screenshot: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 240 && g>>8 < 16 && bl>>8 > 240 {
				t.Fatalf("the screenshot shows a denied frame's colour at %d,%d", x, y)
			}
		}
	}
	joined := strings.Join(outputs, "\n")
	if !strings.Contains(joined, "allowed text") {
		t.Fatalf("the allowed page was not read: %.500s", joined)
	}
	if strings.Contains(joined, secret) {
		t.Fatalf("a CLI output holds the denied pages' secret")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 0 {
		t.Fatalf("the denied server was reached: %q", hits)
	}
}

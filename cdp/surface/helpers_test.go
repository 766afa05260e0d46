package surface

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
)

var lineRef = regexp.MustCompile(`\[((?:f\d+)?e\d+)\]`)

func jsonUnmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }

func targetID(s string) target.ID { return target.ID(s) }

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, old, new string) {
	t.Helper()
	if err := os.Symlink(old, new); err != nil {
		t.Fatal(err)
	}
}

func entryTexts(es []DiagEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Kind + ":" + e.Text + "|")
	}
	return b.String()
}

// clickOn is a probe's action: one click on t.
func clickOn(p *Page, t Target) func(context.Context) (*ActionResult, error) {
	return func(ctx context.Context) (*ActionResult, error) { return p.Click(ctx, t) }
}

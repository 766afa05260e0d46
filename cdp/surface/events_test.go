package surface

import (
	"slices"
	"testing"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webcodex/webcodex/cdp"
)

// An event table subscribes to exactly the events it handles and hands each
// to its own handler by type; an event it does not list is reported, and a
// second handler for one event is refused when the table is built.
func TestEventTable(t *testing.T) {
	var got []string
	tbl := newEventTable(
		on(page.FrameNavigated, func(log *[]string, ev *page.EventFrameNavigated) { *log = append(*log, "navigated "+ev.Frame.URL) }),
		on(cdp.PageDownloadWillBegin, func(log *[]string, ev *cdp.EventPageDownloadWillBegin) { *log = append(*log, "download "+ev.GUID) }),
	)
	if want := []string{page.FrameNavigated.Method, cdp.PageDownloadWillBegin.Method}; !slices.Equal(tbl.methods, want) {
		t.Fatalf("methods = %q, want %q", tbl.methods, want)
	}
	if !tbl.dispatch(&got, &page.EventFrameNavigated{Frame: &cdproto.Frame{URL: "http://a/"}}) ||
		!tbl.dispatch(&got, &cdp.EventPageDownloadWillBegin{GUID: "g1"}) {
		t.Fatal("a listed event was not dispatched")
	}
	if tbl.dispatch(&got, &runtime.EventExecutionContextsCleared{}) {
		t.Fatal("an unlisted event was dispatched")
	}
	if want := []string{"navigated http://a/", "download g1"}; !slices.Equal(got, want) {
		t.Fatalf("handled %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("two handlers for one event were accepted")
		}
	}()
	newEventTable(
		on(page.FrameNavigated, func(*[]string, *page.EventFrameNavigated) {}),
		on(page.FrameNavigated, func(*[]string, *page.EventFrameNavigated) {}),
	)
}

package surface

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// dragPage records, in order, the pointer and drag events its elements
// receive: #a is draggable (it puts "hello" on the drag), #b takes a drop,
// #c refuses one (its dragover does not accept), #m is dragged with mouse
// events only.
const dragPage = `<!doctype html><style>div{position:absolute;width:80px;height:80px}</style>
<div id=a draggable=true style="left:10px;top:10px">A</div><div id=b style="left:200px;top:10px">B</div>
<div id=c style="left:400px;top:10px">C</div><div id=m style="left:10px;top:200px">M</div>
<script>window.ev = [];
for (const t of ["mousedown", "mouseup", "dragstart", "drop", "dragend"])
  addEventListener(t, e => ev.push(t + ":" + (e.target.id || e.target.nodeName) + (e.isTrusted ? "" : "(untrusted)")), true);
a.addEventListener("dragstart", e => e.dataTransfer.setData("text/plain", "hello"));
b.addEventListener("dragover", e => e.preventDefault());
b.addEventListener("drop", e => { e.preventDefault(); ev.push("data:" + e.dataTransfer.getData("text/plain")); });
</script>`

func serveHTML(t *testing.T, html string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, html) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestDrag: an HTML drag from #a to #b is Chromium's own (trusted
// dragstart, drop with the data the page put on the drag, dragend) and
// reports the drop taken; onto #c, which does not accept it, no drop and
// the drop not taken; #m, not draggable, gets mouse events only, released
// over the end.
func TestDrag(t *testing.T) {
	t.Parallel()
	p, _ := testPage(t, "")
	ctx := tctx(t)
	if _, err := p.Navigate(ctx, serveHTML(t, dragPage)); err != nil {
		t.Fatal(err)
	}
	events := func() string { return jsString(t, p, "ev.splice(0).join(' ')") }
	res, err := p.Drag(ctx, Target{CSS: "#a"}, Target{CSS: "#b"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events(), "mousedown:a dragstart:a drop:b data:hello dragend:a"; got != want {
		t.Fatalf("drag a→b: the page saw %q, want %q", got, want)
	}
	if res.Action != "drag" || res.Dropped == nil || !*res.Dropped {
		t.Fatalf("drag a→b: %+v, want dropped", res)
	}
	res, err = p.Drag(ctx, Target{CSS: "#a"}, Target{CSS: "#c"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events(), "mousedown:a dragstart:a dragend:a"; got != want {
		t.Fatalf("drag a→c: the page saw %q, want %q", got, want)
	}
	if res.Dropped == nil || *res.Dropped {
		t.Fatalf("drag a→c: %+v, want the drop not taken", res)
	}
	res, err = p.Drag(ctx, Target{CSS: "#m"}, Target{CSS: "#b"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events(), "mousedown:m mouseup:b"; got != want {
		t.Fatalf("drag m→b: the page saw %q, want %q", got, want)
	}
	if res.Dropped != nil {
		t.Fatalf("drag m→b: %+v, want no drop reported", res)
	}
	// A missing end is refused before anything is sent.
	if _, err := p.Drag(ctx, Target{CSS: "#a"}, Target{CSS: "#nothing"}); err == nil {
		t.Fatal("a drag to a missing element was not refused")
	}
	if got := events(); got != "" {
		t.Fatalf("a refused drag sent %q", got)
	}
}

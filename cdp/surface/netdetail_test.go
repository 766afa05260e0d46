package surface

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/fsm"
)

// TestRequestDetails: one request's details, as the page sent and the
// server answered them: the request's headers (its credentials named and
// withheld) and body, the response's headers and body; each part alone;
// a body past its bound cut and said so; an unknown seq and part refused.
func TestRequestDetails(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("z", MaxResponseBodyChars+100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api":
			w.Header().Set("X-Answer", "42")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		case "/big":
			fmt.Fprint(w, big)
		default:
			fmt.Fprint(w, `<!doctype html><title>net</title><script>window.done = Promise.all([
fetch("/api", {method: "POST", body: "name=ada", headers: {"X-Test": "yes", "Authorization": "Bearer tok123"}}).then(r => r.text()),
fetch("/big").then(r => r.text())]).then(() => true);</script>`)
		}
	}))
	t.Cleanup(srv.Close)
	p, _ := testPage(t, "")
	ctx := tctx(t)
	if _, err := p.Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	var done bool
	js(t, p, "window.done", &done)
	seqOf := func(suffix string) uint64 {
		var seq uint64
		eventuallyRaw(t, p, suffix+" finished", func() bool {
			for _, e := range p.Network(DiagOptions{}).Entries {
				if strings.HasSuffix(e.URL, suffix) && e.Status == 200 {
					seq = e.Seq
					break
				}
			}
			inflight, _ := p.diag.inFlight(nil)
			return seq != 0 && inflight == 0
		})
		return seq
	}
	api := seqOf("/api")
	d, err := p.RequestDetails(ctx, api, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	for _, want := range []string{`"method":"POST"`, `{"name":"X-Test","value":"yes"}`, `{"name":"Authorization","value":"(withheld)"}`,
		`"requestBody":"name=ada"`, `{"name":"X-Answer","value":"42"}`, `"responseBody":"{\"ok\":true}"`, `"mimeType":"application/json"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("details lack %s: %s", want, b)
		}
	}
	if strings.Contains(string(b), "tok123") {
		t.Fatalf("a credential is shown: %s", b)
	}
	d, err = p.RequestDetails(ctx, api, "response-headers")
	if err != nil || d.ResponseBody != "" || d.RequestHeaders != nil || len(d.ResponseHeaders) == 0 {
		t.Fatalf("response-headers alone: %+v, %v", d, err)
	}
	d, err = p.RequestDetails(ctx, seqOf("/big"), "response-body")
	if err != nil || len(d.ResponseBody) > MaxResponseBodyChars+len("…") || len(d.Truncated) != 1 || d.Truncated[0] != "response-body" {
		t.Fatalf("a big body: %d chars, truncated %v, %v", len(d.ResponseBody), d.Truncated, err)
	}
	if _, err := p.RequestDetails(ctx, 99999, ""); !fsm.IsCode(err, fsm.NotFound) {
		t.Fatalf("an unknown seq: %v", err)
	}
	if _, err := p.RequestDetails(ctx, api, "cookies"); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Fatalf("an unknown part: %v", err)
	}
}

// TestRequestDetailsWithholdDeniedOrigins: under the origin gate, every
// request of the denied same-site frame (127.0.0.1:B), of the denied
// cross-site one (localhost:C) and the allowed page's own request to a
// denied URL is not found, exactly like a seq never logged; the allowed
// page's own requests are found, and no detail of theirs carries the
// secret only the denied origins know.
func TestRequestDetailsWithholdDeniedOrigins(t *testing.T) {
	t.Parallel()
	o := newThreeOrigins(t)
	p, _ := testPage(t, "", Options{Judge: o.gate.Check})
	ctx := tctx(t)
	if _, err := p.Navigate(ctx, o.a+"/framed"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"/fetch?t=" + o.secret, "/x?t=" + o.secret} {
		eventuallyRaw(t, p, s, func() bool { return rawHas(p, s) })
	}
	var done map[string]bool
	for i := 0; !done["B"] || !done["C"]; i++ {
		if i > 200 {
			t.Fatalf("frames never finished: %v", done)
		}
		p.diag.waitConsole(ctx, 100*time.Millisecond)
		js(t, p, "window.frameDone", &done)
	}
	p.diag.mu.Lock()
	raw := append([]DiagEntry(nil), p.diag.network.entries...)
	p.diag.mu.Unlock()
	v := newVerdicts(o.gate.Check)
	denied, allowed := 0, 0
	for _, e := range raw {
		d, err := p.RequestDetails(ctx, e.Seq, "")
		if !v.visible(&e) {
			denied++
			if !fsm.IsCode(err, fsm.NotFound) || d != nil {
				t.Fatalf("the denied request %s: %+v, %v; want not found", e.URL, d, err)
			}
			if r, _ := fsm.AsRefusal(err); r != nil && strings.Contains(r.Detail, o.secret) {
				t.Fatalf("the refusal names the secret: %s", r.Detail)
			}
			continue
		}
		allowed++
		if err != nil {
			t.Fatalf("the allowed request %s: %v", e.URL, err)
		}
		b, _ := json.Marshal(d.RequestHeaders)
		if strings.Contains(string(b), o.secret) {
			t.Fatalf("the allowed request %s shows the secret in its headers: %s", e.URL, b)
		}
	}
	if denied < 2 || allowed == 0 {
		t.Fatalf("%d denied and %d allowed requests logged: the attack did not run", denied, allowed)
	}
}

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/auditchain"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
	"github.com/webcodex/webcodex/fsm"
)

// TestAuditChainHeadAtCloseAndStop: a launch, an effect, a refused effect,
// a close and a stop are chained records; close and stop answer with the
// head hash after their own record, which `audit verify --head` accepts,
// and the records after close's head are exactly the stop.
func TestAuditChainHeadAtCloseAndStop(t *testing.T) {
	t.Parallel() // its own Runner and browser
	h := newHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>a</title><button onclick="this.textContent='done'">go</button>`)
	}))
	defer srv.Close()
	ctx := context.Background()
	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runAct(ctx, h.r, op.Click, clickOn(p.ID, localapi.Target{Role: "button", Name: "go"})); err != nil {
		t.Fatal(err)
	}
	if _, err := runOp(ctx, h.r, op.Goto, op.GotoIn{OnPage: op.OnPage{Page: p.ID}, URL: "http://denied.invalid/"}); !fsm.IsCode(err, fsm.OriginDenied) {
		t.Fatalf("goto a denied origin: %v", err)
	}
	res, err := h.r.Close(ctx, localapi.BrowserRequest{Browser: b.ID})
	if err != nil || len(res.AuditHead) != 64 {
		t.Fatalf("close: %+v, %v", res, err)
	}
	dir := h.r.opts.StateDir
	rep, err := auditchain.Verify(dir, res.AuditHead)
	if err != nil || rep.Head != res.AuditHead || rep.AfterHead != 0 {
		t.Fatalf("verify after close: %+v, %v", rep, err)
	}
	st, err := h.r.stop(ctx, struct{}{})
	if err != nil || len(st.AuditHead) != 64 {
		t.Fatalf("stop: %+v, %v", st, err)
	}
	rep, err = auditchain.Verify(dir, res.AuditHead)
	if err != nil || rep.Head != st.AuditHead || rep.AfterHead != 1 {
		t.Fatalf("verify after stop: %+v, %v", rep, err)
	}
	recs := auditAll(t, h.r)
	for _, want := range [][2]string{{"launch", "allowed"}, {"click", "allowed"}, {"navigate", string(fsm.OriginDenied)}, {"close", "allowed"}, {"stop", "allowed"}} {
		found := false
		for _, rec := range recs {
			found = found || (rec.Tool == want[0] || rec.Action == want[0]) && rec.Verdict == want[1]
		}
		if !found {
			t.Errorf("no %s record with verdict %s in the chain", want[0], want[1])
		}
	}
}

// auditAll reads every record of the audit trail.
func auditAll(t *testing.T, r *Runner) []auditRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.opts.StateDir, auditchain.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []auditRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec auditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

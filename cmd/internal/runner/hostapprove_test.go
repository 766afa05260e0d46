package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/fsm"
)

// TestHostApprovalIsNotARoute: the host's approval reaches the broker only
// through ApproveFromHost, which no local API route calls; the embedded
// approval socket serves only what `webcodex mcp approve` needs.
func TestHostApprovalIsNotARoute(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	r := newTestRunner(t, Options{})
	for _, name := range r.Routes().Names() {
		if strings.Contains(name, "host") {
			t.Errorf("route %q", name)
		}
	}
	got := r.ApprovalRoutes().Names()
	slices.Sort(got)
	if want := []string{"approval", "approve", "deny", "ping"}; !slices.Equal(got, want) {
		t.Fatalf("approval routes %v, want %v", got, want)
	}
	// ApproveFromHost approves exactly the named pending request.
	scope := consent.Scope{Session: "mcp-x", BrowserID: "chromium:1:2", Fingerprint: "1:2:/usr/lib/chromium/chromium", Endpoint: "ws://127.0.0.1:1/devtools/browser/x", Scopes: []string{"browser:control"}, ReconnectBudget: 3}
	rq, err := r.broker.NewRequest(scope, "summary")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ApproveFromHost(context.Background(), "no-such-request"); !fsm.IsCode(err, fsm.ApprovalInvalid) {
		t.Fatalf("unknown request: %v", err)
	}
	if err := r.ApproveFromHost(context.Background(), rq.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.broker.Use(rq.ID, scope); err != nil {
		t.Fatalf("the approved request gives no grant: %v", err)
	}
}

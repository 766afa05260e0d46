package runner

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// TestEveryRouteServedOnce: the Runner's table serves exactly the routes
// localapi declares (a second registration panics in Serve), so a route
// declared for a client is never left without its handler.
func TestEveryRouteServedOnce(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, Options{})
	got, want := r.Routes().Names(), localapi.Declared()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("served %v\ndeclared %v", got, want)
	}
	if len(slices.Compact(slices.Clone(want))) != len(want) {
		t.Fatalf("a route name is declared twice: %v", want)
	}
}

// TestRefusalNamesWhatItIsAbout: a consent refusal carries its approval
// request as a field, and a route's refusal names the page or browser the
// request named, so no caller parses a detail. Refusals are copied, never
// changed where they are shared.
func TestRefusalNamesWhatItIsAbout(t *testing.T) {
	t.Parallel()
	if ref, ok := fsm.AsRefusal(consentRequired("ar-123")); !ok || ref.Code != fsm.ConsentRequired || ref.ApprovalID != "ar-123" {
		t.Fatalf("consentRequired = %+v", ref)
	}
	shared := fsm.Refuse(fsm.PageClosed, "the page is closed")
	r := newTestRunner(t, Options{})
	read := bounded(r, func(context.Context, localapi.PageRequest) (localapi.ReadResult, error) {
		return localapi.ReadResult{}, shared
	})
	_, err := read(context.Background(), localapi.PageRequest{Page: "p-7"})
	if ref, ok := fsm.AsRefusal(err); !ok || ref.Code != fsm.PageClosed || ref.Page != "p-7" || ref.Browser != "" {
		t.Fatalf("refusal = %+v, want page_closed about p-7", ref)
	}
	if shared.Page != "" {
		t.Fatalf("the shared refusal was changed: %+v", shared)
	}
	closeB := bounded(r, func(context.Context, localapi.BrowserRequest) (localapi.CloseResult, error) {
		return localapi.CloseResult{}, fsm.Refuse(fsm.NotFound, "no such browser")
	})
	_, err = closeB(context.Background(), localapi.BrowserRequest{Browser: "b-3"})
	if ref, ok := fsm.AsRefusal(err); !ok || ref.Browser != "b-3" {
		t.Fatalf("refusal = %+v, want one about b-3", ref)
	}
	// Over the wire the fields arrive as fields.
	b, err := json.Marshal(err)
	if err != nil || !strings.Contains(string(b), `"browser":"b-3"`) {
		t.Fatalf("wire form %s, %v", b, err)
	}
}

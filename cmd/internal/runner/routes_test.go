package runner

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
)

// TestEveryRouteServedOnce: the Runner's table serves exactly the routes
// localapi declares (a second registration panics in Serve), so a route
// declared for a client is never left without its handler.
func TestEveryRouteServedOnce(t *testing.T) {
	t.Parallel()
	r, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state")})
	if err != nil {
		t.Fatal(err)
	}
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

package localapi

import (
	"context"
	"encoding/json"
	"slices"
)

// BoundaryHeader carries the client's Boundary on every request of a client
// that has one (webcodex mcp --runner).
const BoundaryHeader = "X-Webcodex-Boundary"

// maxBoundaryHeader bounds the header's size.
const maxBoundaryHeader = 16 << 10

// Boundary is what a client of a shared Runner was allowed by its owner:
// the canonical allowlist, the evaluate switch and the scopes. A browser
// keeps its creator's Boundary; a client whose Boundary differs can neither
// see nor address it (refused as an unknown id), so no client widens
// another's limits through a shared Runner. A request without a Boundary is
// the owner at a terminal (the CLI), which sees every browser, each under
// its own allowlist.
type Boundary struct {
	Allow         []string `json:"allow"`         // canonical (origin.Canonical), sorted
	AllowEvaluate bool     `json:"allowEvaluate"` // evaluate and raw CDP on attached browsers
	Scopes        []string `json:"scopes"`        // sorted
}

// Equal reports whether two boundaries allow exactly the same.
func (b Boundary) Equal(o Boundary) bool {
	return b.AllowEvaluate == o.AllowEvaluate && slices.Equal(sorted(b.Allow), sorted(o.Allow)) && slices.Equal(sorted(b.Scopes), sorted(o.Scopes))
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

type boundaryKey struct{}

// WithBoundary returns ctx carrying the client's boundary.
func WithBoundary(ctx context.Context, b Boundary) context.Context {
	return context.WithValue(ctx, boundaryKey{}, b)
}

// BoundaryFrom returns the boundary of the client that made the request,
// if it declared one.
func BoundaryFrom(ctx context.Context) (Boundary, bool) {
	b, ok := ctx.Value(boundaryKey{}).(Boundary)
	return b, ok
}

// parseBoundary decodes the header strictly.
func parseBoundary(v string) (Boundary, bool) {
	var b Boundary
	if len(v) > maxBoundaryHeader || json.Unmarshal([]byte(v), &b) != nil {
		return Boundary{}, false
	}
	return b, true
}

package runner

import (
	"context"
	"encoding/json"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
)

// A browser keeps the boundary of the client that created it (see
// localapi.Boundary): a client of a shared Runner whose own allowlist,
// evaluate switch or scopes differ can neither see nor address it — it is
// refused exactly like an unknown id. A request without a boundary is the
// owner at a terminal: it sees every browser, each under its own allowlist.

// creatorBoundary records the boundary of the client creating b.
func (b *Browser) setCreator(ctx context.Context) {
	if cb, ok := localapi.BoundaryFrom(ctx); ok {
		b.creator = &cb
	}
}

// visibleTo reports whether the client making the request may see b: its
// boundary admits b, and its session owns b (session.go).
func (b *Browser) visibleTo(ctx context.Context) bool {
	return b.creatorAdmits(ctx) && b.ownedBy(ctx)
}

// creatorAdmits reports whether the client's boundary is b's creator's.
func (b *Browser) creatorAdmits(ctx context.Context) bool {
	cb, ok := localapi.BoundaryFrom(ctx)
	if !ok {
		return true
	}
	return b.creator != nil && b.creator.Equal(cb)
}

// addressed are the ids a request names.
type addressed struct {
	Page    string `json:"page"`
	Browser string `json:"browser"`
}

// addressedBy returns the ids req names (its "browser" and "page").
func addressedBy(req any) addressed {
	var ids addressed
	if raw, err := json.Marshal(req); err == nil {
		json.Unmarshal(raw, &ids) // not an object: names no id
	}
	return ids
}

// about names on a refusal the browser and page the call named, where it
// names none itself, so a caller learns what it is about without parsing
// its detail. The refusal is copied: refusals may be shared values.
func (ids addressed) about(err error) error {
	ref, ok := err.(*fsm.Refusal)
	if !ok || (ids.Browser == "" && ids.Page == "") {
		return err
	}
	cp := *ref
	if cp.Browser == "" {
		cp.Browser = ids.Browser
	}
	if cp.Page == "" {
		cp.Page = ids.Page
	}
	return &cp
}

// admit refuses a request that names a browser or page its client may not
// see, before the operation runs.
func (r *Runner) admit(ctx context.Context, ids addressed) error {
	_, bounded := localapi.BoundaryFrom(ctx)
	if _, session := localapi.CallerFrom(ctx); !bounded && !session {
		return nil
	}
	if ids.Browser != "" {
		r.mu.Lock()
		b := r.browsers[ids.Browser]
		r.mu.Unlock()
		if b != nil && !b.visibleTo(ctx) {
			return fsm.Refuse(fsm.NotFound, "no such browser")
		}
	}
	if ids.Page != "" {
		r.mu.Lock()
		p := r.pages[ids.Page]
		r.mu.Unlock()
		if p != nil && !p.browser.visibleTo(ctx) {
			return fsm.Refuse(fsm.NotFound, "no such page")
		}
	}
	return nil
}

// bounded wraps a route so admit runs first, and its refusals name the
// browser and page the request named.
func bounded[Req, Resp any](r *Runner, fn func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		ids := addressedBy(req)
		if err := r.admit(ctx, ids); err != nil {
			var zero Resp
			return zero, ids.about(err)
		}
		res, err := fn(ctx, req)
		return res, ids.about(err)
	}
}

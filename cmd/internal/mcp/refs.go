package mcp

import (
	"regexp"
	"sync"
)

// maxMemoPages bounds the pages whose latest snapshot the server keeps; the
// oldest is forgotten first (its bare refs are then refused with a hint to
// take a snapshot, never resolved against another one).
const maxMemoPages = 256

// snapshotMemo keeps each page's latest snapshot id, so that a ref given
// without snapshotId (Playwright's shape) means the latest snapshot of its
// page. The Runner still fences the ref by that snapshot: a ref whose
// document is gone is browser_binding_stale, never rebound.
//
// A query (browser_snapshot query) answers a snapshot of its own id beside
// the page's outline, so both are kept: a bare ref the query listed means
// the query's snapshot, any other the outline's. A new outline forgets the
// query, whose refs may belong to a document the outline replaced.
type snapshotMemo struct {
	mu    sync.Mutex // guards the fields that follow
	pages map[string]*pageSnaps
	order []string // pages, oldest first
}

type pageSnaps struct {
	outline   string
	query     string
	queryRefs map[string]bool
}

// refInText finds the refs an outline lists ([e5], [f1e3]).
var refInText = regexp.MustCompile(`\b((?:f[0-9]+)?e[0-9]+)\]`)

func (m *snapshotMemo) entry(page string) *pageSnaps {
	if m.pages == nil {
		m.pages = map[string]*pageSnaps{}
	}
	e, ok := m.pages[page]
	if !ok {
		if len(m.order) == maxMemoPages {
			delete(m.pages, m.order[0])
			m.order = m.order[1:]
		}
		m.order = append(m.order, page)
		e = &pageSnaps{}
		m.pages[page] = e
	}
	return e
}

// note records an outline of page.
func (m *snapshotMemo) note(page, id string) {
	if page == "" || id == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.entry(page) = pageSnaps{outline: id}
}

// noteQuery records a query's snapshot of page and the refs its text lists.
func (m *snapshotMemo) noteQuery(page, id, text string) {
	if page == "" || id == "" {
		return
	}
	refs := map[string]bool{}
	for _, r := range refInText.FindAllStringSubmatch(text, -1) {
		refs[r[1]] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entry(page)
	e.query, e.queryRefs = id, refs
}

// latest is the snapshot a bare ref of page means, or "".
func (m *snapshotMemo) latest(page, ref string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.pages[page]
	switch {
	case e == nil:
		return ""
	case e.query != "" && (e.queryRefs[ref] || e.outline == ""):
		return e.query
	}
	return e.outline
}

// latestSnapshot is the snapshot a bare ref means on page (the current
// page when page is empty), or "".
func (s *Server) latestSnapshot(page, ref string) string {
	if page == "" {
		_, page = s.currentIDs()
	}
	return s.snaps.latest(page, ref)
}

package mcp

import "sync"

// maxMemoPages bounds the pages whose latest snapshot the server keeps; the
// oldest is forgotten first (its bare refs are then refused with a hint to
// take a snapshot, never resolved against another one).
const maxMemoPages = 256

// snapshotMemo keeps each page's latest snapshot id, so that a ref given
// without snapshotId (Playwright's shape) means the latest snapshot of its
// page. The Runner still fences the ref by that snapshot: a ref whose
// document is gone is browser_binding_stale, never rebound.
type snapshotMemo struct {
	mu    sync.Mutex // guards the fields that follow
	ids   map[string]string
	order []string // pages, oldest first
}

func (m *snapshotMemo) note(page, id string) {
	if page == "" || id == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[string]string{}
	}
	if _, ok := m.ids[page]; !ok {
		if len(m.order) == maxMemoPages {
			delete(m.ids, m.order[0])
			m.order = m.order[1:]
		}
		m.order = append(m.order, page)
	}
	m.ids[page] = id
}

func (m *snapshotMemo) latest(page string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[page]
}

// latestSnapshot is the latest snapshot this server returned for page (the
// current page when page is empty), or "".
func (s *Server) latestSnapshot(page string) string {
	if page == "" {
		_, page = s.currentIDs()
	}
	return s.snaps.latest(page)
}

package localapi

// The verbs of downloads, history and tab handover: their wire types and
// routes (the Runner serves them in its route table; see routes.go).

var (
	Downloads    = readRoute[DownloadsRequest, DownloadsResult]("downloads")
	SaveDownload = effectRoute[SaveDownloadRequest, SaveDownloadResult]("save_download")
	Handover     = effectRoute[HandoverRequest, HandoverResult]("handover")
	Activate     = effectRoute[PageRequest, PageInfo]("activate")
)

// DownloadsRequest lists a browser's downloads; WaitMS > 0 first waits, at
// most that long (bounded by the Runner), until none is in progress (or,
// with ID, until that one has ended). ID is the listing's (d1) or the
// browser's id an action's result reports for the download it started; a
// listing id not issued yet (the click's download Chromium has not
// announced) is waited for too.
type DownloadsRequest struct {
	Browser string `json:"browser"`
	ID      string `json:"id,omitempty"`
	WaitMS  int    `json:"waitMs,omitempty"`
}

// DownloadsResult is a browser's downloads in the order they began.
type DownloadsResult struct {
	Browser   string         `json:"browser"`
	Downloads []DownloadInfo `json:"downloads"`
}

// DownloadInfo is one download. Its file lives in the browser's private
// download directory, whose path is never reported; FileName is the name
// the site suggested.
type DownloadInfo struct {
	ID       string `json:"id"`
	FileName string `json:"fileName"`
	// State is in_progress, completed, canceled or saved (moved to a
	// directory the caller named; the browser's copy is gone).
	State         string `json:"state"`
	ReceivedBytes int64  `json:"receivedBytes"`
	TotalBytes    int64  `json:"totalBytes,omitempty"`
	// Reason says why webcodex cancelled it: over_cap (larger than the
	// per-download bound), jail_full or too_many.
	Reason string `json:"reason,omitempty"`
}

// SaveDownloadRequest moves a completed download out of the browser's
// private directory into Dir, an existing directory of the caller's.
type SaveDownloadRequest struct {
	Browser string `json:"browser"`
	ID      string `json:"id"`
	Dir     string `json:"dir"`
}

// SaveDownloadResult says where the file went: the caller named the
// directory, so the path is the caller's own.
type SaveDownloadResult struct {
	Browser string `json:"browser"`
	ID      string `json:"id"`
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
}

// HandoverRequest hands tabs webcodex opened in an attached browser over to
// the person: they stay open at detach, marked. Page names one tab; empty
// hands over every tab webcodex opened there.
type HandoverRequest struct {
	Browser string `json:"browser"`
	Page    string `json:"page,omitempty"`
}

// HandoverResult lists the tabs handed over.
type HandoverResult struct {
	Browser string   `json:"browser"`
	Pages   []string `json:"pages"`
}

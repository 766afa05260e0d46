package netguard

import (
	"strconv"

	"github.com/webcodex/webcodex/fsm"
)

// DownloadState is a state of one download in an owned browser's jail. The
// local API lists it by these names (cancelling as in_progress: the file is
// still there until the browser confirms).
type DownloadState string

// Download states. Their exits are rendered from the declared edges (spec/).
const (
	DownloadInProgress DownloadState = "in_progress" // the browser writes it into the jail.
	DownloadCancelling DownloadState = "cancelling"  // over a bound: webcodex asked the browser to cancel it.
	DownloadCompleted  DownloadState = "completed"   // whole, in the jail, within its bound.
	DownloadCanceled   DownloadState = "canceled"    // cancelled or gone: nothing of it is left in the jail.
	DownloadSaved      DownloadState = "saved"       // moved to a directory the caller named.
)

// DownloadTrigger is an event in a download's life.
type DownloadTrigger string

// Download triggers: the browser's reports, the jail's bounds and the
// caller's save.
const (
	DownloadOverBound DownloadTrigger = "over_bound" // its size, or the jail's, passed a bound
	DownloadFinished  DownloadTrigger = "finished"   // the browser reports it completed
	DownloadCancelled DownloadTrigger = "cancelled"  // the browser reports it canceled, or accepted webcodex's cancel
	DownloadMoved     DownloadTrigger = "moved"      // Save moved its file out of the jail
	DownloadFileGone  DownloadTrigger = "file_gone"  // Save found its file gone from the jail
)

// Download effects.
const (
	// EffectCancelDownload asks the browser to cancel the download
	// (Browser.cancelDownload); when the browser accepts, the owner fires
	// cancelled.
	EffectCancelDownload fsm.Effect = "cancel_download"
	// EffectRemoveFile removes what the download left in the jail (its
	// file, or its partial .crdownload).
	EffectRemoveFile fsm.Effect = "remove_file"
)

// DownloadFacts are read by the download's guards.
type DownloadFacts struct {
	// WithinBound: what the browser reported received is within the
	// per-download bound.
	WithinBound bool
}

var withinBound = &fsm.Guard[DownloadFacts]{Name: "within_bound", OK: func(e fsm.Env[DownloadFacts]) bool { return e.Facts.WithinBound }}

// DownloadSpec is the life of one download in an owned browser's jail, from
// the browser's first report to its end: saved by the caller, or cancelled
// and removed. A download the jail refuses at its start for their number
// (too_many) is cancelled without ever being listed: it has no life here.
var DownloadSpec = (&fsm.Spec[DownloadState, DownloadTrigger, DownloadFacts]{
	Name:  "download",
	Title: "Download (one file in an owned browser's jail)",
	Guards: "One download of a browser webcodex owns. It is written only into the browser's jail and is cancelled, its file " +
		"removed, as soon as it or the jail passes its bound (" + strconv.Itoa(DefaultMaxDownloadBytes>>20) + " MiB per download " +
		"unless configured, " + strconv.Itoa(JailFactor) + " times that for the jail), including one that finished between two " +
		"reports. Only a completed download is saved, moved out once to a directory the caller names; what is not saved goes " +
		"with the jail when the browser closes.",
	Initial: DownloadInProgress,
	States: []fsm.StateDoc[DownloadState]{
		fsm.Doc(DownloadInProgress, "The browser writes it into the jail; its size is watched on disk and in the browser's reports."),
		fsm.Doc(DownloadCancelling, "It or the jail passed a bound: the browser was asked to cancel it (listed in_progress, with the reason)."),
		fsm.Doc(DownloadCompleted, "Whole and within its bound, in the jail: it can be saved."),
		fsm.Doc(DownloadCanceled, "Cancelled by the browser or by a bound, or its file went missing: nothing of it is left in the jail."),
		fsm.Doc(DownloadSaved, "Moved to the directory the caller named; the jail holds nothing of it."),
	},
	Triggers: []DownloadTrigger{DownloadOverBound, DownloadFinished, DownloadCancelled, DownloadMoved, DownloadFileGone},
	Edges: []fsm.Edge[DownloadState, DownloadTrigger, DownloadFacts]{
		{From: DownloadInProgress, On: DownloadOverBound, To: DownloadCancelling, Effect: EffectCancelDownload},
		{From: DownloadInProgress, On: DownloadFinished, To: DownloadCompleted, Guard: withinBound},
		{From: DownloadInProgress, On: DownloadFinished, To: DownloadCanceled, Guard: fsm.Not(withinBound), Effect: EffectRemoveFile},
		{From: DownloadInProgress, On: DownloadCancelled, To: DownloadCanceled, Effect: EffectRemoveFile},
		{From: DownloadCancelling, On: DownloadCancelled, To: DownloadCanceled, Effect: EffectRemoveFile},
		{From: DownloadCancelling, On: DownloadFinished, To: DownloadCanceled, Effect: EffectRemoveFile},
		{From: DownloadCompleted, On: DownloadMoved, To: DownloadSaved},
		{From: DownloadCompleted, On: DownloadFileGone, To: DownloadCanceled},
	},
	Effects:      []fsm.Effect{EffectCancelDownload, EffectRemoveFile},
	Stable:       []DownloadState{DownloadInProgress, DownloadCancelling, DownloadCompleted},
	Terminal:     []DownloadState{DownloadCanceled, DownloadSaved},
	MaxTransient: 1,
	DrawFacts:    func(d fsm.Drawer) DownloadFacts { return DownloadFacts{WithinBound: d.Bool("within_bound")} },
}).MustValidate()

package spec

import (
	"bytes"
	"fmt"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/surface"
	"github.com/webcodex/webcodex/consent"
	"github.com/webcodex/webcodex/lease"
	"github.com/webcodex/webcodex/reconnect"
)

func init() { Register("limits.md", limits) }

// limit is one bound, read from the constant the code enforces.
type limit struct {
	what, value, where string
}

// limits renders every bound a reviewer should know, from the constants
// themselves, so the table cannot drift from the code.
func limits() []byte {
	rows := []limit{
		{"inbound CDP message", fmt.Sprintf("%d MiB (larger is read as a stream and discarded: its command is refused, an event is counted as dropped; the socket stays open)", cdp.DefaultMaxMessageSize>>20), "cdp.DefaultMaxMessageSize"},
		{"outbound CDP message", fmt.Sprintf("%d MiB (larger refused before sending; write buffer as large, so no fragmented frames)", cdp.DefaultMaxWriteSize>>20), "cdp.DefaultMaxWriteSize"},
		{"events queued per subscription", fmt.Sprintf("%d (overflow dropped and counted)", cdp.DefaultEventQueue), "cdp.DefaultEventQueue"},
		{"one socket write", cdp.DefaultWriteTimeout.String(), "cdp.DefaultWriteTimeout"},
		{"approval request lifetime", consent.RequestTTL.String(), "consent.RequestTTL"},
		{"grant idle expiry", consent.IdleExpiry.String(), "consent.IdleExpiry"},
		{"grant absolute expiry", consent.AbsoluteExpiry.String(), "consent.AbsoluteExpiry"},
		{"connection attempts per loss", fmt.Sprint(reconnect.MaxAttempts), "reconnect.MaxAttempts"},
		{"one reconnect transition", reconnect.DefaultDeadline.String(), "reconnect.DefaultDeadline"},
		{"live extension offers", fmt.Sprint(lease.MaxLiveOffers), "lease.MaxLiveOffers"},
		{"extension offer lifetime", lease.OfferTTL.String(), "lease.OfferTTL"},
		{"effect ledger entries kept", fmt.Sprint(lease.MaxLedgerEntries), "lease.MaxLedgerEntries"},
		{"snapshot chunk (default / most)", fmt.Sprintf("%d / %d characters, then a cursor", surface.DefaultSnapshotChars, surface.MaxSnapshotChars), "surface.DefaultSnapshotChars"},
		{"evaluate result", fmt.Sprintf("depth %d, %d items, %d fields, %d characters", surface.EvalMaxDepth, surface.EvalMaxItems, surface.EvalMaxFields, surface.EvalMaxChars), "surface.EvalMax*"},
		{"diagnostic log", fmt.Sprintf("%d entries, %d characters per read", surface.DiagCapacity, surface.DiagReadChars), "surface.DiagCapacity"},
		{"wait (default / most)", fmt.Sprintf("%s / %s; a timeout is found:false", surface.DefaultWaitTimeout, surface.MaxWaitTimeout), "surface.DefaultWaitTimeout"},
	}
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("# Limits\n\nEvery queue, frame, wait and retry has a bound. This table is rendered from the constants the code enforces.\n\n")
	b.WriteString("| what | bound | constant |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` |\n", r.what, r.value, r.where)
	}
	return b.Bytes()
}

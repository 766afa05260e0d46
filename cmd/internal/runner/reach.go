package runner

import (
	"context"
	"fmt"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/cdp/origin"
)

// requestDecisionTimeout bounds answering one paused request; a request
// whose answer is lost stays paused (fails closed), it is never let through.
const requestDecisionTimeout = 5 * time.Second

// blockDeniedRequests makes origins the allowlist denies unreachable in a
// browser webcodex owns, not only invisible: request interception on the
// browser target pauses every request of every page, frame, popup and
// worker before it leaves the browser, and fails those whose URL the gate
// refuses (navigations, each redirect hop, form posts, fetch/XHR,
// subresources). Nothing is installed for the open web, nor ever in a
// person's browser, whose own browsing is never blocked.
//
// The goroutine it starts belongs to b: it ends with the connection or at
// teardown, and closeBrowser waits for it.
func (b *Browser) blockDeniedRequests(ctx context.Context, conn *cdp.Conn) error {
	if b.gate.OpenWeb() {
		return nil
	}
	paused, stop := conn.Browser().Subscribe(fetch.RequestPaused.Method)
	if _, err := cdproto.Call(ctx, conn.Browser(), fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		stop()
		return fmt.Errorf("runner: request interception: %w", err)
	}
	b.watchWG.Add(1)
	go func() {
		defer b.watchWG.Done()
		defer stop()
		for {
			select {
			case raw, ok := <-paused:
				if !ok {
					return
				}
				decideRequest(conn, b.gate, raw)
			case <-conn.Done():
				return
			case <-b.stop:
				return
			}
		}
	}()
	return nil
}

// decideRequest lets one paused request continue when the gate allows its
// URL and fails it as blocked otherwise.
func decideRequest(conn *cdp.Conn, gate *origin.Gate, raw jsonv2.Value) {
	var ev fetch.EventRequestPaused
	if jsonv2.Unmarshal(raw, &ev) != nil || ev.Request == nil {
		return // unreadable: the request stays paused, never let through
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestDecisionTimeout)
	defer cancel()
	if gate.Allowed(ev.Request.URL) {
		_, _ = cdproto.Call(ctx, conn.Browser(), fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	_, _ = cdproto.Call(ctx, conn.Browser(), fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

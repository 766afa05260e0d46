package netguard

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

// Interceptor makes origins the allowlist denies unreachable in a browser
// webcodex owns, not only invisible: request interception on the browser
// target pauses every request of every page, frame, popup and worker
// before it leaves the browser, and fails those whose URL the gate refuses
// (navigations, each redirect hop, form posts, fetch/XHR, subresources).
// It is installed neither for the open web nor ever in a person's browser,
// whose own browsing is never blocked.
type Interceptor struct {
	conn   *cdp.Conn
	gate   *origin.Gate
	paused <-chan jsonv2.Value
	stop   func()
}

// Intercept turns interception on for conn's browser, subscribed first so
// no paused request is missed. Requests stay paused until Run answers them.
func Intercept(ctx context.Context, conn *cdp.Conn, gate *origin.Gate) (*Interceptor, error) {
	paused, stop := conn.Browser().Subscribe(fetch.RequestPaused.Method)
	if _, err := cdproto.Call(ctx, conn.Browser(), fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		stop()
		return nil, fmt.Errorf("netguard: request interception: %w", err)
	}
	return &Interceptor{conn: conn, gate: gate, paused: paused, stop: stop}, nil
}

// Run answers paused requests until the connection ends or stop closes.
// The caller runs it on a goroutine it owns and waits for.
func (in *Interceptor) Run(stop <-chan struct{}) {
	defer in.stop()
	for {
		select {
		case raw, ok := <-in.paused:
			if !ok {
				return
			}
			in.decide(raw)
		case <-in.conn.Done():
			return
		case <-stop:
			return
		}
	}
}

// decide lets one paused request continue when the gate allows its URL and
// fails it as blocked otherwise.
func (in *Interceptor) decide(raw jsonv2.Value) {
	var ev fetch.EventRequestPaused
	if jsonv2.Unmarshal(raw, &ev) != nil || ev.Request == nil {
		return // unreadable: the request stays paused, never let through
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestDecisionTimeout)
	defer cancel()
	if in.gate.Allowed(ev.Request.URL) {
		_, _ = cdproto.Call(ctx, in.conn.Browser(), fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	_, _ = cdproto.Call(ctx, in.conn.Browser(), fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

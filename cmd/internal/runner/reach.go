package runner

import (
	"context"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/netguard"
)

// blockDeniedRequests makes origins the allowlist denies unreachable in a
// browser webcodex owns (netguard.Interceptor); nothing is installed for
// the open web.
//
// The goroutine it starts belongs to b: it ends with the connection or at
// teardown, and closeBrowser waits for it.
func (b *Browser) blockDeniedRequests(ctx context.Context, conn *cdp.Conn) error {
	if b.gate.OpenWeb() {
		return nil
	}
	in, err := netguard.Intercept(ctx, conn, b.gate)
	if err != nil {
		return err
	}
	b.watchWG.Add(1)
	go func() {
		defer b.watchWG.Done()
		in.Run(b.stop)
	}()
	return nil
}

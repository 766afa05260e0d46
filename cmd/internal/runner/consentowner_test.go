package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestConsentAttemptCancelledWithItsSession: the caller of an approved
// attach goes away while the handshake is held (here the dial is held, as
// Chrome holds it for its prompt): the attempt is cancelled, nothing is
// attached, and the grant stays for the next attach.
func TestConsentAttemptCancelledWithItsSession(t *testing.T) {
	t.Parallel() // its own Runner and browser
	h := newHarness(t)
	u := startUsersChrome(t)
	req := localapi.AttachRequest{ProfileDir: u.profile}
	_, err := h.r.Attach(context.Background(), req)
	if err := h.r.broker.Approve(requestID(t, err)); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	h.dial.mu.Lock()
	h.dial.hold = hold
	h.dial.mu.Unlock()
	before := h.dial.dials.Load()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := h.r.Attach(ctx, req); done <- err }()
	waitfor.Until(t, 10*time.Second, "the attempt dialed", func() bool { return h.dial.dials.Load() > before })
	cancel()
	err = <-done
	if !fsm.IsCode(err, fsm.AttachmentLost) || !errors.Is(err, context.Canceled) {
		t.Fatalf("attach whose caller went away = %v, want %s caused by the cancellation", err, fsm.AttachmentLost)
	}
	if n := len(h.r.browserList()); n != 0 {
		t.Fatalf("%d browsers after a cancelled attempt, want none", n)
	}
	h.dial.mu.Lock()
	h.dial.hold = nil
	h.dial.mu.Unlock()
	close(hold)
	if _, err := h.r.Attach(context.Background(), req); err != nil {
		t.Fatalf("attach under the same grant after the cancelled attempt: %v", err)
	}
}

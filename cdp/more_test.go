package cdp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// TestAutoAttachedChildEndsWithParent attaches a cross-site iframe (its own
// target in Chromium) through Target.setAutoAttach on the page session, and
// checks that detaching the page also ends the iframe's session.
func TestAutoAttachedChildEndsWithParent(t *testing.T) {
	child := chromiumtest.ServeHTML(t, `<!doctype html><title>child</title>`)
	// 127.0.0.1 and localhost are different sites, so the iframe is out of
	// process.
	childURL := strings.Replace(child, "127.0.0.1", "localhost", 1) + "/child"
	parent := chromiumtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><iframe src="` + childURL + `"></iframe>`))
	}))
	c := dial(t, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(t, c)
	ctx := testContext(t)
	attached, cancel := s.Subscribe(target.AttachedToTarget.Method)
	defer cancel()
	if _, err := cdproto.Call(ctx, s, target.SetAutoAttach, target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: false, Flatten: new(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cdproto.Call(ctx, s, page.Navigate, page.NavigateParams{URL: parent + "/"}); err != nil {
		t.Fatal(err)
	}
	var kid *cdp.Session
	for kid == nil {
		select {
		case raw, ok := <-attached:
			if !ok {
				t.Fatal("subscription closed")
			}
			var ev target.EventAttachedToTarget
			if err := jsonv2.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.TargetInfo.Type != "iframe" {
				continue
			}
			var ok2 bool
			if kid, ok2 = c.Session(string(ev.SessionID)); !ok2 {
				t.Fatal("auto-attached session unknown when its event arrives")
			}
		case <-ctx.Done():
			t.Fatal("no iframe target attached")
		}
	}
	waitfor.Until(t, 10*time.Second, "the iframe document loads", func() bool {
		got, err := evalString(ctx, kid, "location.href")
		return err == nil && got == childURL
	})
	if err := s.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-kid.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("child session still live after its parent detached")
	}
	if !errors.Is(kid.Err(), cdp.ErrDetached) {
		t.Errorf("child Err() = %v, want ErrDetached", kid.Err())
	}
}

// blockingSocketFake is a Socket whose writes never complete until their
// context ends, standing in for a peer that stopped reading (which a real
// Chromium does not do on demand).
type blockingSocketFake struct {
	closed chan struct{}
}

func (f *blockingSocketFake) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case <-f.closed:
		return nil, cdp.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *blockingSocketFake) WriteMessage(ctx context.Context, msg []byte) error {
	select {
	case <-f.closed:
		return cdp.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *blockingSocketFake) Close() error {
	select {
	case <-f.closed:
	default:
		close(f.closed)
	}
	return nil
}

func TestWriteTimeoutEndsConnFake(t *testing.T) {
	c := cdp.NewConn(&blockingSocketFake{closed: make(chan struct{})}, cdp.ConnOptions{WriteTimeout: 100 * time.Millisecond})
	defer c.Close()
	ctx := testContext(t)

	// A second caller waiting for the write slot is bounded by its own ctx.
	errc := make(chan error, 1)
	go func() { errc <- c.Browser().Call(ctx, "Browser.getVersion", nil, nil) }()
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	waitErr := c.Browser().Call(short, "Browser.getVersion", nil, nil)

	start := time.Now()
	err := <-errc
	if !errors.Is(err, cdp.ErrClosed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled write = %v, want ErrClosed wrapping the write deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stalled write returned after %v", d)
	}
	// The short call either lost the race for the slot (its deadline) or
	// got it first (the stalled write); both are bounded.
	if !errors.Is(waitErr, context.DeadlineExceeded) {
		t.Errorf("waiting call = %v, want DeadlineExceeded", waitErr)
	}
	select {
	case <-c.Done():
	default:
		t.Error("connection still open after a write timed out")
	}
}

func TestDialHandshakeRefused(t *testing.T) {
	base := chromiumtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			t.Errorf("handshake sent Origin %q", r.Header.Get("Origin"))
		}
		http.Error(w, "Connection rejected", http.StatusForbidden)
	}))
	_, err := cdp.DialWebSocket(testContext(t), "ws"+strings.TrimPrefix(base, "http")+"/devtools/browser/x", cdp.DialOptions{})
	he, ok := errors.AsType[*cdp.HandshakeError](err)
	if !ok || he.Status != http.StatusForbidden {
		t.Fatalf("dial = %v, want a HandshakeError with status 403", err)
	}
}

// TestDialDeadlineReportsContextError: a handshake that never completes ends
// at ctx's deadline with an error wrapping context.DeadlineExceeded, never a
// bare i/o timeout (gorilla's connection deadline can fire first).
func TestDialDeadlineReportsContextError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold the handshake: never answer
		}
	}()
	for i := 0; i < 30; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := cdp.DialWebSocket(ctx, "ws://"+ln.Addr().String()+"/devtools/browser/x", cdp.DialOptions{})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("dial %d: %v, want context.DeadlineExceeded", i, err)
		}
	}
}

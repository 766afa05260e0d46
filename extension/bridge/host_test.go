package bridge

import (
	"context"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/nativehost"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/platform"
)

// TestNativeHostWithListener runs the real native host against the real
// listener (Chrome's side is a pair of pipes): the host authenticates, a
// Share relayed through it becomes an offer, and closing the listener makes
// the host exit.
func TestNativeHostWithListener(t *testing.T) {
	s, state := newServer(t, Options{})
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer inW.Close()
	defer outR.Close()
	defer outW.Close()
	done := make(chan error, 1)
	go func() {
		done <- nativehost.Run(context.Background(), nativehost.Options{
			Args: []string{"webcodex-bridge-host", testOrigin}, Stdin: inR, Stdout: outW, StateDir: state,
			// The test binary is the host's parent here, not a browser.
			Parent: func() (platform.Fingerprint, error) { return platform.FingerprintOf(os.Getpid()) },
		})
	}()
	fromHost := wire.NewReader(outR, binary.NativeEndian)
	read := func() *wire.Message {
		outR.SetReadDeadline(time.Now().Add(wait))
		body, err := fromHost.ReadFrame(wire.MaxCommand)
		if err != nil {
			t.Fatal(err)
		}
		m, err := wire.Decode(body, wire.FromRunner)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := read(); m.T != wire.KindReady {
		t.Fatalf("first frame %s", m.T)
	}
	wire.WriteFrame(inW, binary.NativeEndian, []byte(`{"t":"share","tab":4,"target":"T4","url":"https://shop.test/","title":"Shop"}`), wire.MaxEvent)
	m := read()
	if m.T != wire.KindOffered || m.Tab != 4 {
		t.Fatalf("answer to a share: %s", m.T)
	}
	if offers := s.Offers(); len(offers) != 1 || offers[0].ID != m.Offer {
		t.Fatalf("offers %+v", offers)
	}
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the host exited cleanly when the Runner went; want an error")
		}
	case <-time.After(wait):
		t.Fatal("the host outlived the Runner")
	}
}

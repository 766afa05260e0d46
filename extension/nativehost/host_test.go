package nativehost

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/platform"
)

const testOrigin = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"

// fakeRunner stands in for the Runner's listener where the test needs to
// script it (a Runner that never answers, or drops the peer); the real
// listener is tested with this host in package bridge.
type fakeRunner struct {
	ln   net.Listener
	rec  rendezvous.Record
	conn chan net.Conn // the authenticated connection; the test closes it at cleanup
}

func startFakeRunner(t *testing.T, state string, answer bool) *fakeRunner {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	rec, err := rendezvous.NewRecord(ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	if err := rendezvous.WriteRecord(state, rec); err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{ln: ln, rec: rec, conn: make(chan net.Conn, 1)}
	accepted := make(chan net.Conn, 1)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		accepted <- c
		c.SetDeadline(time.Now().Add(30 * time.Second))
		body, err := wire.NewReader(c, binary.LittleEndian).ReadFrame(wire.MaxEvent)
		if err != nil {
			c.Close()
			return
		}
		m, err := wire.Decode(body, wire.FromHost)
		if err != nil || m.Token != rec.Token || m.Instance != rec.Instance || m.Origin != testOrigin {
			c.Close()
			return
		}
		if answer {
			ready, _ := wire.Encode(&wire.Message{T: wire.KindReady, V: wire.Version})
			wire.WriteFrame(c, binary.LittleEndian, ready, wire.MaxCommand)
		}
		c.SetDeadline(time.Time{})
		f.conn <- c
	}()
	return f
}

func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := platform.EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := rendezvous.WriteInstall(dir, rendezvous.Install{Origin: testOrigin}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeBrowserParent is the parent check of a host the test starts itself
// (its parent is the test binary, not a browser): a live fingerprint.
func fakeBrowserParent() (platform.Fingerprint, error) { return platform.FingerprintOf(os.Getpid()) }

type hostRun struct {
	chromeIn  *os.File // the test writes Chrome's frames here
	chromeOut *os.File // the test reads the host's frames here
	done      chan error
}

func runHost(t *testing.T, state string, args []string, parent func() (platform.Fingerprint, error)) *hostRun {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &hostRun{chromeIn: inW, chromeOut: outR, done: make(chan error, 1)}
	t.Cleanup(func() { inW.Close(); outR.Close(); outW.Close() })
	go func() {
		h.done <- Run(context.Background(), Options{Args: args, Stdin: inR, Stdout: outW, StateDir: state, Parent: parent})
	}()
	return h
}

func (h *hostRun) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the host did not exit")
		return nil
	}
}

func TestHostRelaysBothByteOrdersFakeRunner(t *testing.T) {
	state := stateDir(t)
	fr := startFakeRunner(t, state, true)
	h := runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	out := wire.NewReader(h.chromeOut, binary.NativeEndian)
	first, err := out.ReadFrame(wire.MaxCommand)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := wire.Decode(first, wire.FromRunner); err != nil || m.T != wire.KindReady {
		t.Fatalf("first frame to the extension = %s, %v; want ready", first, err)
	}
	if bytes.Contains(first, []byte(fr.rec.Token)) {
		t.Fatal("the token reached the extension")
	}
	var conn net.Conn
	select {
	case conn = <-fr.conn:
	case <-time.After(30 * time.Second):
		t.Fatal("no authenticated connection")
	}
	// Chrome -> Runner: a native-endian frame arrives little-endian.
	ev := []byte(`{"t":"revoke","tab":3}`)
	if err := wire.WriteFrame(h.chromeIn, binary.NativeEndian, ev, wire.MaxEvent); err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	got, err := wire.NewReader(conn, binary.LittleEndian).ReadFrame(wire.MaxEvent)
	if err != nil || !bytes.Equal(got, ev) {
		t.Fatalf("Runner got %q, %v", got, err)
	}
	// Runner -> Chrome: little-endian in, native-endian out.
	cmd := []byte(`{"t":"cmd","id":1,"ch":1,"method":"Page.enable"}`)
	if err := wire.WriteFrame(conn, binary.LittleEndian, cmd, wire.MaxCommand); err != nil {
		t.Fatal(err)
	}
	if got, err := out.ReadFrame(wire.MaxCommand); err != nil || !bytes.Equal(got, cmd) {
		t.Fatalf("extension got %q, %v", got, err)
	}
	// Chrome closes the port: stdin EOF ends the host cleanly.
	h.chromeIn.Close()
	if err := h.result(t); err != nil {
		t.Fatalf("after stdin EOF: %v", err)
	}
	if run, err := rendezvous.ReadHostRun(state); err != nil || run.Outcome != rendezvous.HostConnected {
		t.Fatalf("host record after a relay = %+v, %v; want connected", run, err)
	}
}

func TestHostChecksBeforeConnecting(t *testing.T) {
	state := stateDir(t)
	fr := startFakeRunner(t, state, true)
	cases := map[string]struct {
		args   []string
		parent func() (platform.Fingerprint, error)
		want   error
	}{
		"no origin":                {[]string{"host"}, fakeBrowserParent, ErrOrigin},
		"another extension":        {[]string{"host", "chrome-extension://pppppppppppppppppppppppppppppppp/"}, fakeBrowserParent, ErrOrigin},
		"origin without its slash": {[]string{"host", strings.TrimSuffix(testOrigin, "/")}, fakeBrowserParent, ErrOrigin},
		"parent not a browser":     {[]string{"host", testOrigin}, BrowserParent, ErrParent},
	}
	outcomes := map[error]string{ErrOrigin: rendezvous.HostWrongOrigin, ErrParent: rendezvous.HostNotBrowser}
	for name, tc := range cases {
		h := runHost(t, state, tc.args, tc.parent)
		if err := h.result(t); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		// The refusal is recorded for webcodex bridge status to explain.
		if run, err := rendezvous.ReadHostRun(state); err != nil || run.Outcome != outcomes[tc.want] {
			t.Errorf("%s: host record %+v, %v; want %s", name, run, err, outcomes[tc.want])
		}
	}
	select {
	case <-fr.conn:
		t.Fatal("a refused caller reached the Runner")
	default:
	}
}

func TestHostRefusesUnsafeRecords(t *testing.T) {
	state := stateDir(t)
	startFakeRunner(t, state, true)
	rec := filepath.Join(rendezvous.Dir(state), rendezvous.RecordName)
	if err := os.Chmod(rec, 0o644); err != nil {
		t.Fatal(err)
	}
	h := runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	if err := h.result(t); !errors.Is(err, rendezvous.ErrUnsafe) {
		t.Fatalf("record readable by others: %v", err)
	}
	// A symbolic link in the record's place, even to a private file.
	real := filepath.Join(rendezvous.Dir(state), "elsewhere.json")
	if err := os.Rename(rec, real); err != nil {
		t.Fatal(err)
	}
	os.Chmod(real, 0o600)
	if err := os.Symlink(real, rec); err != nil {
		t.Fatal(err)
	}
	h = runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	if err := h.result(t); !errors.Is(err, rendezvous.ErrUnsafe) {
		t.Fatalf("symlinked record: %v", err)
	}
	os.Remove(rec)
	h = runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	if err := h.result(t); !errors.Is(err, ErrRunnerAbsent) {
		t.Fatalf("no record: %v", err)
	}
}

func TestHostHandshakeBoundFakeRunner(t *testing.T) {
	state := stateDir(t)
	startFakeRunner(t, state, false) // reads the auth, never answers
	start := time.Now()
	h := runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	if err := h.result(t); !errors.Is(err, ErrHandshake) {
		t.Fatalf("silent Runner: %v, want the handshake refused", err)
	}
	if time.Since(start) < wire.HandshakeTimeout {
		t.Fatalf("gave up after %v, before the %v bound", time.Since(start), wire.HandshakeTimeout)
	}
}

func TestHostExitsWhenRunnerGoesFakeRunner(t *testing.T) {
	state := stateDir(t)
	fr := startFakeRunner(t, state, true)
	h := runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	conn := <-fr.conn
	conn.Close()
	if err := h.result(t); err == nil || !strings.Contains(err.Error(), "Runner's connection ended") {
		t.Fatalf("Runner gone: %v", err)
	}
}

func TestHostFailsClosedOnOversizedFrameFakeRunner(t *testing.T) {
	state := stateDir(t)
	fr := startFakeRunner(t, state, true)
	h := runHost(t, state, []string{"host", testOrigin}, fakeBrowserParent)
	conn := <-fr.conn
	var hdr [4]byte
	binary.NativeEndian.PutUint32(hdr[:], wire.MaxResponse+1)
	h.chromeIn.Write(hdr[:])
	if err := h.result(t); !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("oversized frame from the browser: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the Runner's connection stayed open")
	}
}

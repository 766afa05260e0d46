// Package nativehost is the bridge's Native Messaging host: Chrome starts
// it for the extension, and it relays frames between Chrome's stdio
// (native-endian lengths) and the Runner's loopback TCP (little-endian),
// holding no policy: what a frame may say is the Runner's to judge.
//
// Before relaying anything it checks, in order: that argv[1] is exactly
// the installed extension origin; that its parent process is a browser
// (read from /proc, never from a claim); the Runner's private rendezvous
// record; and the handshake, which must complete within
// [wire.HandshakeTimeout]. It exits on stdin EOF (Chrome closed the port
// or exited), when the Runner's connection ends, or when its parent is
// gone.
package nativehost

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/platform"
)

// chromeMaxToHost is Chrome's bound on one message from a host (1 MiB);
// a larger header makes Chrome close the port. Every Runner frame is
// below it (wire.MaxCommand).
const chromeMaxToHost = 1 << 20

// parentPoll is how often the host re-reads its parent's identity.
const parentPoll = 2 * time.Second

// Options configures Run.
type Options struct {
	Args []string // os.Args: argv[1] is the caller's origin
	// Stdin carries Chrome's frames. Run closes it when it returns, which
	// must unblock a read in progress (main passes stdin in non-blocking
	// mode, so Go's poller can interrupt it).
	Stdin    io.ReadCloser
	Stdout   io.Writer // to Chrome
	StateDir string
	// Parent returns the identity of the browser process that started the
	// host, or an error when the parent is not a browser; nil means
	// [BrowserParent].
	Parent func() (platform.Fingerprint, error)
	// Logf logs lifecycle lines (never a token, port, origin or frame).
	Logf func(format string, args ...any)
}

// Errors Run returns; the process exits non-zero with each.
var (
	ErrOrigin       = errors.New("nativehost: the caller is not the installed extension")
	ErrParent       = errors.New("nativehost: the parent process is not a browser")
	ErrHandshake    = errors.New("nativehost: the Runner did not accept the handshake in time")
	ErrRunnerAbsent = errors.New("nativehost: no Runner is listening")
)

// BrowserParent returns the fingerprint of this process's parent when its
// executable is a Chrome, Chromium or Edge browser.
func BrowserParent() (platform.Fingerprint, error) {
	ref, err := platform.Parent(os.Getpid())
	if err != nil {
		return platform.Fingerprint{}, fmt.Errorf("%w: %w", ErrParent, err)
	}
	fp, err := platform.FingerprintOf(ref.PID)
	if err != nil {
		return platform.Fingerprint{}, fmt.Errorf("%w: %w", ErrParent, err)
	}
	if platform.Product(fp.Exe) == "" {
		return platform.Fingerprint{}, ErrParent
	}
	return fp, nil
}

// Run checks the caller and relays until stdin ends (nil) or the Runner's
// connection or the parent goes (an error). How its checks ended is
// recorded in the state root (rendezvous.HostRun), so that `webcodex
// bridge status` can say why no host is connected.
func Run(ctx context.Context, opts Options) error {
	outcome := rendezvous.HostConnected
	err := run(ctx, opts, func() {
		rendezvous.WriteHostRun(opts.StateDir, rendezvous.HostRun{At: time.Now().Unix(), Outcome: outcome})
	})
	if err != nil {
		switch {
		case errors.Is(err, errNotInstalled):
			outcome = rendezvous.HostNotInstalled
		case errors.Is(err, ErrOrigin):
			outcome = rendezvous.HostWrongOrigin
		case errors.Is(err, ErrParent):
			outcome = rendezvous.HostNotBrowser
		case errors.Is(err, ErrRunnerAbsent):
			outcome = rendezvous.HostRunnerAbsent
		case errors.Is(err, ErrHandshake):
			outcome = rendezvous.HostHandshakeFail
		default:
			return err // after it connected: recorded as connected already
		}
		rendezvous.WriteHostRun(opts.StateDir, rendezvous.HostRun{At: time.Now().Unix(), Outcome: outcome})
	}
	return err
}

// errNotInstalled marks a missing or invalid installation record.
var errNotInstalled = errors.New("nativehost: no valid installation record (run webcodex install-bridge)")

func run(ctx context.Context, opts Options, connected func()) error {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if opts.Parent == nil {
		opts.Parent = BrowserParent
	}
	install, err := rendezvous.ReadInstall(opts.StateDir)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", ErrOrigin, errNotInstalled, err)
	}
	if len(opts.Args) < 2 || opts.Args[1] != install.Origin {
		return ErrOrigin
	}
	parent, err := opts.Parent()
	if err != nil {
		return err
	}
	rec, err := rendezvous.ReadRecord(opts.StateDir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRunnerAbsent, err)
	}
	conn, ready, err := handshake(ctx, rec, install.Origin)
	if err != nil {
		return err
	}
	defer conn.Close()
	connected()
	logf("webcodex-bridge-host: connected")
	return relay(ctx, conn, ready, opts, parent)
}

// handshake dials the Runner and authenticates within the handshake bound:
// the first frame back must be ready.
func handshake(ctx context.Context, rec rendezvous.Record, origin string) (net.Conn, []byte, error) {
	deadline := time.Now().Add(wire.HandshakeTimeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(rec.Port)))
	if err != nil {
		return nil, nil, ErrRunnerAbsent
	}
	conn.SetDeadline(deadline)
	auth, err := wire.Encode(&wire.Message{T: wire.KindAuth, V: wire.Version, Token: rec.Token, Instance: rec.Instance, Origin: origin})
	if err == nil {
		err = wire.WriteFrame(conn, binary.LittleEndian, auth, wire.MaxEvent)
	}
	var body []byte
	if err == nil {
		body, err = wire.NewReader(conn, binary.LittleEndian).ReadFrame(wire.MaxCommand)
	}
	if err == nil {
		var m *wire.Message
		if m, err = wire.Decode(body, wire.FromRunner); err == nil && m.T != wire.KindReady {
			err = errors.New("not ready")
		}
	}
	if err != nil {
		conn.Close()
		return nil, nil, ErrHandshake
	}
	conn.SetDeadline(time.Time{})
	return conn, body, nil
}

// relay copies frames both ways until one side ends. The Runner's ready
// frame goes to the extension first: it learns the bridge is up.
func relay(ctx context.Context, conn net.Conn, ready []byte, opts Options, parent platform.Fingerprint) error {
	var outMu sync.Mutex
	toChrome := func(body []byte) error {
		outMu.Lock()
		defer outMu.Unlock()
		return wire.WriteFrame(opts.Stdout, binary.NativeEndian, body, chromeMaxToHost)
	}
	if err := toChrome(ready); err != nil {
		return fmt.Errorf("nativehost: write to the browser: %w", err)
	}
	done := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // Chrome -> Runner
		defer wg.Done()
		in := wire.NewReader(opts.Stdin, binary.NativeEndian)
		for {
			body, err := in.ReadFrame(wire.MaxResponse)
			if errors.Is(err, io.EOF) {
				done <- nil // Chrome closed the port or exited
				return
			}
			if err != nil {
				done <- fmt.Errorf("nativehost: from the browser: %w", err)
				return
			}
			if err := wire.WriteFrame(conn, binary.LittleEndian, body, wire.MaxResponse); err != nil {
				done <- fmt.Errorf("nativehost: to the Runner: %w", err)
				return
			}
		}
	}()
	go func() { // Runner -> Chrome
		defer wg.Done()
		in := wire.NewReader(conn, binary.LittleEndian)
		for {
			body, err := in.ReadFrame(wire.MaxCommand)
			if err != nil {
				done <- fmt.Errorf("nativehost: the Runner's connection ended: %w", err)
				return
			}
			if err := toChrome(body); err != nil {
				done <- fmt.Errorf("nativehost: to the browser: %w", err)
				return
			}
		}
	}()
	tick := time.NewTicker(parentPoll)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		case <-tick.C:
			if !parent.Alive() {
				err = fmt.Errorf("%w: it exited", ErrParent)
				break wait
			}
		}
	}
	// Closing both ends makes both readers return.
	conn.Close()
	opts.Stdin.Close()
	wg.Wait()
	return err
}

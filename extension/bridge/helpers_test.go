package bridge

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/platform"
)

const testOrigin = "chrome-extension://lbgchfdhfomgaekhbbampfjbpafcjdfk/"

// wait bounds every wait on the other side of a socket in these tests:
// generous, for a loaded machine; reached only when something is wrong.
const wait = 20 * time.Second

func newServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	tracecheck.Track(t)
	state := filepath.Join(t.TempDir(), "state")
	if err := platform.EnsurePrivateDir(state); err != nil {
		t.Fatal(err)
	}
	if err := rendezvous.WriteInstall(state, rendezvous.Install{Origin: testOrigin}); err != nil {
		t.Fatal(err)
	}
	opts.StateDir = state
	opts.Logf = t.Logf
	s, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, state
}

// fakeExtension speaks the wire protocol as the native host and the
// extension together would: the tests script exactly what Chrome cannot
// be made to do on cue (a fifth peer, a flood, an oversized frame). The
// real extension and host are driven in the runner's end-to-end test.
type fakeExtension struct {
	t    *testing.T
	conn net.Conn
	rd   *wire.Reader
	wmu  sync.Mutex
}

func dial(t *testing.T, s *Server) *fakeExtension {
	t.Helper()
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.rec.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fakeExtension{t: t, conn: conn, rd: wire.NewReader(conn, binary.LittleEndian)}
}

// connect dials and authenticates with the server's own record.
func connect(t *testing.T, s *Server) *fakeExtension {
	t.Helper()
	f := dial(t, s)
	f.sendMsg(&wire.Message{T: wire.KindAuth, V: 1, Token: s.rec.Token, Instance: s.rec.Instance, Origin: testOrigin})
	if m := f.recv(); m.T != wire.KindReady {
		t.Fatalf("first frame %s, want ready", m.T)
	}
	return f
}

func (f *fakeExtension) sendRaw(body []byte) {
	f.t.Helper()
	if err := f.writeRaw(body); err != nil {
		f.t.Errorf("fake extension write: %v", err)
	}
}

// sendOversized sends a frame the Runner must refuse from its header: it
// may close the connection before the body is through, so a write error
// is the expected end, not a failure (the caller checks the close).
func (f *fakeExtension) sendOversized(body []byte) {
	f.t.Helper()
	_ = f.writeRaw(body)
}

func (f *fakeExtension) writeRaw(body []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.conn.SetWriteDeadline(time.Now().Add(wait))
	return wire.WriteFrame(f.conn, binary.LittleEndian, body, wire.MaxResponse+1)
}

func (f *fakeExtension) sendMsg(m *wire.Message) {
	f.t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		f.t.Fatal(err)
	}
	f.sendRaw(b)
}

// recv reads the next frame from the Runner.
func (f *fakeExtension) recv() *wire.Message {
	f.t.Helper()
	m, err := f.tryRecv()
	if err != nil {
		f.t.Fatalf("fake extension read: %v", err)
	}
	return m
}

func (f *fakeExtension) tryRecv() (*wire.Message, error) {
	f.conn.SetReadDeadline(time.Now().Add(wait))
	body, err := f.rd.ReadFrame(wire.MaxCommand)
	if err != nil {
		return nil, err
	}
	return wire.Decode(body, wire.FromRunner)
}

// closedByRunner reports whether the Runner closed the connection: the next
// read ends (EOF or reset) rather than timing out.
func (f *fakeExtension) closedByRunner() bool {
	for {
		_, err := f.tryRecv()
		if err == nil {
			continue // frames sent before the close
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// share offers tab and returns the offer id the Runner answers with.
func (f *fakeExtension) share(tab int64) string {
	f.t.Helper()
	f.sendMsg(&wire.Message{T: wire.KindShare, Tab: tab, Target: "TARGET" + strconv.FormatInt(tab, 10), URL: "https://shop.test/" + strconv.FormatInt(tab, 10), Title: "Tab"})
	m := f.recv()
	if m.T != wire.KindOffered || m.Tab != tab || m.Offer == "" {
		f.t.Fatalf("share of tab %d answered %s (%s)", tab, m.T, m.Reason)
	}
	return m.Offer
}

func (f *fakeExtension) answer(id int64, result any) {
	f.t.Helper()
	raw, _ := json.Marshal(result)
	f.sendMsg(&wire.Message{T: wire.KindResponse, ID: id, Result: raw})
}

func (f *fakeExtension) fail(id int64, msg string) {
	f.sendMsg(&wire.Message{T: wire.KindResponse, ID: id, Error: &wire.Error{Code: -32000, Message: msg}})
}

// serve answers the Runner as a well-behaved extension would, until the
// connection ends, recording the commands it forwarded to a "tab".
type served struct {
	mu       sync.Mutex
	commands []string
}

func (sv *served) methods() []string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return append([]string(nil), sv.commands...)
}

func (f *fakeExtension) serve(sv *served, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			f.conn.SetReadDeadline(time.Time{})
			body, err := f.rd.ReadFrame(wire.MaxCommand)
			if err != nil {
				return
			}
			m, err := wire.Decode(body, wire.FromRunner)
			if err != nil {
				f.t.Errorf("the Runner sent a malformed frame: %v", err)
				return
			}
			switch {
			case m.T == wire.KindControl && m.Op == wire.OpAttach:
				f.answer(m.ID, map[string]string{"targetId": "TARGET" + strconv.FormatInt(m.Tab, 10), "url": "https://shop.test/", "title": "Shop"})
			case m.T == wire.KindControl && m.Op == wire.OpTargets:
				f.answer(m.ID, map[string]any{"targetInfos": []map[string]any{{"targetId": "TARGET7", "type": "page", "url": "https://shop.test/", "title": "Shop"}}})
			case m.T == wire.KindControl:
				f.answer(m.ID, map[string]any{})
			case m.T == wire.KindCommand:
				sv.mu.Lock()
				sv.commands = append(sv.commands, m.Method)
				sv.mu.Unlock()
				f.answer(m.ID, map[string]any{"echo": m.Method, "ch": m.Ch})
			}
		}
	}()
}

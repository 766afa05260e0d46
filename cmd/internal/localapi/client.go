package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"sync/atomic"

	"github.com/webcodex/webcodex/fsm"
)

// ErrUnreachable is wrapped by errors when no Runner answers on the socket.
var ErrUnreachable = errors.New("localapi: no Runner answers")

// maxResponseBody bounds a response (screenshots are the largest).
const maxResponseBody = 64 << 20

// Client calls a Runner's local API.
type Client struct {
	Socket string
	// Boundary, when set, is declared on every request: the Runner then
	// shows this client only browsers created under the same boundary.
	Boundary *Boundary
	hc       *http.Client
}

// NewClient returns a client for the Runner whose state root is stateDir.
func NewClient(stateDir string) *Client {
	sock := filepath.Join(stateDir, SocketName)
	return &Client{Socket: sock, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		DisableCompression: true,
	}}}
}

// Ping reports whether a Runner answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := Ping.Call(ctx, c, struct{}{})
	return err
}

// remoteCall sends one typed request to rt over the socket.
func remoteCall[Req, Resp any](ctx context.Context, c *Client, rt Route[Req, Resp], req Req) (Resp, error) {
	name := rt.Name
	var zero Resp
	body, err := json.Marshal(req)
	if err != nil {
		return zero, fmt.Errorf("localapi: encode %s: %w", name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+Host+PathPrefix+name, bytes.NewReader(body))
	if err != nil {
		return zero, err
	}
	hreq.Host = Host
	if c.Boundary != nil {
		bh, err := json.Marshal(c.Boundary)
		if err != nil {
			return zero, fmt.Errorf("localapi: encode the boundary: %w", err)
		}
		hreq.Header.Set(BoundaryHeader, string(bh))
	}
	if err := setRequestHeaders(ctx, hreq.Header); err != nil {
		return zero, fmt.Errorf("localapi: encode the caller: %w", err)
	}
	// Whether the request left decides what a lost answer means: before,
	// the Runner is unreachable; after, an effect may have happened.
	var sent atomic.Bool
	hreq = hreq.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { sent.Store(i.Err == nil) },
	}))
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return zero, lostCall(ctx, rt.Name, rt.Effect, sent.Load(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return zero, lostCall(ctx, rt.Name, rt.Effect, true, err)
	}
	var env struct {
		Result  json.RawMessage `json:"result"`
		Refusal *fsm.Refusal    `json:"refusal"`
		Error   string          `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return zero, fmt.Errorf("localapi: %s: malformed response (status %d): %w", name, resp.StatusCode, err)
	}
	switch {
	case env.Refusal != nil:
		return zero, env.Refusal
	case env.Error != "":
		return zero, &RunnerError{Msg: env.Error}
	case resp.StatusCode != http.StatusOK:
		return zero, fmt.Errorf("localapi: %s: status %d", name, resp.StatusCode)
	}
	var out Resp
	if err := json.Unmarshal(env.Result, &out); err != nil {
		return zero, fmt.Errorf("localapi: decode %s: %w", name, err)
	}
	return out, nil
}

package cdp_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	cdproto "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/gorilla/websocket"

	"github.com/webcodex/webcodex/cdp"
	"github.com/webcodex/webcodex/internal/chromiumtest"
)

// BenchmarkEvaluateConn measures one Runtime.evaluate("1") round trip over a
// flattened page session through Conn. Compare with
// BenchmarkEvaluateRawGorilla, which sends the same message on the same kind
// of session with no Conn in between.
func BenchmarkEvaluateConn(b *testing.B) {
	c := dial(b, cdp.DialOptions{}, cdp.ConnOptions{})
	s := newPage(b, c)
	ctx := context.Background()
	params := cdpruntime.EvaluateParams{Expression: "1"}
	for b.Loop() {
		res, err := cdproto.Call(ctx, s, cdpruntime.Evaluate, params)
		if err != nil {
			b.Fatal(err)
		}
		if string(res.Result.Value) != "1" {
			b.Fatalf("evaluate = %s", res.Result.Value)
		}
	}
}

// BenchmarkEvaluateRawGorilla is the baseline: a write/read loop on a bare
// gorilla connection, attached to a page through the same flattened flow.
func BenchmarkEvaluateRawGorilla(b *testing.B) {
	br := chromiumtest.Shared(b)
	ws, _, err := websocket.DefaultDialer.Dial(br.WebSocketURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	var id int64
	// roundTrip sends a command and reads until its response, skipping events.
	roundTrip := func(msg []byte) []byte {
		id++
		if err := ws.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		want := []byte(`"id":` + strconv.FormatInt(id, 10) + `,`)
		for {
			_, in, err := ws.ReadMessage()
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(in, want) {
				return in
			}
		}
	}
	var created struct {
		Result target.CreateTargetResult `json:"result"`
	}
	if err := jsonv2.Unmarshal(roundTrip([]byte(`{"id":1,"method":"Target.createTarget","params":{"url":"about:blank"}}`)), &created); err != nil {
		b.Fatal(err)
	}
	tid := string(created.Result.TargetID)
	defer func() {
		roundTrip([]byte(`{"id":` + strconv.FormatInt(id+1, 10) + `,"method":"Target.closeTarget","params":{"targetId":"` + tid + `"}}`))
	}()
	var attached struct {
		Result target.AttachToTargetResult `json:"result"`
	}
	if err := jsonv2.Unmarshal(roundTrip([]byte(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"`+tid+`","flatten":true}}`)), &attached); err != nil {
		b.Fatal(err)
	}
	sid := string(attached.Result.SessionID)
	for b.Loop() {
		msg := []byte(`{"id":` + strconv.FormatInt(id+1, 10) + `,"sessionId":"` + sid + `","method":"Runtime.evaluate","params":{"expression":"1"}}`)
		if res := roundTrip(msg); !bytes.Contains(res, []byte(`"value":1`)) {
			b.Fatalf("evaluate = %s", res)
		}
	}
}

// BenchmarkLaunchToReady measures launching Chromium until a connected Conn
// has answered Browser.getVersion, then stops the browser outside the timer.
func BenchmarkLaunchToReady(b *testing.B) {
	for b.Loop() {
		br := chromiumtest.Start(b)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		sock, err := cdp.DialWebSocket(ctx, br.WebSocketURL, cdp.DialOptions{})
		if err != nil {
			b.Fatal(err)
		}
		c := cdp.NewConn(sock, cdp.ConnOptions{})
		if _, err := cdproto.Call(ctx, c.Browser(), browserGetVersion, cdproto.Empty{}); err != nil {
			b.Fatal(err)
		}
		cancel()
		b.StopTimer()
		c.Close()
		br.Close()
		b.StartTimer()
	}
}

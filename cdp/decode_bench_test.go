package cdp

import (
	"testing"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// pageEventMix is a page's usual traffic, with params shaped as Chromium
// sends them: a request with its headers and initiator, its response, its
// end, a console message and a lifecycle event.
var pageEventMix = []struct{ method, params string }{
	{"Network.requestWillBeSent", `{"requestId":"1000.12","loaderId":"L1","documentURL":"http://127.0.0.1:8080/page","request":{"url":"http://127.0.0.1:8080/app.js","method":"GET","headers":{"Accept":"*/*","User-Agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36","Referer":"http://127.0.0.1:8080/page","sec-ch-ua":"\"Chromium\";v=\"156\""},"initialPriority":"High","referrerPolicy":"strict-origin-when-cross-origin","isSameSite":true},"timestamp":1234.5,"wallTime":1760000000.1,"initiator":{"type":"parser","url":"http://127.0.0.1:8080/page","lineNumber":3,"columnNumber":12},"redirectHasExtraInfo":false,"type":"Script","frameId":"F1","hasUserGesture":false}`},
	{"Network.responseReceived", `{"requestId":"1000.12","loaderId":"L1","timestamp":1234.6,"type":"Script","response":{"url":"http://127.0.0.1:8080/app.js","status":200,"statusText":"OK","headers":{"Content-Type":"text/javascript","Content-Length":"1234"},"mimeType":"text/javascript","charset":"","connectionReused":true,"connectionId":12,"remoteIPAddress":"127.0.0.1","remotePort":8080,"fromDiskCache":false,"fromServiceWorker":false,"fromPrefetchCache":false,"encodedDataLength":1400,"protocol":"http/1.1","securityState":"secure"},"hasExtraInfo":true,"frameId":"F1"}`},
	{"Network.loadingFinished", `{"requestId":"1000.12","timestamp":1234.7,"encodedDataLength":1400}`},
	{"Runtime.consoleAPICalled", `{"type":"log","args":[{"type":"string","value":"loaded app"},{"type":"number","value":42,"description":"42"}],"executionContextId":3,"timestamp":1760000000123.4,"stackTrace":{"callFrames":[{"functionName":"","scriptId":"12","url":"http://127.0.0.1:8080/app.js","lineNumber":0,"columnNumber":8}]}}`},
	{"Page.lifecycleEvent", `{"frameId":"F1","loaderId":"L1","name":"load","timestamp":1234.8}`},
}

// BenchmarkEventDecode times decoding the mix to cdproto's types (what
// Events does, once per event) against decoding only the fields the surface
// read with its former hand-written structs; typed/fields is the ratio.
func BenchmarkEventDecode(b *testing.B) {
	type fields struct {
		RequestID string `json:"requestId"`
		Type      string `json:"type"`
		Request   struct {
			URL    string `json:"url"`
			Method string `json:"method"`
		} `json:"request"`
		Response struct {
			Status int64 `json:"status"`
		} `json:"response"`
		Args []struct {
			Type  string       `json:"type"`
			Value jsonv2.Value `json:"value"`
		} `json:"args"`
		Context int64  `json:"executionContextId"`
		FrameID string `json:"frameId"`
		Name    string `json:"name"`
	}
	var typed, hand time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		for _, e := range pageEventMix {
			if _, err := decodeEvent(e.method, jsonv2.Value(e.params)); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for _, e := range pageEventMix {
			var f fields
			if err := jsonv2.Unmarshal(jsonv2.Value(e.params), &f); err != nil {
				b.Fatal(err)
			}
		}
		typed, hand = typed+t1.Sub(t0), hand+time.Since(t1)
		n += len(pageEventMix)
	}
	b.ReportMetric(float64(typed.Nanoseconds())/float64(n), "typed-ns/event")
	b.ReportMetric(float64(hand.Nanoseconds())/float64(n), "fields-ns/event")
	b.ReportMetric(float64(typed)/float64(hand), "typed/fields")
}

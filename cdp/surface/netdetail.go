package surface

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"

	"github.com/webcodex/webcodex/fsm"
)

// Bounds of one request's details.
const (
	// MaxHeaderChars bounds the headers kept of a request or a response
	// (names and values); the rest are dropped and the detail says so.
	MaxHeaderChars = 8000
	// MaxRequestBodyChars bounds the request body kept of a request.
	MaxRequestBodyChars = 8000
	// MaxResponseBodyChars bounds the response body read of a request.
	MaxResponseBodyChars = 20000
)

// RequestParts are the parts of a request's details one may ask for alone.
var RequestParts = []string{"request-headers", "request-body", "response-headers", "response-body"}

// withheldHeaders are headers whose values are credentials: named, never
// shown.
var withheldHeaders = map[string]bool{"cookie": true, "set-cookie": true, "authorization": true, "proxy-authorization": true}

// Header is one HTTP header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// requestDetail is what the log keeps of a request beyond its entry.
type requestDetail struct {
	reqHeaders, respHeaders []Header
	reqCut, respCut         bool
	postData                string
	postCut, hasPost        bool
	mimeType                string
	finished                bool
}

// RequestDetail is one request of the network log with its headers and
// bodies, bounded. Credentials (cookies, authorization) are named with
// their values withheld, and URLs of denied origins in header values are
// replaced.
type RequestDetail struct {
	Entry           DiagEntry `json:"entry"`
	RequestHeaders  []Header  `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header  `json:"responseHeaders,omitempty"`
	RequestBody     string    `json:"requestBody,omitempty"`
	ResponseBody    string    `json:"responseBody,omitempty"`
	MimeType        string    `json:"mimeType,omitempty"`
	// Truncated names the parts cut at their bound.
	Truncated []string `json:"truncated,omitempty"`
	// Notes say why a part asked for is not shown.
	Notes []string `json:"notes,omitempty"`
}

// keptHeaders returns h sorted by name, credentials withheld, within
// MaxHeaderChars (cut: some were dropped).
func keptHeaders(h network.Headers) ([]Header, bool) {
	out := make([]Header, 0, len(h))
	used, cut := 0, false
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		v := ""
		switch x := h[name].(type) {
		case string:
			v = x
		default:
			continue
		}
		if withheldHeaders[strings.ToLower(name)] {
			v = "(withheld)"
		}
		if used+len(name)+len(v) > MaxHeaderChars {
			cut = true
			continue
		}
		used += len(name) + len(v)
		out = append(out, Header{Name: name, Value: v})
	}
	return out, cut
}

// noteRequest keeps a request's headers and body (requestWillBeSent).
func noteRequest(e *DiagEntry, r *network.Request) {
	d := &requestDetail{hasPost: r.HasPostData}
	d.reqHeaders, d.reqCut = keptHeaders(r.Headers)
	for _, pe := range r.PostDataEntries {
		if pe != nil {
			d.postData += string(pe.Bytes)
		}
	}
	if len(d.postData) > MaxRequestBodyChars {
		d.postData, d.postCut = capString(d.postData, MaxRequestBodyChars), true
	}
	e.detail = d
}

// noteResponse keeps a response's headers and type (responseReceived).
func noteResponse(e *DiagEntry, r *network.Response) {
	if e.detail == nil {
		e.detail = &requestDetail{}
	}
	e.detail.respHeaders, e.detail.respCut = keptHeaders(r.Headers)
	e.detail.mimeType = r.MimeType
}

// RequestDetails returns the request seq of the network log (its Seq, as
// Network lists it) with its details, or only part (one of RequestParts)
// of them. A request the Judge refuses — its document's origin or its own
// — is not found, like one never logged or already dropped from the log.
// The response body is read from the browser, within MaxResponseBodyChars;
// a binary one is not shown.
func (p *Page) RequestDetails(ctx context.Context, seq uint64, part string) (*RequestDetail, error) {
	if part != "" && !slices.Contains(RequestParts, part) {
		return nil, fsm.Refusef(fsm.InvalidArgument, "part is one of %s", strings.Join(RequestParts, ", "))
	}
	v := newVerdicts(p.opts.Judge)
	d := &p.diag
	d.mu.Lock()
	var e DiagEntry
	var det requestDetail
	found := false
	for _, x := range d.network.entries {
		if x.Seq == seq && v.visible(&x) {
			e, found = x, true
			if x.detail != nil {
				det = *x.detail
			}
			if _, open := d.requests[x.reqID]; !open {
				det.finished = true
			}
		}
	}
	d.mu.Unlock()
	if !found {
		return nil, fsm.Refusef(fsm.NotFound, "no request %d in the page's network log (browser_network_requests lists them by seq; the log keeps the last %d)", seq, DiagCapacity)
	}
	out := &RequestDetail{Entry: e, MimeType: det.mimeType}
	want := func(p string) bool { return part == "" || part == p }
	redact := func(hs []Header) []Header {
		for i := range hs {
			hs[i].Value = v.redact(hs[i].Value)
		}
		return hs
	}
	if want("request-headers") {
		out.RequestHeaders = redact(det.reqHeaders)
		out.cut(det.reqCut, "request-headers")
	}
	if want("response-headers") {
		out.ResponseHeaders = redact(det.respHeaders)
		out.cut(det.respCut, "response-headers")
	}
	if want("request-body") {
		out.RequestBody = det.postData
		out.cut(det.postCut, "request-body")
		if det.hasPost && det.postData == "" {
			out.Notes = append(out.Notes, "request-body: the browser did not report it")
		}
	}
	if want("response-body") {
		p.responseBody(ctx, e, det, out)
	}
	return out, nil
}

func (r *RequestDetail) cut(cut bool, part string) {
	if cut {
		r.Truncated = append(r.Truncated, part)
	}
}

// responseBody reads the response body of a finished request into out, or
// says why there is none.
func (p *Page) responseBody(ctx context.Context, e DiagEntry, det requestDetail, out *RequestDetail) {
	note := func(s string) { out.Notes = append(out.Notes, "response-body: "+s) }
	switch {
	case e.Failed != "":
		note("the request failed")
		return
	case !det.finished:
		note("the response has not finished loading")
		return
	}
	res, err := cdproto.Call(ctx, p.sess, network.GetResponseBody, network.GetResponseBodyParams{RequestID: network.RequestID(e.reqID)})
	if err != nil {
		note("the browser no longer holds it (a redirect, no body, or evicted)")
		return
	}
	if !utf8.Valid(res.Body) {
		note("binary, not shown")
		return
	}
	body := string(res.Body)
	if len(body) > MaxResponseBodyChars {
		body = capString(body, MaxResponseBodyChars)
		out.Truncated = append(out.Truncated, "response-body")
	}
	out.ResponseBody = body
}

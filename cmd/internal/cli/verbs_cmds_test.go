package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/cmd/internal/op"
)

// verbsCase is one command line of history, tabs or downloads: the
// requests it must send, route by route, and a line of its human form.
type verbsCase struct {
	name  string
	args  []string
	want  map[string]any // route name -> request
	serve func(*fakeRunner)
	human string
}

func verbsCases() []verbsCase {
	nav := localapi.NavResult{Page: "p-1", URL: "https://a.example/", Title: "A"}
	list := localapi.DownloadsResult{Browser: "b-1", Downloads: []localapi.DownloadInfo{
		{ID: "d1", FileName: "report.txt", State: "completed", ReceivedBytes: 18, TotalBytes: 18},
		{ID: "d2", FileName: "big.bin", State: "canceled", ReceivedBytes: 262144, Reason: "over_cap"},
	}}
	history := func(verb string, o *op.Op[op.HistoryIn, op.NavResult]) verbsCase {
		return verbsCase{name: verb, args: []string{verb, "p-1"}, want: map[string]any{o.Name: op.HistoryIn{OnPage: op.OnPage{Page: "p-1"}}},
			serve: func(f *fakeRunner) { answer(f, localapi.Of(o), nav, nil) }, human: "https://a.example/"}
	}
	return []verbsCase{
		history("back", op.Back),
		history("forward", op.Forward),
		history("reload", op.Reload),
		{name: "tabs", args: []string{"tabs", "b-1"}, want: map[string]any{"pages": localapi.BrowserRequest{Browser: "b-1"}},
			serve: func(f *fakeRunner) { answer(f, localapi.Pages, []localapi.PageInfo{page1}, nil) }, human: "p-1"},
		{name: "tabs-new", args: []string{"tabs", "new", "b-1", "https://a.example/"}, want: map[string]any{"open": localapi.OpenRequest{Browser: "b-1", URL: "https://a.example/"}},
			serve: func(f *fakeRunner) { answer(f, localapi.Open, page1, nil) }, human: "page p-1"},
		{name: "tabs-select", args: []string{"tabs", "select", "p-1"}, want: map[string]any{"activate": localapi.PageRequest{Page: "p-1"}},
			serve: func(f *fakeRunner) { answer(f, localapi.Activate, page1, nil) }, human: "tab p-1"},
		{name: "tabs-close", args: []string{"tabs", "close", "p-1"}, want: map[string]any{"close_page": localapi.ClosePageRequest{Page: "p-1"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.ClosePage, zeroOf(localapi.ClosePage), nil)
			}, human: "closed p-1"},
		{name: "tabs-handover", args: []string{"tabs", "handover", "b-1", "p-1"}, want: map[string]any{"handover": localapi.HandoverRequest{Browser: "b-1", Page: "p-1"}},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Handover, localapi.HandoverResult{Browser: "b-1", Pages: []string{"p-1"}}, nil)
			}, human: "handed over p-1"},
		{name: "downloads", args: []string{"downloads", "b-1", "--wait", "5"}, want: map[string]any{"downloads": localapi.DownloadsRequest{Browser: "b-1", WaitMS: 5000}},
			serve: func(f *fakeRunner) { answer(f, localapi.Downloads, list, nil) }, human: "canceled (over_cap)"},
		{name: "downloads-save", args: []string{"downloads", "b-1", "--id", "d1", "--save", "/tmp/keep"},
			want: map[string]any{
				"downloads":     localapi.DownloadsRequest{Browser: "b-1", ID: "d1"},
				"save_download": localapi.SaveDownloadRequest{Browser: "b-1", ID: "d1", Dir: "/tmp/keep"},
			},
			serve: func(f *fakeRunner) {
				answer(f, localapi.Downloads, list, nil)
				answer(f, localapi.SaveDownload, localapi.SaveDownloadResult{Browser: "b-1", ID: "d1", Path: "/tmp/keep/report.txt", Bytes: 18}, nil)
			}, human: "saved d1 (18 bytes)"},
	}
}

// TestVerbsCmdsAgainstAFakeRunner: history, tabs and downloads send exactly
// the requests their arguments say, and present the answer in --json (the
// route's result) and in human form.
func TestVerbsCmdsAgainstAFakeRunner(t *testing.T) {
	for _, c := range verbsCases() {
		t.Run(c.name, func(t *testing.T) {
			fr := newFakeRunner()
			c.serve(fr)
			code, out, errs := runFake(fr, append(c.args, "--json")...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			delete(fr.got, localapi.Ping.Name)
			if !reflect.DeepEqual(fr.got, c.want) {
				t.Errorf("requests:\ngot  %#v\nwant %#v", fr.got, c.want)
			}
			if !json.Valid([]byte(out)) {
				t.Errorf("--json output is not JSON: %q", out)
			}
			fr = newFakeRunner()
			c.serve(fr)
			code, out, errs = runFake(fr, c.args...)
			if code != ExitOK || !strings.Contains(out, c.human) {
				t.Errorf("human form: exit %d, stdout %q (stderr %q), want it to contain %q", code, out, errs, c.human)
			}
		})
	}
}

// TestVerbsCmdsUsageMistakes: a command line these verbs refuse sends
// nothing.
func TestVerbsCmdsUsageMistakes(t *testing.T) {
	for _, args := range [][]string{
		{"downloads", "b-1", "--save", "/tmp/keep"},
		{"downloads", "b-1", "--wait", "-1"},
		{"tabs", "handover"},
		{"back"},
	} {
		fr := newFakeRunner()
		answer(fr, localapi.Downloads, localapi.DownloadsResult{}, nil)
		if code, _, _ := runFake(fr, args...); code != ExitUsage || len(fr.got) != 0 {
			t.Errorf("%v: exit %d, routes called %v; want %d and none", args, code, keys(fr.got), ExitUsage)
		}
	}
}

// zeroOf is the zero result of a route, whatever its type.
func zeroOf[Req, Resp any](localapi.Route[Req, Resp]) Resp {
	var zero Resp
	return zero
}

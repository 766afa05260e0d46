package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// dialogPage asks a prompt() when its button is clicked and writes the
// answer where a read can find it; its server logs the answer too, so the
// test reads the page's own state, not the tool's claim.
const dialogPage = `<!doctype html><title>dialog</title>
<button onclick="document.getElementById('out').textContent = 'answer:' + prompt('Your name?', 'x')">Ask</button>
<p id="out">none</p>`

// TestDialogAnsweredThroughCLI: a prompt() opened on an allowed page blocks
// every script of the page; `webcodex dialog` still reports it and answers
// it (before, every verb, the dialog verb included, answered
// browser_dialog_open and the page stayed locked).
func TestDialogAnsweredThroughCLI(t *testing.T) {
	t.Parallel() // its own state directory, Runner and browser
	e := newEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, dialogPage)
	}))
	defer srv.Close()
	var b localapi.BrowserInfo
	e.json(&b, "launch", "--allow", srv.URL)
	var p localapi.PageInfo
	e.json(&p, "open", b.ID, srv.URL+"/")
	var clicked struct {
		Dialog *struct{ Type, Message string }
	}
	e.json(&clicked, "click", p.ID, "--role", "button", "--name", "Ask")
	var report struct {
		Dialog *struct{ Type, Message string }
	}
	waitfor.Until(t, 10*time.Second, "the dialog is reported", func() bool {
		e.json(&report, "dialog", p.ID)
		return report.Dialog != nil
	})
	if report.Dialog.Type != "prompt" || report.Dialog.Message != "Your name?" {
		t.Fatalf("dialog report = %+v", report.Dialog)
	}
	e.refused("browser_dialog_open", "read", p.ID)
	var answered struct{ Accepted bool }
	e.json(&answered, "dialog", p.ID, "--accept", "--text", "Ada")
	if !answered.Accepted {
		t.Fatalf("dialog answer = %+v", answered)
	}
	var rd localapi.ReadResult
	waitfor.Until(t, 10*time.Second, "the page saw the answer", func() bool {
		e.json(&rd, "read", p.ID)
		return strings.Contains(rd.Text, "answer:Ada")
	})
	e.refused("not_found", "dialog", p.ID, "--dismiss")
}

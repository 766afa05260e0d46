package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/fsm"
	"github.com/webcodex/webcodex/internal/waitfor"
)

// objectHandles are what a by-value answer never holds.
var objectHandles = []string{`"objectId"`, `"preview"`, `"customPreview"`, `"deepSerializedValue"`}

// TestRawEvaluateUnderAnAllowlistIsByValueOnly sends every variant of raw
// Runtime.evaluate through the Runner to real Chromium, in an owned browser
// under --allow whose allowed page embeds frames of two denied origins:
// returnByValue left out (sent as true), true, false (refused),
// generatePreview (refused), thrown objects, errors, DOM nodes and windows,
// and promises resolved and rejected, awaited or not. No answer or refusal
// the agent gets holds an object id or a preview, a thrown object comes back
// as its description string, and values still come back. The same
// expression on the open web answers with an object id (the attack is
// real).
func TestRawEvaluateUnderAnAllowlistIsByValueOnly(t *testing.T) {
	t.Parallel() // its own Runner and browsers
	h := newHarness(t)
	o := newOrigins3(t)
	ctx := context.Background()

	open, err := h.r.Launch(ctx, localapi.LaunchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	op, err := h.r.Open(ctx, localapi.OpenRequest{Browser: open.ID, URL: o.allowedURL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	control, err := rawCDP(h, op.ID, "Runtime.evaluate", `{"expression":"document.body","generatePreview":true}`)
	if err != nil || !strings.Contains(string(control), `"objectId"`) || !strings.Contains(string(control), `"preview"`) {
		t.Fatalf("on the open web a node comes back as %s, %v: the control does not show handles", control, err)
	}

	b, err := h.r.Launch(ctx, localapi.LaunchRequest{Allow: []string{o.allowedURL}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.r.Open(ctx, localapi.OpenRequest{Browser: b.ID, URL: o.allowedURL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 20*time.Second, "the allowed page loaded", func() bool {
		return strings.Contains(evalRaw(t, h, p.ID, `document.readyState`), "complete")
	})

	var seen []string
	send := func(params string) (json.RawMessage, error) {
		t.Helper()
		res, err := rawCDP(h, p.ID, "Runtime.evaluate", params)
		seen = append(seen, params+" → "+string(res))
		if err != nil {
			seen = append(seen, err.Error())
		}
		return res, err
	}

	// Values: every shape of result, with returnByValue left out and true.
	values := []string{
		"window", "document", "document.body", "frames[0]", "frames[1]", "document.querySelectorAll('iframe')",
		"({a: 1, node: document.body})", "[1, 2, 3]", "Symbol('s')", "() => 1", "new Map([[1, 2]])", "1n",
		"new Error('plain')", "Promise.resolve(1)", "'text'", "42", "null", "undefined",
	}
	for _, expr := range values {
		for _, extra := range []string{``, `,"returnByValue":true`, `,"objectGroup":"g"`} {
			if _, err := send(fmt.Sprintf(`{"expression":%q%s}`, expr, extra)); err != nil && !fsm.IsCode(err, fsm.InvalidArgument) {
				t.Errorf("%s%s: %v", expr, extra, err)
			}
		}
	}
	res, err := send(`{"expression":"({n: 7, s: 'x', list: [1, 'y']})"}`)
	if err != nil || !strings.Contains(string(res), `"value":{"list":[1,"y"],"n":7,"s":"x"}`) && !strings.Contains(string(res), `"value":{"n":7,"s":"x","list":[1,"y"]}`) {
		t.Errorf("an object literal without returnByValue came back as %s, %v; want it by value", res, err)
	}

	// Refused before anything is sent.
	for _, params := range []string{
		`{"expression":"document.body","returnByValue":false}`,
		`{"expression":"document.body","generatePreview":true}`,
		`{"expression":"document.body","generatePreview":true,"returnByValue":true}`,
		`{"expression":"document.body","serializationOptions":{"serialization":"idOnly"}}`,
	} {
		if _, err := send(params); !fsm.IsCode(err, fsm.PolicyDenied) {
			t.Errorf("%s = %v; want %s", params, err, fsm.PolicyDenied)
		}
	}

	// Thrown: an error, a plain object, a node, a window, a function; and
	// promises rejected with them, awaited.
	thrown := []struct{ expr, want string }{
		{"throw new Error('boom')", "Error: boom"},
		{"throw {secret: 1}", "Object"},
		{"throw document.body", "body"},
		{"throw frames[0]", "Window"},
		{"throw function f() {}", "function f() {}"},
		{"Promise.reject(new TypeError('nope'))", "TypeError: nope"},
		{"Promise.reject(document.body)", "body"},
		{"(async () => { throw {deep: {er: 1}} })()", "Object"},
	}
	for _, c := range thrown {
		for _, extra := range []string{`,"awaitPromise":true`, `,"awaitPromise":true,"returnByValue":true`} {
			if strings.HasPrefix(c.expr, "throw") && strings.Contains(extra, "returnByValue") {
				continue
			}
			res, err := send(fmt.Sprintf(`{"expression":%q%s}`, c.expr, extra))
			if err != nil {
				t.Errorf("%s: %v", c.expr, err)
				continue
			}
			var out struct {
				ExceptionDetails *struct {
					Exception map[string]any `json:"exception"`
				} `json:"exceptionDetails"`
			}
			if err := json.Unmarshal(res, &out); err != nil || out.ExceptionDetails == nil {
				t.Errorf("%s: no exception in %s", c.expr, res)
				continue
			}
			e := out.ExceptionDetails.Exception
			if v, _ := e["value"].(string); e["type"] != "string" || len(e) != 2 || !strings.Contains(v, c.want) {
				t.Errorf("%s: the thrown value came back as %v; want the string %q only", c.expr, e, c.want)
			}
		}
	}

	// Promises resolved, awaited or not: by value either way.
	for _, expr := range []string{"Promise.resolve(document.body)", "Promise.resolve(frames[0])", "Promise.resolve({v: 3})", "new Promise(r => setTimeout(() => r(window), 10))"} {
		for _, extra := range []string{``, `,"awaitPromise":true`, `,"awaitPromise":false`} {
			if _, err := send(fmt.Sprintf(`{"expression":%q%s}`, expr, extra)); err != nil && !fsm.IsCode(err, fsm.InvalidArgument) {
				t.Errorf("%s%s: %v", expr, extra, err)
			}
		}
	}
	res, err = send(`{"expression":"Promise.resolve({v: 3})","awaitPromise":true}`)
	if err != nil || !strings.Contains(string(res), `"value":{"v":3}`) {
		t.Errorf("an awaited promise came back as %s, %v; want its value", res, err)
	}

	all := strings.Join(seen, "\n")
	for _, h := range objectHandles {
		if strings.Contains(all, h) {
			t.Fatalf("an answer under the allowlist holds %s:\n%s", h, all)
		}
	}
	for _, secret := range []string{o.secretB, o.secretC} {
		if strings.Contains(all, secret) {
			t.Fatalf("a denied frame's secret reached the agent:\n%s", all)
		}
	}
}

package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeKindsByDirection(t *testing.T) {
	t.Parallel()
	tok, inst := strings.Repeat("ab", 32), strings.Repeat("cd", 16)
	ok := []struct {
		dir  Direction
		body string
	}{
		{FromHost, `{"t":"auth","v":1,"token":"` + tok + `","instance":"` + inst + `","origin":"chrome-extension://abc/"}`},
		{FromExtension, `{"t":"res","id":3,"result":{}}`},
		{FromExtension, `{"t":"res","id":3,"error":{"code":-32000,"message":"no"}}`},
		{FromExtension, `{"t":"ev","ch":1,"method":"Runtime.consoleAPICalled","params":{"type":"log"}}`},
		{FromExtension, `{"t":"share","tab":5,"target":"ABC","url":"https://example.test/","title":"x"}`},
		{FromExtension, `{"t":"revoke","tab":5}`},
		{FromExtension, `{"t":"detached","tab":5,"ch":2,"reason":"tab_closed"}`},
		{FromRunner, `{"t":"ready","v":1}`},
		{FromRunner, `{"t":"cmd","id":1,"ch":2,"method":"Page.enable","params":{}}`},
		{FromRunner, `{"t":"ctl","id":1,"ch":2,"op":"attach","offer":"o1","tab":5}`},
		{FromRunner, `{"t":"offered","tab":5,"offer":"o1"}`},
		{FromRunner, `{"t":"ended","tab":5,"offer":"o1","reason":"offer_expired"}`},
	}
	for _, tc := range ok {
		if _, err := Decode([]byte(tc.body), tc.dir); err != nil {
			t.Errorf("Decode(%s) = %v", tc.body, err)
		}
	}
	bad := []struct {
		dir  Direction
		body string
		why  string
	}{
		{FromExtension, `{"t":"cmd","id":1,"ch":2,"method":"Browser.close"}`, "the extension sends no commands"},
		{FromRunner, `{"t":"res","id":3,"result":{}}`, "the Runner sends no responses"},
		{FromExtension, `{"t":"auth","v":1,"token":"` + tok + `","instance":"` + inst + `"}`, "auth comes from the host only"},
		{FromHost, `{"t":"auth","v":2,"token":"` + tok + `","instance":"` + inst + `"}`, "version 2"},
		{FromHost, `{"t":"auth","v":1,"token":"abc","instance":"` + inst + `"}`, "short token"},
		{FromExtension, `{"t":"res","id":1.5,"result":{}}`, "fractional id"},
		{FromExtension, `{"t":"res","id":"1","result":{}}`, "string id"},
		{FromExtension, `{"t":"res","id":1e3,"result":{}}`, "exponent id"},
		{FromExtension, `{"t":"res","id":9007199254740992,"result":{}}`, "id above 2^53-1"},
		{FromExtension, `{"t":"res","id":-1,"result":{}}`, "negative id"},
		{FromExtension, `{"t":"res","id":1}`, "neither result nor error"},
		{FromExtension, `{"t":"res","id":1,"result":{},"error":{"code":1,"message":""}}`, "both result and error"},
		{FromExtension, `{"t":"res","id":1,"result":[]}`, "result not an object"},
		{FromExtension, `{"t":"ev","ch":1,"method":"not a method"}`, "method name"},
		{FromExtension, `{"t":"ev","ch":1,"method":"Log.entryAdded","extra":1}`, "unknown member"},
		{FromExtension, `{"t":"ev","ch":1,"method":"Log.entryAdded","token":"x"}`, "credentials outside auth"},
		{FromExtension, `{"t":"detached","tab":5,"reason":"target_closed"}`, "raw Chrome reason instead of a fixed code"},
		{FromRunner, `{"t":"ctl","id":1,"ch":2,"op":"close_browser"}`, "a control outside the closed set"},
		{FromRunner, `{"t":"ctl","id":1,"ch":2,"op":"attach"}`, "attach without an offer"},
		{FromExtension, `{"t":"ev","ch":1,"method":"Log.entryAdded","T":"res"}`, "case-duplicate kind"},
	}
	for _, tc := range bad {
		if _, err := Decode([]byte(tc.body), tc.dir); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want malformed", tc.why, err)
		}
	}
}

// TestDecodeKindLimitsAtAndOverBound builds a message of each class
// exactly at its limit and one byte over.
func TestDecodeKindLimitsAtAndOverBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir    Direction
		prefix string
		suffix string
		limit  int
	}{
		{FromExtension, `{"t":"ev","ch":1,"method":"Log.entryAdded","params":{"p":"`, `"}}`, MaxEvent},
		{FromExtension, `{"t":"res","id":1,"result":{"p":"`, `"}}`, MaxResponse},
		{FromRunner, `{"t":"cmd","id":1,"ch":1,"method":"Runtime.evaluate","params":{"p":"`, `"}}`, MaxCommand},
	} {
		fill := tc.limit - len(tc.prefix) - len(tc.suffix)
		at := tc.prefix + strings.Repeat("x", fill) + tc.suffix
		if _, err := Decode([]byte(at), tc.dir); err != nil {
			t.Errorf("%s at %d bytes: %v", tc.prefix[:12], len(at), err)
		}
		over := tc.prefix + strings.Repeat("x", fill+1) + tc.suffix
		if _, err := Decode([]byte(over), tc.dir); !errors.Is(err, ErrFrameTooLarge) {
			t.Errorf("%s at %d bytes: %v, want too large", tc.prefix[:12], len(over), err)
		}
	}
	if MaxInbound(false) != MaxEvent || MaxInbound(true) != MaxResponse {
		t.Fatal("MaxInbound: a response-sized frame only while one is awaited")
	}
}

func TestEncodeChecksLimit(t *testing.T) {
	t.Parallel()
	m := &Message{T: KindCommand, ID: 1, Ch: 1, Method: "Runtime.evaluate", Params: []byte(`{"p":"` + strings.Repeat("x", MaxCommand) + `"}`)}
	if _, err := Encode(m); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Encode over MaxCommand: %v", err)
	}
	m.Params = []byte(`{"p":1}`)
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b, FromRunner); err != nil {
		t.Fatalf("round trip: %v", err)
	}
}

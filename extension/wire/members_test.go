package wire

import (
	"errors"
	"strings"
	"testing"
)

// TestMemberNamesAreCaseSensitive: a handshake (or any frame) whose member
// is named in another case than spec/bridge-protocol.md spells it is
// refused, though encoding/json alone would read it as the right one.
func TestMemberNamesAreCaseSensitive(t *testing.T) {
	t.Parallel()
	tok, inst := strings.Repeat("ab", 32), strings.Repeat("cd", 16)
	auth := func(t, v, token, instance, origin string) string {
		return `{"` + t + `":"auth","` + v + `":1,"` + token + `":"` + tok + `","` + instance + `":"` + inst + `","` + origin + `":"chrome-extension://abc/"}`
	}
	if _, err := Decode([]byte(auth("t", "v", "token", "instance", "origin")), FromHost); err != nil {
		t.Fatalf("the exact handshake = %v", err)
	}
	for name, c := range map[string]struct {
		dir  Direction
		body string
	}{
		"Type":            {FromHost, `{"Type":"auth","v":1,"token":"` + tok + `","instance":"` + inst + `","origin":"chrome-extension://abc/"}`},
		"T":               {FromHost, auth("T", "v", "token", "instance", "origin")},
		"V":               {FromHost, auth("t", "V", "token", "instance", "origin")},
		"Token":           {FromHost, auth("t", "v", "Token", "instance", "origin")},
		"TOKEN":           {FromHost, auth("t", "v", "TOKEN", "instance", "origin")},
		"Instance":        {FromHost, auth("t", "v", "token", "Instance", "origin")},
		"Origin":          {FromHost, auth("t", "v", "token", "instance", "Origin")},
		"Ready's V":       {FromRunner, `{"t":"ready","V":1}`},
		"Result":          {FromExtension, `{"t":"res","id":3,"Result":{}}`},
		"error's Code":    {FromExtension, `{"t":"res","id":3,"error":{"Code":-32000,"message":"no"}}`},
		"error's MESSAGE": {FromExtension, `{"t":"res","id":3,"error":{"code":-32000,"MESSAGE":"no"}}`},
		"Method":          {FromExtension, `{"t":"ev","ch":1,"Method":"Page.loadEventFired"}`},
	} {
		if _, err := Decode([]byte(c.body), c.dir); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode(%s) = %v, want %v", name, c.body, err, ErrMalformed)
		}
	}
}

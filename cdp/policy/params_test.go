package policy

import (
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

func TestCheckParamsKeepsRawCDPInTheMainDocument(t *testing.T) {
	cases := []struct {
		method, params string
		denied         bool
	}{
		{"Runtime.evaluate", `{"expression":"1"}`, false},
		{"Runtime.evaluate", `{"expression":"1","contextId":7}`, true},
		{"Runtime.evaluate", `{"expression":"1","uniqueContextId":"x"}`, true},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"f","executionContextId":3}`, true},
		{"DOM.getDocument", `{"depth":-1}`, false},
		{"DOM.getDocument", `{"depth":-1,"pierce":true}`, true},
		{"DOM.getDocument", `{"pierce":false}`, false},
		{"DOM.describeNode", `{"nodeId":1,"pierce":true}`, true},
		{"Page.captureScreenshot", `{}`, false},
		{"Page.captureScreenshot", ``, false},
		{"DOMSnapshot.captureSnapshot", `{"computedStyles":[]}`, true},
		{"Page.getFrameTree", ``, true},
		{"Page.getResourceTree", ``, true},
		{"DOM.getFrameOwner", `{"frameId":"ABC"}`, true},
	}
	for _, c := range cases {
		err := CheckParams(c.method, []byte(c.params))
		if c.denied != fsm.IsCode(err, fsm.PolicyDenied) || (!c.denied && err != nil) {
			t.Errorf("CheckParams(%s, %s) = %v, denied want %v", c.method, c.params, err, c.denied)
		}
	}
	if err := CheckParams("DOM.getDocument", []byte(`[1]`)); !fsm.IsCode(err, fsm.InvalidArgument) {
		t.Errorf("non-object params = %v", err)
	}
}

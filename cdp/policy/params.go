package policy

import (
	"encoding/json"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// frameAddressing are parameters through which a raw command reaches past
// the page's main document into another frame's document or world: an
// execution context id (guessable small integers), a piercing DOM walk, or
// a frame id. Raw page CDP acts on the main document only; the page verbs
// (snapshot, click, …) reach frames through the origin gate, frame by frame.
var frameAddressing = map[string]string{
	"contextId":          "an execution context id can name another frame's world",
	"uniqueContextId":    "an execution context id can name another frame's world",
	"executionContextId": "an execution context id can name another frame's world",
	"frameId":            "a frame id can address another frame's document",
	"pierce":             "a piercing walk enters iframe documents of other origins",
}

// frameWide are commands whose result covers every frame of the page, so
// they would read frames the origin gate hides.
var frameWide = map[string]string{
	"DOMSnapshot.captureSnapshot": "captures every frame of the page, including frames the origin gate hides",
	"DOMSnapshot.getSnapshot":     "captures every frame of the page, including frames the origin gate hides",
	"Page.getFrameTree":           "lists the URLs of frames the origin gate hides",
	"Page.getResourceTree":        "lists the URLs of frames and resources the origin gate hides",
}

// CheckParams refuses a raw command that addresses a document other than the
// page's main one, by its parameters or because it spans every frame. params
// is the command's JSON object (or empty). The refusal names the parameter
// and why; it never echoes values.
func CheckParams(method string, params []byte) error {
	if why, ok := frameWide[method]; ok {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld from raw CDP: it %s", method, why)
	}
	if len(params) == 0 {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(params, &top); err != nil {
		return fsm.Refuse(fsm.InvalidArgument, "params must be a JSON object")
	}
	for key, val := range top {
		why, ok := frameAddressing[key]
		if !ok {
			continue
		}
		if key == "pierce" && strings.TrimSpace(string(val)) != "true" {
			continue // pierce:false stays in the main document
		}
		return fsm.Refusef(fsm.PolicyDenied, "raw CDP acts on the page's main document only: the parameter %q is withheld (%s); use the page verbs for frames", key, why)
	}
	return nil
}

// FrameWideCommands lists the commands CheckParams withholds whole, sorted,
// for spec/cdp-policy.md.
func FrameWideCommands() []CommandRule { return sortedRules(frameWide) }

// FrameAddressingParams lists the parameters CheckParams withholds, sorted.
func FrameAddressingParams() []CommandRule { return sortedRules(frameAddressing) }

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/webcodex/webcodex/fsm"
)

// CheckParams judges a raw command's parameters at tier: params must be
// empty, null or one JSON object with no duplicate key at any depth
// (fsm.InvalidArgument otherwise, before anything is sent), and each of its
// keys must be a parameter the table allows for method at tier, with an
// allowed value (fsm.PolicyDenied otherwise). Refusals name the parameter,
// never its value. Call it after [Check].
func CheckParams(method string, tier Tier, params []byte) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return nil
	}
	top, err := decodeObject(params)
	if err != nil {
		return err
	}
	c, ok := commands[method]
	if !ok {
		return refuseUnlisted(method)
	}
	form, why := c.Form(tier)
	if form == nil {
		return fsm.Refusef(fsm.PolicyDenied, "%s is withheld while an allowlist is in force: it %s", method, why)
	}
	for _, kv := range top {
		i := indexParam(form.Params, kv.key)
		if i < 0 {
			return fsm.Refusef(fsm.PolicyDenied, "%s does not take the parameter %s here: raw CDP passes only the parameters in the table (spec/cdp-policy.md)", method, quoteShort(kv.key))
		}
		if form.Params[i].OnlyFalse && !bytes.Equal(bytes.TrimSpace(kv.val), []byte("false")) {
			return fsm.Refusef(fsm.PolicyDenied, "%s takes %s only as false here", method, kv.key)
		}
		if form.Params[i].OnlyTrue && !bytes.Equal(bytes.TrimSpace(kv.val), []byte("true")) {
			return fsm.Refusef(fsm.PolicyDenied, "%s takes %s only as true here (or left out: it is sent as true)", method, kv.key)
		}
	}
	return nil
}

// WithForced returns params, judged by [CheckParams], with every parameter
// the table allows only as true for method at tier set to true where it was
// left out (Runtime.evaluate's returnByValue under an allowlist: left out,
// Chrome would answer with an object id). Params without one are returned
// unchanged.
func WithForced(method string, tier Tier, params []byte) []byte {
	c, ok := commands[method]
	if !ok {
		return params
	}
	form, _ := c.Form(tier)
	if form == nil {
		return params
	}
	var forced []string
	for _, p := range form.Params {
		if p.OnlyTrue {
			forced = append(forced, p.Name)
		}
	}
	if len(forced) == 0 {
		return params
	}
	top := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(params); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &top); err != nil {
			return params // CheckParams refuses it first
		}
	}
	for _, name := range forced {
		if _, set := top[name]; !set {
			top[name] = json.RawMessage("true")
		}
	}
	out, err := json.Marshal(top)
	if err != nil {
		return params
	}
	return out
}

// remoteObjectHandles are the members of a CDP RemoteObject that hand out
// more than its value: a handle to the live object, or a walk of it.
var remoteObjectHandles = []string{"objectId", "preview", "customPreview", "deepSerializedValue"}

// ScrubResult returns the answer of method at tier with nothing in it but
// values: under an allowlist, Runtime.evaluate's result keeps no object id
// or preview (returnByValue is forced, yet a value Chrome cannot copy may
// still come back as a handle), and a thrown object or function comes back
// as its description, a string. Other answers are returned unchanged. An
// answer that is not the JSON object Chrome sends is refused.
func ScrubResult(method string, tier Tier, res []byte) ([]byte, error) {
	if tier == OpenWeb || method != "Runtime.evaluate" {
		return res, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(res, &top); err != nil {
		return nil, fsm.Refuse(fsm.InvalidArgument, "the browser's answer to Runtime.evaluate is not a JSON object; it is discarded")
	}
	if r, ok := top["result"]; ok {
		clean, err := scrubRemoteObject(r, false)
		if err != nil {
			return nil, err
		}
		top["result"] = clean
	}
	if d, ok := top["exceptionDetails"]; ok {
		var details map[string]json.RawMessage
		if err := json.Unmarshal(d, &details); err != nil {
			return nil, fsm.Refuse(fsm.InvalidArgument, "the browser's exception details are not a JSON object; they are discarded")
		}
		if e, ok := details["exception"]; ok {
			clean, err := scrubRemoteObject(e, true)
			if err != nil {
				return nil, err
			}
			details["exception"] = clean
		}
		b, err := json.Marshal(details)
		if err != nil {
			return nil, err
		}
		top["exceptionDetails"] = b
	}
	return json.Marshal(top)
}

// scrubRemoteObject drops a RemoteObject's handles; with asString, an
// object or function becomes {"type":"string","value":its description}.
func scrubRemoteObject(raw json.RawMessage, asString bool) (json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fsm.Refuse(fsm.InvalidArgument, "the browser's result is not a JSON object; it is discarded")
	}
	for _, k := range remoteObjectHandles {
		delete(o, k)
	}
	if asString {
		var typ string
		_ = json.Unmarshal(o["type"], &typ)
		if typ == "object" || typ == "function" {
			var desc string
			_ = json.Unmarshal(o["description"], &desc)
			if desc == "" {
				_ = json.Unmarshal(o["className"], &desc)
			}
			v, _ := json.Marshal(desc)
			o = map[string]json.RawMessage{"type": json.RawMessage(`"string"`), "value": v}
		}
	}
	return json.Marshal(o)
}

func indexParam(ps []Param, name string) int {
	for i, p := range ps {
		if p.Name == name {
			return i
		}
	}
	return -1
}

type member struct {
	key string
	val json.RawMessage
}

// decodeObject returns the members of a JSON object, refusing anything else
// and any object (at any depth) with a key twice: Chrome and cdproto's
// encoder would each pick a different one, or refuse the message after it
// was counted as sent.
func decodeObject(b []byte) ([]member, error) {
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil, fsm.Refuse(fsm.InvalidArgument, "params must be a JSON object")
	}
	if key, dup := duplicateKey(b); dup {
		return nil, fsm.Refusef(fsm.InvalidArgument, "params has the key %s twice in one object; send each key once", quoteShort(key))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fsm.Refuse(fsm.InvalidArgument, "params must be a JSON object")
	}
	out := make([]member, 0, len(top))
	for k, v := range top {
		out = append(out, member{k, v})
	}
	return out, nil
}

// duplicateKey reports the first key that appears twice in one object of
// the valid JSON b, comparing keys after unescaping ("a" and "\u0061" are
// the same key).
func duplicateKey(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*jsonFrame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return "", false
		}
		if err != nil {
			return "", false // json.Valid accepted b; nothing more to find
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				markValueDone(stack)
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				return strings.Clone(key), true
			}
			top.keys[key] = true
			top.expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &jsonFrame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &jsonFrame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			markValueDone(stack)
		default:
			markValueDone(stack)
		}
	}
}

// jsonFrame is one open container of duplicateKey's walk: the keys seen so
// far for an object (nil for an array); expectKey says the object's next
// token is a key.
type jsonFrame struct {
	keys      map[string]bool
	expectKey bool
}

// markValueDone records that a value ended: if it was an object member's,
// the object's next token is a key.
func markValueDone(stack []*jsonFrame) {
	if len(stack) > 0 && stack[len(stack)-1].keys != nil {
		stack[len(stack)-1].expectKey = true
	}
}

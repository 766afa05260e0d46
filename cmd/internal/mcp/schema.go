package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/webcodex/webcodex/fsm"
)

// argSchema is a tool's input schema twice: check, the whole schema the
// server checks arguments against (with its own messages, which name the
// argument and what it takes), and shown, what tools/list advertises. An
// agent host sends the tool list to the model on every turn, so shown keeps
// only what helps a model call the tool: no additionalProperties, no null
// alternatives of optional fields, and a target as one description.
type argSchema struct {
	check *jsonschema.Schema
	shown map[string]any
}

// schemaTypes maps argument types to the schemas they are given: a target
// decodes and checks itself (TargetArg.UnmarshalJSON), so its schema says
// only its JSON types. Never an empty schema: it marshals as the boolean
// schema true, which the official TypeScript SDK rejects in tools/list.
var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[TargetArg](): {Types: []string{"string", "object"}},
}

// newArgSchema derives In's schemas and applies tweak (enums, bounds) to
// both.
func newArgSchema[In any](tool string, tweak func(*jsonschema.Schema)) (argSchema, error) {
	check, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: schemaTypes})
	if err != nil {
		return argSchema{}, fmt.Errorf("mcp: schema of %s: %w", tool, err)
	}
	check.Type, check.Types = "object", nil
	anyWhereUntyped(check)
	if tweak != nil {
		tweak(check)
	}
	b, err := json.Marshal(check)
	if err != nil {
		return argSchema{}, fmt.Errorf("mcp: schema of %s: %w", tool, err)
	}
	var shown map[string]any
	if err := json.Unmarshal(b, &shown); err != nil {
		return argSchema{}, fmt.Errorf("mcp: schema of %s: %w", tool, err)
	}
	lean(shown)
	return argSchema{check: check, shown: shown}, nil
}

// anyWhereUntyped clears the type of an optional field whose type has no
// schema type of its own (a *TargetArg comes out as only "null"): it takes
// any JSON and checks itself.
func anyWhereUntyped(s *jsonschema.Schema) {
	if s.Type == "" && len(s.Types) == 1 && s.Types[0] == "null" {
		s.Types = nil
	}
	for _, p := range s.Properties {
		anyWhereUntyped(p)
	}
	if s.Items != nil {
		anyWhereUntyped(s.Items)
	}
}

// unlisted are arguments every tool that has them takes but no schema
// lists, since each byte of the list reaches the model on every turn: the
// server's instructions say the first two once (an older snapshot's refs,
// an effect's idempotency key); the others are older names of listed ones
// (files for paths, scope for target).
var unlisted = []string{"snapshotId", "idempotencyKey", "files", "scope"}

// lean drops from an advertised schema what only the server's check needs.
func lean(s map[string]any) {
	delete(s, "additionalProperties")
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range unlisted {
			delete(props, k)
		}
	}
	if ts, ok := s["type"].([]any); ok {
		var rest []any
		for _, t := range ts {
			if t != "null" {
				rest = append(rest, t)
			}
		}
		if len(rest) == 1 {
			s["type"] = rest[0]
		} else {
			s["type"] = rest // an optional target: its types, omitted rather than null
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if pm, ok := p.(map[string]any); ok {
				lean(pm)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		lean(items)
	}
}

// decodeArgs checks raw arguments against the tool's schema and decodes
// them. Every failure is an invalid_argument refusal whose detail names the
// argument and what it takes.
func decodeArgs[In any](as argSchema, raw json.RawMessage) (In, error) {
	var in In
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return in, fsm.Refuse(fsm.InvalidArgument, "the arguments are not JSON")
	}
	if err := checkValue(as.check, v, ""); err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if ref, ok := fsm.AsRefusal(err); ok {
			return in, ref
		}
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return in, fsm.Refusef(fsm.InvalidArgument, "%s must be %s", te.Field, jsonKind(te.Type))
		}
		return in, fsm.Refuse(fsm.InvalidArgument, "the arguments do not fit this tool's schema")
	}
	return in, nil
}

// checkValue checks v against the subset of JSON Schema the tools use.
func checkValue(s *jsonschema.Schema, v any, path string) error {
	name := path
	if name == "" {
		name = "the arguments"
	}
	if want := schemaTypesOf(s); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return isType(v, t) }) {
		var ws []string
		for _, t := range want {
			if t != "null" {
				ws = append(ws, t)
			}
		}
		return fsm.Refusef(fsm.InvalidArgument, "%s must be %s", name, article(strings.Join(ws, " or ")))
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		var opts []string
		for _, e := range s.Enum {
			if e == nil {
				opts = append(opts, "null")
				continue
			}
			opts = append(opts, fmt.Sprint(e))
		}
		return fsm.Refusef(fsm.InvalidArgument, "%s is one of %s", name, strings.Join(opts, ", "))
	}
	switch x := v.(type) {
	case float64:
		if s.Minimum != nil && x < *s.Minimum {
			return fsm.Refusef(fsm.InvalidArgument, "%s is at least %v", name, *s.Minimum)
		}
		if s.Maximum != nil && x > *s.Maximum {
			return fsm.Refusef(fsm.InvalidArgument, "%s is at most %v", name, *s.Maximum)
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fsm.Refusef(fsm.InvalidArgument, "%s needs at least %d item(s)", name, *s.MinItems)
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return fsm.Refusef(fsm.InvalidArgument, "%s takes at most %d items", name, *s.MaxItems)
		}
		if s.Items != nil {
			for i, e := range x {
				if err := checkValue(s.Items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		if s.Properties == nil && s.AdditionalProperties == nil {
			return nil // free-form (params of a CDP command)
		}
		known := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			known = append(known, k)
		}
		slices.Sort(known)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p, ok := s.Properties[k]
			if !ok && s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
				p, ok = s.AdditionalProperties, true // a map: any key, values checked
			}
			if !ok {
				if len(known) == 0 {
					return fsm.Refusef(fsm.InvalidArgument, "unknown argument %q: this tool takes no arguments", capText(k, 40))
				}
				return fsm.Refusef(fsm.InvalidArgument, "unknown argument %q; %s takes %s", capText(k, 40), where(path), strings.Join(known, ", "))
			}
			if err := checkValue(p, x[k], join(path, k)); err != nil {
				return err
			}
		}
		for _, k := range s.Required {
			if _, ok := x[k]; !ok {
				return fsm.Refusef(fsm.InvalidArgument, "%s is required", join(path, k))
			}
		}
	}
	return nil
}

func schemaTypesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func isType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func where(path string) string {
	if path == "" {
		return "this tool"
	}
	return path
}

func article(kind string) string {
	switch {
	case kind == "":
		return "something else"
	case strings.IndexByte("aeiou", kind[0]) >= 0:
		return "an " + kind
	}
	return "a " + kind
}

// jsonKind names a Go type as the JSON kind an argument must be.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint, reflect.Uint32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

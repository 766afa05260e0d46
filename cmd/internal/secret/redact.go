package secret

import (
	"encoding/json"
	"reflect"

	"github.com/webcodex/webcodex/fsm"
)

// Value is v with every string in it redacted (JSON text inside a
// json.RawMessage too), as a copy: v itself, and what it points to, are
// left as they were. Other byte slices (images) are kept as they are.
func (s *Set) Value(v any) any {
	if s.Len() == 0 || v == nil {
		return v
	}
	rv := reflect.ValueOf(v)
	out, changed := s.walk(rv)
	if !changed {
		return v
	}
	return out.Interface()
}

var rawType = reflect.TypeOf(json.RawMessage(nil))

// walk returns a redacted copy of v and whether anything changed (when
// nothing did, v itself).
func (s *Set) walk(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		r := s.Redact(v.String())
		if r == v.String() {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(r)
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := s.walk(v.Elem())
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(e)
		return out, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := s.walk(v.Elem())
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(e)
		return out, true
	case reflect.Struct:
		return s.walkStruct(v)
	case reflect.Slice:
		if v.Type() == rawType {
			r := s.Redact(string(v.Bytes()))
			if r == string(v.Bytes()) {
				return v, false
			}
			return reflect.ValueOf(json.RawMessage(r)).Convert(v.Type()), true
		}
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return v, false
		}
		return s.walkElems(v, reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
	case reflect.Array:
		return s.walkElems(v, reflect.New(v.Type()).Elem())
	case reflect.Map:
		return s.walkMap(v)
	}
	return v, false
}

func (s *Set) walkStruct(v reflect.Value) (reflect.Value, bool) {
	var out reflect.Value
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f, changed := s.walk(v.Field(i))
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(v.Type()).Elem()
			out.Set(v) // unexported fields are copied as they are
		}
		out.Field(i).Set(f)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

func (s *Set) walkElems(v, out reflect.Value) (reflect.Value, bool) {
	any := false
	for i := range v.Len() {
		e, changed := s.walk(v.Index(i))
		any = any || changed
		out.Index(i).Set(e)
	}
	if !any {
		return v, false
	}
	return out, true
}

func (s *Set) walkMap(v reflect.Value) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	any := false
	for it := v.MapRange(); it.Next(); {
		k, kc := s.walk(it.Key())
		e, ec := s.walk(it.Value())
		any = any || kc || ec
		out.SetMapIndex(k, e)
	}
	if !any {
		return v, false
	}
	return out, true
}

// Err is err with its text redacted: a refusal keeps its code, its detail
// and next step redacted; another error keeps its chain (errors.Is and As
// still see the cause) under a redacted message. An error whose text holds
// no secret is returned as it is.
func (s *Set) Err(err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	if ref, ok := fsm.AsRefusal(err); ok {
		d, n := s.Redact(ref.Detail), s.Redact(ref.Next)
		if d == ref.Detail && n == ref.Next && s.Redact(err.Error()) == err.Error() {
			return err
		}
		out := *ref // the code, ids and cause stay
		out.Detail, out.Next = d, n
		return &out
	}
	msg := s.Redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redacted{msg: msg, err: err}
}

// redacted is an error whose text held a secret.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

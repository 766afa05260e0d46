package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzReadFrame feeds arbitrary streams to the frame reader and decoder:
// nothing panics, nothing above the limit is returned or allocated, and
// whatever decodes is strict I-JSON that encoding/json reads the same way.
func FuzzReadFrame(f *testing.F) {
	f.Add(frame(binary.LittleEndian, []byte(`{"t":"ev","ch":1,"method":"Log.entryAdded","params":{}}`)))
	f.Add(frame(binary.LittleEndian, []byte(`{"t":"res","id":1,"result":{"a":[1,2,{"b":"\ud83d\ude00"}]}}`)))
	f.Add(frame(binary.LittleEndian, []byte(`{"t":"share","tab":1,"target":"T","url":"https://a.test/"}`)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0})
	f.Add(frame(binary.LittleEndian, []byte(`{"id":1,"ID":2}`)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		const limit = 4096
		fr := NewReader(bytes.NewReader(stream), binary.LittleEndian)
		for i := 0; i < 64; i++ {
			body, err := fr.ReadFrame(limit)
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrEmptyFrame) {
					return
				}
				t.Fatalf("unexpected error: %v", err)
			}
			if len(body) == 0 || len(body) > limit {
				t.Fatalf("frame of %d bytes under limit %d", len(body), limit)
			}
			m, err := Decode(body, FromExtension)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("decode error outside the closed set: %v", err)
				}
				continue
			}
			var again map[string]any
			if err := json.Unmarshal(body, &again); err != nil {
				t.Fatalf("decoded yet encoding/json refuses it: %v", err)
			}
			if again["t"] != string(m.T) {
				t.Fatalf("kind %q read as %v", m.T, again["t"])
			}
		}
	})
}

// FuzzValidate checks Validate against encoding/json: whatever Validate
// accepts, encoding/json accepts too (the checks only narrow it).
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\ud800"}`, `{"a":1e400}`, `{"a":[{"b":null}]}`, "{\"a\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if Validate(body) != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("Validate accepted what encoding/json refuses: %v", err)
		}
	})
}

package bridge

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/webcodex/webcodex/extension/rendezvous"
	"github.com/webcodex/webcodex/extension/wire"
)

// FuzzHandshake feeds arbitrary first frames to the handshake: nothing
// panics, and nothing authenticates without the record's exact token,
// instance and origin.
func FuzzHandshake(f *testing.F) {
	rec, err := rendezvous.NewRecord(1)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(&wire.Message{T: wire.KindAuth, V: 1, Token: rec.Token, Instance: rec.Instance, Origin: testOrigin})
	frame := func(b []byte) []byte {
		var h [4]byte
		binary.LittleEndian.PutUint32(h[:], uint32(len(b)))
		return append(h[:], b...)
	}
	f.Add(frame(good))
	f.Add(frame([]byte(`{"t":"auth","v":1,"token":"` + rec.Token + `","TOKEN":"x","instance":"` + rec.Instance + `"}`)))
	f.Add(frame([]byte(`{"t":"auth","v":1.0}`)))
	f.Add([]byte{0xff, 0xff, 0, 0})
	f.Fuzz(func(t *testing.T, stream []byte) {
		body, err := wire.NewReader(bytes.NewReader(stream), binary.LittleEndian).ReadFrame(wire.MaxEvent)
		if err != nil {
			return
		}
		if authenticate(body, rec, testOrigin) != nil {
			return
		}
		m, err := wire.Decode(body, wire.FromHost)
		if err != nil || m.Token != rec.Token || m.Instance != rec.Instance || m.Origin != testOrigin {
			t.Fatalf("authenticated a handshake without the exact credentials: %q", body)
		}
	})
}

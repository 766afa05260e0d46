package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

var benchBody = []byte(`{"t":"res","id":1,"result":{"data":"` + strings.Repeat("QUJD", 1<<18) + `"}}`)

// BenchmarkDecode is the strict decode of a 1 MiB response (a
// screenshot's size); BenchmarkDecodeBaseline is encoding/json alone on
// the same body: the ratio is what strictness costs.
func BenchmarkDecode(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := Decode(benchBody, FromExtension); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBaseline(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		var m Message
		if err := json.Unmarshal(benchBody, &m); err != nil {
			b.Fatal(err)
		}
	}
}

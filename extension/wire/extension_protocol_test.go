package wire

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExtensionProtocolMatches reads the protocol constants of the
// extension (extension/src/protocol.js, the JSON between its markers) and
// compares each with this package's, so neither side drifts.
func TestExtensionProtocolMatches(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../src/protocol.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	begin, end := strings.Index(s, "// PROTOCOL-BEGIN"), strings.Index(s, "// PROTOCOL-END")
	if begin < 0 || end < begin {
		t.Fatal("protocol.js has no PROTOCOL-BEGIN/END markers")
	}
	body := s[begin:end]
	body = body[strings.Index(body, "{") : strings.LastIndex(body, "}")+1]
	var js struct {
		Version         int      `json:"version"`
		HostName        string   `json:"hostName"`
		MaxCommand      int      `json:"maxCommand"`
		MaxResponse     int      `json:"maxResponse"`
		MaxEvent        int      `json:"maxEvent"`
		OfferTTLms      int64    `json:"offerTTLms"`
		DiscardedMethod string   `json:"discardedMethod"`
		Ops             []Op     `json:"ops"`
		Reasons         []string `json:"reasons"`
		Diagnostic      []string `json:"diagnosticEvents"`
		State           []string `json:"stateEvents"`
	}
	if err := json.Unmarshal([]byte(body), &js); err != nil {
		t.Fatalf("protocol.js: %v", err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s: extension %s, Go %s", what, gb, wb)
		}
	}
	check("version", js.Version, Version)
	check("hostName", js.HostName, HostName)
	check("maxCommand", js.MaxCommand, MaxCommand)
	check("maxResponse", js.MaxResponse, MaxResponse)
	check("maxEvent", js.MaxEvent, MaxEvent)
	check("offerTTL", time.Duration(js.OfferTTLms)*time.Millisecond, OfferTTL)
	check("discardedMethod", js.DiscardedMethod, DiscardedMethod)
	check("ops", js.Ops, Ops)
	check("reasons", js.Reasons, Reasons)
	check("diagnosticEvents", js.Diagnostic, DiagnosticEvents)
	if len(js.Diagnostic) != 7 {
		t.Errorf("%d diagnostic events, want the seven the Runner records", len(js.Diagnostic))
	}
	check("stateEvents", js.State, StateEvents)
	for _, m := range append(slices.Clone(js.Diagnostic), js.State...) {
		if !methodPattern.MatchString(m) {
			t.Errorf("%q is not a method name", m)
		}
	}
}

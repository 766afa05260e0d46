package runner

import (
	"os"
	"testing"

	"github.com/webcodex/webcodex/internal/tracecheck"
)

// TestMain replays every machine transition this package's tests took
// against its declaration (trace conformance).
func TestMain(m *testing.M) { os.Exit(tracecheck.Main(m)) }

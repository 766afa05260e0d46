package runner

import (
	"os"
	"testing"

	"github.com/webcodex/webcodex/internal/tracecheck"
	"github.com/webcodex/webcodex/platform"
	"github.com/webcodex/webcodex/reconnect"
)

// TestMain replays every machine transition this package's tests took
// against its declaration (trace conformance).
func TestMain(m *testing.M) { os.Exit(tracecheck.Main(m)) }

// procOf is an owned browser's process.
func procOf(b *Browser) *platform.Process { return b.life.(*ownedBrowser).proc }

// coordOf is an attached browser's reconnect coordinator.
func coordOf(b *Browser) *reconnect.Coordinator { return b.life.(*attachedBrowser).coord }

package lifetime

import (
	"testing"

	"github.com/webcodex/webcodex/fsm/fsmtest"
)

// TestMachines runs the exhaustive exploration and the rapid walk on every
// machine this package declares.
func TestMachines(t *testing.T) {
	t.Run("runner", func(t *testing.T) { fsmtest.Check(t, RunnerSpec) })
	t.Run("raw_cdp_session", func(t *testing.T) { fsmtest.Check(t, RawSessionSpec) })
}

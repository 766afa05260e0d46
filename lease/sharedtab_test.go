package lease

import (
	"testing"

	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestSharedTabProperties(t *testing.T) { fsmtest.Check(t, SharedTabSpec) }

package bridge

import (
	"testing"

	"github.com/webcodex/webcodex/fsm/fsmtest"
)

func TestPeerProperties(t *testing.T)  { fsmtest.Check(t, PeerSpec) }
func TestRouteProperties(t *testing.T) { fsmtest.Check(t, RouteSpec) }

package bridge

import (
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

func TestPeerProperties(t *testing.T)  { fsm.Check(t, PeerSpec) }
func TestRouteProperties(t *testing.T) { fsm.Check(t, RouteSpec) }

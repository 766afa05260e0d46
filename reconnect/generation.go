package reconnect

import (
	"sync/atomic"

	"github.com/webcodex/webcodex/fsm"
)

// Generation numbers a browser's connections: it strictly increases with
// every new socket, and every capability (page handle, ref) carries the
// generation that minted it.
type Generation uint64

// Generations holds a browser's current generation. Safe for concurrent use.
// The zero value starts at generation 0; [Generations.Advance] moves to 1.
type Generations struct {
	current atomic.Uint64
}

// Current returns the generation capabilities are minted in now.
func (g *Generations) Current() Generation { return Generation(g.current.Load()) }

// Advance invalidates every capability minted so far and returns the new
// generation.
func (g *Generations) Advance() Generation { return Generation(g.current.Add(1)) }

// Check refuses a capability minted in any generation but the current one
// with browser_binding_stale.
func (g *Generations) Check(minted Generation) error {
	if cur := g.Current(); minted != cur {
		return fsm.Refusef(fsm.BindingStale, "minted in connection generation %d, the browser is now on generation %d; list pages again", minted, cur)
	}
	return nil
}

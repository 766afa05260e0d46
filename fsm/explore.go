package fsm

import (
	"context"
	"fmt"
	"strings"
)

// Exploration is what one exhaustive bounded exploration covered.
type Exploration struct {
	Machine    string `json:"machine"`
	Depth      int    `json:"depth"`       // longest trigger sequence explored (accepted transitions)
	States     int    `json:"states"`      // distinct (state, counters, property memory) reached
	Steps      int    `json:"steps"`       // (state, trigger, facts) combinations fired and checked
	FactCombos int    `json:"fact_combos"` // every value of the declaration's facts
	Edges      int    `json:"edges"`       // declared edges, every one of them taken
}

// ExploreDepth is how deep [Spec.Explore] goes, derived from the
// declaration: enough to reach any state (a shortest path has fewer
// transitions than there are states), then two whole flights from there (a
// transient run of at most MaxTransient transitions and the rest that ends
// it, twice, so what one flight leaves behind is checked in the next), plus
// one transition per unit of every budget, so each counted edge is also
// taken at its budget.
func (s *Spec[S, T, F]) ExploreDepth() int {
	d := len(s.States) + 2*(s.MaxTransient+1)
	for _, b := range s.Budgets {
		d += b
	}
	return d
}

// Explore fires every trigger with every combination of facts from every
// state reachable from the initial state in at most [Spec.ExploreDepth]
// accepted transitions, at the real stateless machine and at the table
// model side by side, and checks the same properties as the rapid walk
// after each. Paths that reach the same state with the same counters and
// the same property memory are explored once, so it terminates; it uses no
// randomness, so its numbers are the same on every run. It also fails when
// a declared edge is never taken within the depth.
func (s *Spec[S, T, F]) Explore() (Exploration, error) {
	ctx := context.Background()
	facts := s.AllFacts()
	res := Exploration{Machine: s.Name, Depth: s.ExploreDepth(), FactCombos: len(facts), Edges: len(s.Edges)}
	t := s.NewTracker()
	guarded := map[pair[S, T]]bool{}
	for _, e := range s.Edges {
		if e.Guard != nil {
			guarded[pair[S, T]{e.From, e.On}] = true
		}
	}

	type node struct {
		at     tracked[S]
		depth  int
		parent int
		via    string // the transition that reached it
	}
	nodes := []node{{at: t.at, parent: -1}}
	seen := map[string]bool{t.key(): true}
	taken := map[string]bool{}
	path := func(i int, last string) string {
		var steps []string
		for ; i > 0; i = nodes[i].parent {
			steps = append(steps, nodes[i].via)
		}
		for l, r := 0, len(steps)-1; l < r; l, r = l+1, r-1 {
			steps[l], steps[r] = steps[r], steps[l]
		}
		return strings.Join(append(steps, last), ", ")
	}
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if n.depth >= res.Depth {
			continue
		}
		for _, tr := range s.Triggers {
			combos := facts
			if !guarded[pair[S, T]{n.at.model, tr}] {
				combos = facts[:1] // no guard reads the facts here: they cannot change the outcome
			}
			for _, f := range combos {
				t.restore(n.at)
				step, ok, err := t.Fire(ctx, tr, f)
				res.Steps++
				if err != nil {
					return res, fmt.Errorf("%w (after %s with facts %+v)", err, path(i, string(tr)), f)
				}
				if !ok {
					continue
				}
				edge := EdgeKey(string(step.From), string(step.On), string(step.To))
				taken[edge] = true
				if k := t.key(); !seen[k] {
					seen[k] = true
					nodes = append(nodes, node{at: t.at, depth: n.depth + 1, parent: i, via: edge})
				}
			}
		}
	}
	res.States = len(nodes)
	for _, e := range s.Edges {
		if k := EdgeKey(string(e.From), string(e.On), string(e.To)); !taken[k] {
			return res, &Violation{Property: "exploration", Detail: fmt.Sprintf("edge %s is never taken within depth %d", k, res.Depth)}
		}
	}
	return res, nil
}

type pair[S, T ~string] struct {
	from S
	on   T
}

// AllFacts enumerates every value DrawFacts can draw: each boolean both
// ways, each IntRange every value. A declaration without facts has one
// (zero) value.
func (s *Spec[S, T, F]) AllFacts() []F {
	var zero F
	if s.DrawFacts == nil {
		return []F{zero}
	}
	var out []F
	d := &odometer{}
	for {
		d.pos = 0
		out = append(out, s.DrawFacts(d))
		if !d.advance() {
			return out
		}
	}
}

// odometer is a [Drawer] that walks every combination of its draws: each
// pass answers the current digits; advance turns the last digit that can
// still turn and zeroes the ones after it. Later draws may depend on earlier
// ones; their ranges are re-learned on every pass.
type odometer struct {
	digits []int // offset from lo of each draw
	spans  []int // hi-lo+1 of each draw in the latest pass
	pos    int
}

func (d *odometer) next(lo, hi int) int {
	if d.pos == len(d.digits) {
		d.digits = append(d.digits, 0)
		d.spans = append(d.spans, 0)
	}
	span := max(hi-lo+1, 1)
	d.spans[d.pos] = span
	v := lo + min(d.digits[d.pos], span-1)
	d.pos++
	return v
}

func (d *odometer) advance() bool {
	d.digits, d.spans = d.digits[:d.pos], d.spans[:d.pos]
	for i := len(d.digits) - 1; i >= 0; i-- {
		if d.digits[i]+1 < d.spans[i] {
			d.digits[i]++
			clear(d.digits[i+1:])
			return true
		}
	}
	return false
}

// Bool draws false, then true.
func (d *odometer) Bool(string) bool { return d.next(0, 1) == 1 }

// IntRange draws every value of [lo, hi] in order.
func (d *odometer) IntRange(_ string, lo, hi int) int { return d.next(lo, hi) }

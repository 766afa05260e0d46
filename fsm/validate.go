package fsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
)

// ValidationError lists every problem Validate found in a declaration.
type ValidationError struct {
	Machine  string
	Problems []string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("fsm: %s: invalid declaration: %s", e.Machine, joinLines(e.Problems))
}

func joinLines(s []string) string {
	out := ""
	for i, p := range s {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

// exclusivitySamples/8 is how many sampled counter values Validate tries,
// each with every fact combination, per guarded (state, trigger).
const exclusivitySamples = 512

// handWrittenExits matches a state doc that lists exits, which are
// rendered from the edges instead (a doc and the edges drift apart).
var handWrittenExits = regexp.MustCompile(`(?i)\bmoves? to\b|^terminal\b`)

// Validate rejects a declaration with an undeclared or undocumented state, a
// state doc that writes its exits by hand, an unreachable state, a terminal
// state with exits, a duplicate edge, two guards on one (state, trigger) that
// can both hold, an effect outside the allowlist (or an allowed one no edge
// carries), a forbidden effect on an edge, an effect counted by two counters,
// a counted edge still enabled when its counter is at its budget, or a
// non-terminal state from which no stable or terminal state is reachable.
func (s *Spec[S, T, F]) Validate() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	declared := map[S]bool{}
	for _, d := range s.States {
		if declared[d.State] {
			add("state %s declared twice", d.State)
		}
		declared[d.State] = true
		if d.Doc == "" {
			add("state %s has no doc", d.State)
		}
		if handWrittenExits.MatchString(d.Doc) {
			add("state %s: the doc writes exits by hand (%q); they are rendered from the edges", d.State, handWrittenExits.FindString(d.Doc))
		}
	}
	triggers := map[T]bool{}
	for _, t := range s.Triggers {
		triggers[t] = true
	}
	if !declared[s.Initial] {
		add("initial state %s not declared", s.Initial)
	}
	for _, st := range append(slices.Clone(s.Stable), s.Terminal...) {
		if !declared[st] {
			add("state %s listed as stable/terminal but not declared", st)
		}
	}
	if s.MaxTransient <= 0 {
		add("MaxTransient must be positive")
	}
	type key struct {
		from S
		on   T
		to   S
	}
	seen := map[key]bool{}
	out := map[S][]S{}
	for _, e := range s.Edges {
		if !declared[e.From] || !declared[e.To] {
			add("edge %s --%s--> %s uses an undeclared state", e.From, e.On, e.To)
		}
		if !triggers[e.On] {
			add("edge %s --%s--> %s uses an undeclared trigger", e.From, e.On, e.To)
		}
		k := key{e.From, e.On, e.To}
		if seen[k] {
			add("edge %s --%s--> %s declared twice", e.From, e.On, e.To)
		}
		seen[k] = true
		if s.IsTerminal(e.From) {
			add("terminal state %s has an exit on %s", e.From, e.On)
		}
		if slices.Contains(s.Forbidden, e.Effect) {
			add("edge %s --%s--> %s carries forbidden effect %s", e.From, e.On, e.To, e.Effect)
		}
		if e.Effect != NoEffect && !slices.Contains(s.Effects, e.Effect) {
			add("edge %s --%s--> %s carries effect %s, which is not in the allowlist (Effects)", e.From, e.On, e.To, e.Effect)
		}
		out[e.From] = append(out[e.From], e.To)
	}

	// Reachability from the initial state.
	reach := closure(s.Initial, out)
	for _, d := range s.States {
		if !reach[d.State] {
			add("state %s is unreachable from %s", d.State, s.Initial)
		}
	}
	// Every non-terminal state can reach rest.
	for _, d := range s.States {
		if s.IsTerminal(d.State) {
			continue
		}
		ok := false
		for st := range closure(d.State, out) {
			if st != d.State && (s.IsStable(st) || s.IsTerminal(st)) {
				ok = true
				break
			}
		}
		if !ok && !s.IsStable(d.State) {
			add("no stable or terminal state is reachable from %s", d.State)
		}
		if len(out[d.State]) == 0 && !s.IsTerminal(d.State) {
			add("state %s has no exits but is not terminal", d.State)
		}
	}

	for _, ef := range s.Effects {
		if !slices.Contains(s.EffectNames(), ef) {
			add("allowed effect %s is on no edge", ef)
		}
	}
	counted := map[Effect]string{}
	for _, e := range s.Edges {
		if e.Effect == NoEffect || e.Count == "" {
			continue
		}
		if c, ok := counted[e.Effect]; ok && c != e.Count {
			add("effect %s is counted by %s and by %s: an effect has one counter, its ledger key", e.Effect, c, e.Count)
		}
		counted[e.Effect] = e.Count
	}
	problems = append(problems, s.countedEdgesDisabledAtBudget()...)
	problems = append(problems, s.overlappingGuards()...)
	if len(problems) > 0 {
		return &ValidationError{Machine: s.Name, Problems: problems}
	}
	return nil
}

// countedEdgesDisabledAtBudget finds edges that count a budgeted counter
// and can still be taken when the counter is at its budget: every fact
// combination is tried, with the other counters sampled.
func (s *Spec[S, T, F]) countedEdgesDisabledAtBudget() []string {
	var problems []string
	rng := rand.New(rand.NewPCG(3, 4)) // fixed seed: Validate is deterministic
	facts := s.AllFacts()
	for _, e := range s.Edges {
		budget, ok := s.Budgets[e.Count]
		if e.Count == "" || !ok {
			continue
		}
		if e.Guard == nil {
			problems = append(problems, fmt.Sprintf("edge %s --%s--> %s counts %s but has no guard: it is not disabled at the budget %d", e.From, e.On, e.To, e.Count, budget))
			continue
		}
	search:
		for i := 0; i < exclusivitySamples/8; i++ {
			env := s.sampleEnv(rng)
			env.Counters[e.Count] = budget
			for _, f := range facts {
				env.Facts = f
				if e.Guard.OK(env) {
					problems = append(problems, fmt.Sprintf("edge %s --%s--> %s counts %s but its guard %s holds at the budget %d", e.From, e.On, e.To, e.Count, e.Guard.Name, budget))
					break search
				}
			}
		}
	}
	return problems
}

func closure[S comparable](from S, out map[S][]S) map[S]bool {
	seen := map[S]bool{from: true}
	stack := []S{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range out[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return seen
}

// overlappingGuards finds (state, trigger) pairs where two edges can both be
// taken: two unguarded edges, or guards that both hold for some facts (every
// combination is tried) and sampled counters.
func (s *Spec[S, T, F]) overlappingGuards() []string {
	type pair struct {
		from S
		on   T
	}
	groups := map[pair][]Edge[S, T, F]{}
	var order []pair
	for _, e := range s.Edges {
		p := pair{e.From, e.On}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], e)
	}
	var problems []string
	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: Validate is deterministic
	facts := s.AllFacts()
	for _, p := range order {
		edges := groups[p]
		if len(edges) < 2 {
			continue
		}
		unguarded := 0
		for _, e := range edges {
			if e.Guard == nil {
				unguarded++
			}
		}
		if unguarded > 0 {
			problems = append(problems, fmt.Sprintf("%s on %s: an unguarded edge shares the trigger with another edge", p.from, p.on))
			continue
		}
	search:
		for i := 0; i < exclusivitySamples/8; i++ {
			env := s.sampleEnv(rng)
			for _, f := range facts {
				env.Facts = f
				var holding []string
				for _, e := range edges {
					if e.Guard.OK(env) {
						holding = append(holding, e.Guard.Name)
					}
				}
				if len(holding) > 1 {
					problems = append(problems, fmt.Sprintf("%s on %s: guards %v can both hold", p.from, p.on, holding))
					break search
				}
			}
		}
	}
	return problems
}

func (s *Spec[S, T, F]) sampleEnv(rng *rand.Rand) Env[F] {
	var facts F
	if s.DrawFacts != nil {
		facts = s.DrawFacts(randDrawer{rng})
	}
	counters := Counters{}
	for _, name := range s.counterNames() {
		limit := s.Budgets[name] + 2
		counters[name] = rng.IntN(limit + 1)
	}
	return Env[F]{Facts: facts, Counters: counters}
}

func (s *Spec[S, T, F]) counterNames() []string {
	set := map[string]bool{}
	for k := range s.Budgets {
		set[k] = true
	}
	for _, e := range s.Edges {
		if e.Count != "" {
			set[e.Count] = true
		}
		for _, r := range e.Reset {
			set[r] = true
		}
	}
	return sortedKeys(set)
}

type randDrawer struct{ rng *rand.Rand }

func (d randDrawer) Bool(string) bool { return d.rng.IntN(2) == 1 }
func (d randDrawer) IntRange(_ string, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + d.rng.IntN(hi-lo+1)
}

// ErrInvalid is wrapped by MustValidate's panic value.
var ErrInvalid = errors.New("fsm: invalid declaration")

// MustValidate panics when the declaration is invalid. Machine packages call
// it from init so an invalid declaration cannot ship.
func (s *Spec[S, T, F]) MustValidate() *Spec[S, T, F] {
	if err := s.Validate(); err != nil {
		panic(fmt.Errorf("%w: %w", ErrInvalid, err))
	}
	return s
}

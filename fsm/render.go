package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Table is a declaration with the types erased: what spec/ renders and what
// other languages (the extension) compare against. Its JSON is stable.
type Table struct {
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Guards       string         `json:"guards"`
	Initial      string         `json:"initial"`
	States       []TableState   `json:"states"`
	Triggers     []string       `json:"triggers"`
	Edges        []TableEdge    `json:"edges"`
	Budgets      map[string]int `json:"budgets,omitempty"`
	MaxTransient int            `json:"max_transient"`
	Generation   string         `json:"generation,omitempty"`
	Invalidate   string         `json:"invalidate,omitempty"`
	Live         []string       `json:"live,omitempty"`
	Revoked      []string       `json:"revoked,omitempty"`
	Armed        []string       `json:"armed,omitempty"`
	Flight       string         `json:"flight,omitempty"`
	Effects      []string       `json:"effects,omitempty"`
	Forbidden    []string       `json:"forbidden,omitempty"`
	// Exploration is what the exhaustive exploration covered when spec/
	// was rendered; nil in a bare Table.
	Exploration *Exploration `json:"exploration,omitempty"`
	// ExplorationError is why the exploration failed, if it did.
	ExplorationError string `json:"exploration_error,omitempty"`
}

// TableState is one state of a [Table].
type TableState struct {
	Name     string `json:"name"`
	Doc      string `json:"doc"`
	Stable   bool   `json:"stable,omitempty"`
	Terminal bool   `json:"terminal,omitempty"`
}

// TableEdge is one edge of a [Table].
type TableEdge struct {
	From   string   `json:"from"`
	On     string   `json:"on"`
	To     string   `json:"to"`
	Guard  string   `json:"guard,omitempty"`
	Effect string   `json:"effect,omitempty"`
	Count  string   `json:"count,omitempty"`
	Reset  []string `json:"reset,omitempty"`
}

// Described is anything spec/ can render: every Spec is one.
type Described interface {
	Table() Table
	Explore() (Exploration, error)
}

// Explored is d's table with the numbers of its exhaustive exploration.
func Explored(d Described) Table {
	t := d.Table()
	ex, err := d.Explore()
	t.Exploration = &ex
	if err != nil {
		t.ExplorationError = err.Error()
	}
	return t
}

// Table erases the declaration's types.
func (s *Spec[S, T, F]) Table() Table {
	t := Table{
		Name: s.Name, Title: s.Title, Guards: s.Guards, Initial: string(s.Initial),
		MaxTransient: s.MaxTransient, Generation: s.Generation, Invalidate: string(s.Invalidate),
		Flight: string(s.Flight),
	}
	for _, d := range s.States {
		t.States = append(t.States, TableState{Name: string(d.State), Doc: d.Doc, Stable: s.IsStable(d.State), Terminal: s.IsTerminal(d.State)})
	}
	for _, tr := range s.Triggers {
		t.Triggers = append(t.Triggers, string(tr))
	}
	for _, e := range s.Edges {
		te := TableEdge{From: string(e.From), On: string(e.On), To: string(e.To), Effect: string(e.Effect), Count: e.Count, Reset: e.Reset}
		if e.Guard != nil {
			te.Guard = e.Guard.Name
		}
		t.Edges = append(t.Edges, te)
	}
	if len(s.Budgets) > 0 {
		t.Budgets = map[string]int(s.Budgets.clone())
	}
	for _, st := range s.Live {
		t.Live = append(t.Live, string(st))
	}
	for _, st := range s.Revoked {
		t.Revoked = append(t.Revoked, string(st))
	}
	for _, st := range s.Armed {
		t.Armed = append(t.Armed, string(st))
	}
	for _, ef := range s.Effects {
		t.Effects = append(t.Effects, string(ef))
	}
	for _, ef := range s.Forbidden {
		t.Forbidden = append(t.Forbidden, string(ef))
	}
	return t
}

// Mermaid renders the declaration as a deterministic stateDiagram-v2:
// edges sorted by (from, trigger, to), labels "trigger [guard] / effect".
func (s *Spec[S, T, F]) Mermaid() string { return s.Table().Mermaid() }

// Mermaid renders the table as a deterministic stateDiagram-v2.
func (t Table) Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", t.Initial)
	edges := slices.Clone(t.Edges)
	slices.SortFunc(edges, func(a, b TableEdge) int {
		return strings.Compare(a.From+"\x00"+a.On+"\x00"+a.To, b.From+"\x00"+b.On+"\x00"+b.To)
	})
	for _, e := range edges {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e.From, e.To, e.Label())
	}
	states := slices.Clone(t.States)
	slices.SortFunc(states, func(a, b TableState) int { return strings.Compare(a.Name, b.Name) })
	for _, st := range states {
		if st.Terminal {
			fmt.Fprintf(&b, "    %s --> [*]\n", st.Name)
		}
	}
	for _, st := range states {
		if st.Stable {
			fmt.Fprintf(&b, "    class %s stable\n", st.Name)
		}
	}
	b.WriteString("    classDef stable font-weight:bold,stroke-width:3px\n")
	return b.String()
}

// Label is the edge's diagram label: "trigger [guard] / effect".
func (e TableEdge) Label() string {
	l := e.On
	if e.Guard != "" {
		l += " [" + e.Guard + "]"
	}
	if e.Effect != "" {
		l += " / " + e.Effect
	}
	// Mermaid reads ';' and '#' specially in labels.
	return strings.NewReplacer(";", ",", "#", "no.").Replace(l)
}

// JSON renders the table as indented JSON with a trailing newline.
func (t Table) JSON() []byte {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		panic(err) // only plain strings, ints and slices: cannot fail
	}
	return append(b, '\n')
}

// Markdown renders the reviewer page for one machine: what it guards, the
// diagram, the states with their exits, the transition table and the
// properties the harness checks on it.
func (t Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by `webcodex spec` from the declaration in code. Do not edit. -->\n\n")
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", t.Title, t.Guards)
	fmt.Fprintf(&b, "Machine `%s`: %d states, %d edges, initial state `%s`.\n\n", t.Name, len(t.States), len(t.Edges), t.Initial)
	b.WriteString("```mermaid\n" + t.Mermaid() + "```\n\n")
	b.WriteString("## States\n\nWhat each state means is written by hand; its exits are rendered from the edges.\n\n")
	b.WriteString("| state | kind | means | exits |\n|---|---|---|---|\n")
	for _, st := range t.States {
		kind := "transient"
		switch {
		case st.Terminal:
			kind = "terminal"
		case st.Stable:
			kind = "stable"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", st.Name, kind, st.Doc, t.Exits(st.Name))
	}
	b.WriteString("\n## Transitions\n\n| from | trigger | guard | to | effect | counter |\n|---|---|---|---|---|---|\n")
	for _, e := range t.Edges {
		counter := e.Count
		if len(e.Reset) > 0 {
			if counter != "" {
				counter += "; "
			}
			counter += "resets " + strings.Join(e.Reset, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s` | %s | %s |\n", e.From, e.On, code(e.Guard), e.To, code(e.Effect), counter)
	}
	b.WriteString("\n## Properties checked\n\n")
	b.WriteString(t.checkedBy())
	b.WriteString(" Both fire triggers at the real stateless machine and at the plain table model side by side, and check after every trigger:\n\n")
	for _, p := range t.Properties() {
		fmt.Fprintf(&b, "- **%s**: %s\n", p.Name, p.Claim)
	}
	if len(t.Effects) > 0 {
		fmt.Fprintf(&b, "\nEffects an owner of this machine may run (the allowlist; `Validate` rejects an edge with any other): %s.\n", codeList(t.Effects))
	}
	if len(t.Forbidden) > 0 {
		fmt.Fprintf(&b, "\nNever reachable here: %s.\n", codeList(t.Forbidden))
	}
	if len(t.Budgets) > 0 {
		b.WriteString("\nBudgets: ")
		for i, k := range sortedKeys(t.Budgets) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "`%s` ≤ %d", k, t.Budgets[k])
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// checkedBy says how the properties were checked, with the numbers the
// exploration run that rendered this page produced.
func (t Table) checkedBy() string {
	walk := fmt.Sprintf("the rapid walk (`fsm/fsmtest`, pgregory.net/rapid) runs at least %d random sequences of random triggers and facts in the machine's tests", MinRapidChecks)
	if t.Exploration == nil {
		return "In the machine's tests, the exhaustive exploration (`fsm.Spec.Explore`) and " + walk + "."
	}
	ex := t.Exploration
	if t.ExplorationError != "" {
		return fmt.Sprintf("The exhaustive exploration FAILED: %s.", t.ExplorationError)
	}
	return fmt.Sprintf("The exhaustive exploration (`fsm.Spec.Explore`, deterministic; `webcodex spec` ran it to write these numbers, and the machine's tests run it again) "+
		"fired every trigger with every one of the %d fact combinations from every state reachable in at most %d transitions "+
		"(%d states + 2 × (%d + 1) + the budgets: reach any state, then two whole flights, each counted edge up to its budget): %d distinct states "+
		"(state, counters and what the properties remember), %d checked steps, every one of the %d edges taken. Beside it, %s.",
		ex.FactCombos, ex.Depth, len(t.States), t.MaxTransient, ex.States, ex.Steps, ex.Edges, walk)
}

// Exits renders a state's exits from its edges: "`to` on `trigger`
// [guard] / effect", one per edge, in declaration order.
func (t Table) Exits(state string) string {
	var out []string
	for _, e := range t.Edges {
		if e.From != state {
			continue
		}
		x := "`" + e.To + "` on `" + e.On + "`"
		if e.To == state {
			x = "stays on `" + e.On + "`"
		}
		if e.Guard != "" {
			x += " [" + e.Guard + "]"
		}
		if e.Effect != "" {
			x += " / " + e.Effect
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// Property is one property the harness checks, as a reviewer reads it.
type Property struct {
	Name  string
	Claim string
}

// Properties lists what the harness checks on this machine, with the
// declaration's own names filled in.
func (t Table) Properties() []Property {
	ps := []Property{
		{"model agreement", "the stateless machine accepts exactly the triggers the table accepts and lands in the same state."},
		{"bounded", fmt.Sprintf("at most %d transitions in a row pass through transient states before a stable or terminal state; no counter exceeds its budget.", t.MaxTransient)},
		{"no replay", "no effect ID is dispatched twice, whatever the events. An effect's ID is its name and its own counter (with the counters that reset it), or the counter of the flight that runs it, so the same effect fired again on another edge, without its own counter moving, is a replay."},
	}
	if t.Generation != "" {
		ps = append(ps, Property{"generations", fmt.Sprintf("whenever `%s` increases, `%s` runs before the machine reaches a live state (%s), so capabilities of older generations are refused; and every arrival in a live state from outside one (a new connection, counted from the path, not read from the counter) finds `%s` moved since the last arrival.", t.Generation, t.Invalidate, t.liveList(), t.Generation)})
	} else {
		ps = append(ps, Property{"generations", "not applicable: this machine mints no generations (checked vacuously)."})
	}
	if len(t.Revoked) > 0 {
		ps = append(ps, Property{"revocation final", fmt.Sprintf("after %s, no transition enters %s again, nor any state outside the revocation from which an effect can still run.", codeList(t.Revoked), codeList(t.Armed))})
	} else {
		ps = append(ps, Property{"revocation final", "not applicable: this machine has no revocable grant (checked vacuously)."})
	}
	if t.Flight != "" {
		ps = append(ps, Property{"single flight", fmt.Sprintf("`%s` leads at most once between two rests; concurrent requests join the flight.", t.Flight)})
	} else {
		ps = append(ps, Property{"single flight", "not applicable: this machine leads no shared flight (checked vacuously)."})
	}
	return ps
}

func codeList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

func (t Table) liveList() string {
	if len(t.Live) > 0 {
		return codeList(t.Live)
	}
	var stable []string
	for _, st := range t.States {
		if st.Stable {
			stable = append(stable, st.Name)
		}
	}
	return codeList(stable)
}

// HumanDuration renders d for prose in spec/ ("30 minutes", "8 hours",
// "1 second"), so declarations render their constants instead of typing
// the numbers twice.
func HumanDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}, {time.Millisecond, "millisecond"}} {
		if d >= u.d && d%u.d == 0 {
			n := int64(d / u.d)
			if n == 1 {
				return "1 " + u.name
			}
			return fmt.Sprintf("%d %ss", n, u.name)
		}
	}
	return d.String()
}

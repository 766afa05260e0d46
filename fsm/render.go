package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	b.WriteString("## States\n\n| state | kind | doc |\n|---|---|---|\n")
	for _, st := range t.States {
		kind := "transient"
		switch {
		case st.Terminal:
			kind = "terminal"
		case st.Stable:
			kind = "stable"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", st.Name, kind, st.Doc)
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
	b.WriteString("Every run of the property harness (`fsm.Check`, pgregory.net/rapid) fires random trigger sequences with random facts at the real stateless machine and at the plain table model, and checks:\n\n")
	for _, p := range t.Properties() {
		fmt.Fprintf(&b, "- **%s**: %s\n", p.Name, p.Claim)
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
		{"no replay", "no effect ID is dispatched twice, whatever the events (an effect on an edge without a counter is one-shot)."},
	}
	if t.Generation != "" {
		ps = append(ps, Property{"generations", fmt.Sprintf("whenever `%s` increases, `%s` runs before the machine reaches a live state (%s), so capabilities of older generations are refused.", t.Generation, t.Invalidate, t.liveList())})
	} else {
		ps = append(ps, Property{"generations", "not applicable: this machine mints no generations (checked vacuously)."})
	}
	if len(t.Revoked) > 0 {
		ps = append(ps, Property{"revocation final", fmt.Sprintf("after %s, no transition enters %s again.", codeList(t.Revoked), codeList(t.Armed))})
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

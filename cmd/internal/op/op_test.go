package op

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTable fails when a declaration lacks any of its parts: a name, a
// scope, a bound, an audit rule, admission of every page and browser its
// input names, the idempotency key of an effect (and no key on a read), a
// well-formed MCP tool and CLI verb.
func TestTable(t *testing.T) {
	names, tools, verbs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, d := range All() {
		m := d.Declared()
		t.Run(m.Name, func(t *testing.T) {
			if m.Name == "" || names[m.Name] {
				t.Fatalf("a declaration's name is empty or taken: %q", m.Name)
			}
			names[m.Name] = true
			if !slices.Contains([]Scope{Read, Launch, Control}, m.Scope) {
				t.Errorf("scope %q is not a scope", m.Scope)
			}
			if m.Bound == 0 {
				t.Error("no time bound")
			}
			if m.Bound == PersonBound && m.Admit == AdmitPage {
				t.Error("a page's operation waits for no person: it has the call bound")
			}
			if _, waits := d.NewInput().(Waiter); (m.Bound == WaitBound) != waits {
				t.Error("an input that asks to wait (Waiter) is bound by WaitBound, and only it")
			}
			if m.Audit == 0 {
				t.Error("no audit rule")
			}
			if !slices.Contains([]Reveal{RevealsNothing, RevealsPageText, RevealsPixels}, m.Reveals) {
				t.Error("it does not declare what it may reveal (Reveals)")
			}
			if len(Typed(d.NewInput())) > 0 && (!m.Effect || m.Scope != Control) {
				t.Error("an input that may carry secrets belongs to an effect of browser:control")
			}
			if _, acts := d.NewOutput().(*ActResult); acts && m.Audit != AuditActed {
				t.Error("a page action is audited on the origin it acted on (AuditActed)")
			}
			checkAdmission(t, d)
			if _, acts := d.NewOutput().(*ActResult); acts && m.Says == nil {
				t.Error("a page action that does not say what it did (Says)")
			}
			_, keyed := d.NewInput().(Keyer)
			switch {
			case m.Effect && !keyed:
				t.Error("an effect whose input has no idempotency key (embed Keyed)")
			case !m.Effect && keyed:
				t.Error("a read whose input has an idempotency key")
			case m.Effect && m.Audit == NotAudited:
				t.Error("an effect that is not audited")
			case m.Effect && m.Changes:
				t.Error("an effect changes what it acts on: Changes is for what is no effect")
			}
			for _, tool := range m.MCP {
				if !strings.HasPrefix(tool.Name, "browser_") || tool.Desc == "" || tools[tool.Name] {
					t.Errorf("MCP tool %q: a name browser_…, unique, and a description", tool.Name)
				}
				tools[tool.Name] = true
				if !slices.Contains([]string{"", CapVision, CapPDF, CapDevtools}, tool.Group) {
					t.Errorf("MCP tool %s: group %q is not a capability group", tool.Name, tool.Group)
				}
				for _, sc := range tool.Scopes {
					if !slices.Contains([]Scope{Read, Launch, Control}, sc) {
						t.Errorf("MCP tool %s: scope %q is not a scope", tool.Name, sc)
					}
				}
				if tool.ClosedWorld && m.Effect {
					t.Errorf("MCP tool %s: closed world is a read's", tool.Name)
				}
			}
			if v := m.CLI; v != nil {
				if v.Name == "" || verbs[v.Name] || (v.Use != v.Name && !strings.HasPrefix(v.Use, v.Name+" ")) || v.Short == "" {
					t.Errorf("CLI verb %q: a unique name, its use line and a short help", v.Name)
				}
				verbs[v.Name] = true
			}
		})
	}
}

// checkAdmission sets every page and browser the input names (at any
// depth of its embedded structs) and requires Addr to report them: an
// input that names a page its admission does not read would skip the
// check. What the input names is what the declaration says it is
// addressed to: a page's names a page, a browser's a browser and no page,
// and one addressed to nothing names neither.
func checkAdmission(t *testing.T, d Decl) {
	t.Helper()
	m := d.Declared()
	in := reflect.ValueOf(d.NewInput()).Elem()
	want := Addr{}
	var set func(v reflect.Value)
	set = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				set(v.Field(i))
			case name == "page" && f.Type.Kind() == reflect.String:
				v.Field(i).SetString("p-admit")
				want.Page = "p-admit"
			case name == "browser" && f.Type.Kind() == reflect.String:
				v.Field(i).SetString("b-admit")
				want.Browser = "b-admit"
			}
		}
	}
	set(in)
	switch m.Admit {
	case AdmitPage:
		if want.Page == "" {
			t.Error("a page's operation whose input names no page: nothing to admit")
		}
	case AdmitBrowser, AdmitCreator:
		if want.Browser == "" || want.Page != "" {
			t.Errorf("a browser's operation names a browser and no page; its input names %+v", want)
		}
	case AdmitNothing:
		if want != (Addr{}) {
			t.Errorf("an operation addressed to nothing whose input names %+v", want)
		}
	default:
		t.Fatalf("admission %d is no admission", m.Admit)
	}
	if _, ok := in.Interface().(Input); !ok && (m.Admit != AdmitNothing || in.NumField() != 0) {
		t.Error("the input says nothing of what it addresses (no Addr method); only struct{} may")
	}
	if got := AddrOf(in.Interface()); got != want {
		t.Errorf("admission reads %+v, the input names %+v", got, want)
	}
}

// TestProbeTakesItsActions: every parameter of an action the probe may
// perform is a parameter of the probe (which passes it on by name), so
// the probe drops none.
func TestProbeTakesItsActions(t *testing.T) {
	probe := Params(Probe)
	for _, d := range All() {
		if !d.Declared().Probe {
			continue
		}
		for _, p := range Params(d) {
			if !slices.Contains(probe, p) {
				t.Errorf("the probe cannot pass %s's %s", d.Declared().Name, p)
			}
		}
	}
}

func TestParamsAreDecodedStrictly(t *testing.T) {
	if _, err := Click.Decode([]byte(`{"page":"p","text":"x"}`)); err == nil {
		t.Fatal("click decoded a text it does not take")
	}
	in, err := Type.Decode([]byte(`{"page":"p","text":"x","slowly":true}`))
	if err != nil || !in.(TypeIn).Slowly || in.Addr().Page != "p" {
		t.Fatalf("type: %+v, %v", in, err)
	}
}

// TestTyped: the fields that may carry secret placeholders are those
// tagged, embedded ones included, and nothing else.
func TestTyped(t *testing.T) {
	in := &TypeIn{Text: "a"}
	got := Typed(in)
	if len(got) != 1 || got[0] != &in.Text {
		t.Fatalf("Typed(TypeIn) = %v, want its Text", got)
	}
	if got := Typed(&ClickIn{}); len(got) != 0 {
		t.Fatalf("Typed(ClickIn) = %v, want none", got)
	}
	if got := Typed(TypeIn{}); got != nil {
		t.Fatalf("Typed of a value = %v, want nil (it needs a pointer)", got)
	}
}

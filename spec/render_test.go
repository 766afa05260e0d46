package spec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// TestExitsComeFromTheEdges checks each machine page lists every state's
// exits as rendered from its edges, and that no declaration writes them by
// hand (Validate rejects that at init; this re-checks what spec/ shows).
func TestExitsComeFromTheEdges(t *testing.T) {
	files := Files()
	for _, d := range Machines() {
		tab := d.Table()
		md := string(files[tab.Name+".md"])
		for _, st := range tab.States {
			row := "| `" + st.Name + "` | "
			i := strings.Index(md, row)
			if i < 0 {
				t.Errorf("%s.md has no row for %s", tab.Name, st.Name)
				continue
			}
			line, _, _ := strings.Cut(md[i:], "\n")
			if !strings.HasSuffix(line, "| "+tab.Exits(st.Name)+" |") {
				t.Errorf("%s.md: the row of %s does not end with its rendered exits %q: %s", tab.Name, st.Name, tab.Exits(st.Name), line)
			}
			if strings.Contains(strings.ToLower(st.Doc), "moves to") {
				t.Errorf("%s: the doc of %s writes its exits by hand", tab.Name, st.Name)
			}
		}
	}
}

// TestExplorationNumbersAreRendered checks every machine was explored
// without a violation when spec/ was rendered, and its page and the README
// carry the numbers of that run.
func TestExplorationNumbersAreRendered(t *testing.T) {
	files := Files()
	readme := string(files["README.md"])
	for _, d := range Machines() {
		tab := explored(d)
		if tab.ExplorationError != "" {
			t.Errorf("%s: %s", tab.Name, tab.ExplorationError)
			continue
		}
		ex := tab.Exploration
		if ex.Depth != len(tab.States)+tab.MaxTransient*2+2+sumBudgets(tab) || ex.States == 0 || ex.Steps < ex.States {
			t.Errorf("%s: exploration %+v", tab.Name, ex)
		}
		md := string(files[tab.Name+".md"])
		if !strings.Contains(md, "checked steps") || !strings.Contains(md, itoa(ex.Steps)+" checked steps") {
			t.Errorf("%s.md lacks the exploration's numbers (%d steps)", tab.Name, ex.Steps)
		}
		if !strings.Contains(readme, "| ["+tab.Name+"]("+tab.Name+".md) | "+itoa(ex.Depth)+" | ") {
			t.Errorf("README.md lacks the exploration row of %s", tab.Name)
		}
	}
}

func sumBudgets(t fsm.Table) int {
	n := 0
	for _, b := range t.Budgets {
		n += b
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

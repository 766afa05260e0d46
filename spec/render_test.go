package spec

import (
	"os"
	"path/filepath"
	"regexp"
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

// stateConst matches a state constant with its line comment, e.g.
// `Ready State = "ready" // connected.`
var stateConst = regexp.MustCompile(`^\s*(\w+)\s+\w*State\s*=\s*"[^"]*"\s*//(.*)$`)

// TestStateConstCommentsWriteNoExits keeps the Go docs from listing a
// state's exits by hand again: they are rendered from the edges in spec/.
func TestStateConstCommentsWriteNoExits(t *testing.T) {
	exits := regexp.MustCompile(`(?i)\bmoves? to\b|^\s*terminal\b`)
	checked := 0
	for _, dir := range []string{"../consent", "../reconnect", "../lease", "../extension/bridge"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(data), "\n") {
				m := stateConst.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				checked++
				if exits.MatchString(m[2]) {
					t.Errorf("%s:%d: the comment of %s writes exits by hand: %s", f, i+1, m[1], strings.TrimSpace(m[2]))
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found only %d state constants: the pattern no longer matches the declarations", checked)
	}
}

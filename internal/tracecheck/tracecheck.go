// Package tracecheck replays every machine transition a test binary's real
// runs took against the machine's declaration (trace conformance) and
// records which test took which edge (edge coverage for spec/).
//
// A package opts in from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(tracecheck.Main(m)) }
//
// and a test names itself as the taker of the edges its run fires with
// [Track]. A complete run of a package whose edge coverage is committed
// (spec/coverage) also checks that recording: a machine it credits to the
// package that the run never moved fails the run. Production code never
// imports this package.
package tracecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// CoverageEnv names the directory a run writes its edge coverage to (one
// JSON file per test binary); unset, nothing is written.
const CoverageEnv = "WEBCODEX_EDGE_COVERAGE"

// maxPerInstance bounds the records kept per machine instance; older ones
// are dropped and the rest is checked as a suffix.
const maxPerInstance = 4 * fsm.MaxTrace

// maxTakers bounds the test names kept per edge.
const maxTakers = 3

type recorder struct {
	mu        sync.Mutex
	instances map[uint64][]fsm.Record
	active    []string                       // tests running now, in start order
	taken     map[string]map[string][]string // machine → edge → test names
}

var rec = &recorder{instances: map[uint64][]fsm.Record{}, taken: map[string]map[string][]string{}}

func (r *recorder) Record(x fsm.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	recs := append(r.instances[x.Instance], x)
	if len(recs) > maxPerInstance {
		recs = slices.Clone(recs[len(recs)-maxPerInstance:])
	}
	r.instances[x.Instance] = recs
	edges := r.taken[x.Machine]
	if edges == nil {
		edges = map[string][]string{}
		r.taken[x.Machine] = edges
	}
	key := fsm.EdgeKey(x.From, x.On, x.To)
	who := "(no tracked test)"
	if len(r.active) == 1 {
		who = r.active[0]
	} else if len(r.active) > 1 {
		who = strings.Join(r.active, " | ")
	}
	if len(edges[key]) < maxTakers && !slices.Contains(edges[key], who) {
		edges[key] = append(edges[key], who)
	}
}

// Track names t as running while the machines it drives record
// transitions; parallel tests share the attribution.
func Track(t testing.TB) {
	t.Helper()
	rec.mu.Lock()
	rec.active = append(rec.active, t.Name())
	rec.mu.Unlock()
	t.Cleanup(func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if i := slices.Index(rec.active, t.Name()); i >= 0 {
			rec.active = slices.Delete(rec.active, i, i+1)
		}
	})
}

// Tests is what Main runs: a *testing.M, or another Main wrapper's view of
// one (see [Wrap]).
type Tests interface{ Run() int }

// Wrap returns m with Main's recording and checking around its Run, for a
// TestMain that hands m to another wrapper which exits by itself.
func Wrap(m Tests) Tests { return wrapped{m} }

type wrapped struct{ m Tests }

func (w wrapped) Run() int { return Main(w.m) }

// Main installs the recorder, runs the tests and then checks every
// recorded trace. A trace that is not a path of its declaration fails the
// run even when every test passed.
func Main(m Tests) int {
	fsm.SetRecorder(rec)
	code := m.Run()
	fsm.SetRecorder(nil)
	if err := Check(); err != nil {
		fmt.Fprintln(os.Stderr, "trace conformance:", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 && complete() {
		if err := checkRecording(); err != nil {
			fmt.Fprintln(os.Stderr, "edge coverage:", err)
			code = 1
		}
	}
	if dir := os.Getenv(CoverageEnv); dir != "" {
		if err := writeCoverage(dir); err != nil {
			fmt.Fprintln(os.Stderr, "edge coverage:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Check replays every recorded machine instance against its declaration.
func Check() error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var problems []string
	ids := make([]uint64, 0, len(rec.instances))
	for id := range rec.instances {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		recs := rec.instances[id]
		c, ok := fsm.LookupConformer(recs[0].Machine)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no declaration registered", recs[0].Machine))
			continue
		}
		if err := c.Conform(recs); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d trace(s) are not paths of their declarations:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

// Transitions returns how many transitions were recorded in all.
func Transitions() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, r := range rec.instances {
		n += len(r)
	}
	return n
}

// Coverage is one test binary's edge coverage: machine → edge → tests.
type Coverage map[string]map[string][]string

func writeCoverage(dir string) error {
	rec.mu.Lock()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // edge keys hold "-->"; keep the committed files readable
	enc.SetIndent("", "  ")
	err := enc.Encode(Coverage(rec.taken))
	rec.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	wd, _ := os.Getwd()
	return os.WriteFile(filepath.Join(dir, packageName(wd)+".json"), buf.Bytes(), 0o644)
}

// complete reports whether this run ran every test of the package: no
// -run or -skip filter, not -short (which skips the real-browser tests).
func complete() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

// recordingDir is where the committed edge coverage lives, from the module
// root.
const recordingDir = "spec/coverage"

// checkRecording checks the package's committed edge coverage against the
// run that just ended. A machine the recording credits to this package that
// the run never moved fails the run, so spec/edge-coverage.md never credits
// a package with a machine its tests no longer drive. A single credited edge
// the run did not take, of a machine it did move, is only reported: some
// edges (a gate held at the instant a socket is cut) depend on timing, and a
// check that fails on them would fail a green suite on a loaded machine.
// Edges this run took that the recording lacks are reported too:
// `make edge-coverage` adds them.
func checkRecording() error {
	wd, _ := os.Getwd()
	data, err := os.ReadFile(filepath.Join(moduleRoot(wd), recordingDir, packageName(wd)+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no committed recording for this package
	}
	if err != nil {
		return err
	}
	var recorded Coverage
	if err := json.Unmarshal(data, &recorded); err != nil {
		return fmt.Errorf("%s: %w", packageName(wd), err)
	}
	rec.mu.Lock()
	missing, extra := compareRecording(recorded, Coverage(rec.taken))
	rec.mu.Unlock()
	if len(extra) > 0 {
		fmt.Fprintf(os.Stderr, "edge coverage: this run took %d edge(s) the committed recording lacks (make edge-coverage adds them):\n  %s\n", len(extra), strings.Join(extra, "\n  "))
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "edge coverage: the committed recording (%s) credits this package with %d edge(s) this run did not take (timing, or a test that changed; make edge-coverage re-records):\n  %s\n",
			recordingDir, len(missing), strings.Join(missing, "\n  "))
	}
	rec.mu.Lock()
	unmoved := unmovedMachines(recorded, Coverage(rec.taken))
	rec.mu.Unlock()
	if len(unmoved) > 0 {
		return fmt.Errorf("the committed recording (%s) credits this package with machines this complete run never moved; fix the test or re-record with make edge-coverage: %s",
			recordingDir, strings.Join(unmoved, ", "))
	}
	return nil
}

// unmovedMachines returns the machines recorded with edges that took none
// in taken, sorted.
func unmovedMachines(recorded, taken Coverage) []string {
	var out []string
	for m, edges := range recorded {
		if len(edges) > 0 && len(taken[m]) == 0 {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// compareRecording returns the edges recorded but not taken (with the tests
// the recording names) and those taken but not recorded, sorted.
func compareRecording(recorded, taken Coverage) (missing, extra []string) {
	for m, edges := range recorded {
		for e, who := range edges {
			if len(taken[m][e]) == 0 {
				missing = append(missing, fmt.Sprintf("%s: %s (recorded for %s)", m, e, strings.Join(who, ", ")))
			}
		}
	}
	for m, edges := range taken {
		for e := range edges {
			if len(recorded[m][e]) == 0 {
				extra = append(extra, m+": "+e)
			}
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}

// packageName names a package's recording: its directory from the module
// root with separators as underscores ("cmd_internal_runner").
func packageName(wd string) string {
	name := strings.TrimPrefix(strings.ReplaceAll(strings.TrimPrefix(wd, moduleRoot(wd)), string(filepath.Separator), "_"), "_")
	if name == "" {
		return "root"
	}
	return name
}

// moduleRoot finds the directory holding go.mod above wd.
func moduleRoot(wd string) string {
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return wd
		}
	}
}

// Merge folds several binaries' coverage into one, test names sorted.
func Merge(parts ...Coverage) Coverage {
	out := Coverage{}
	for _, p := range parts {
		for m, edges := range p {
			if out[m] == nil {
				out[m] = map[string][]string{}
			}
			for e, who := range edges {
				for _, w := range who {
					if !slices.Contains(out[m][e], w) {
						out[m][e] = append(out[m][e], w)
					}
				}
				sort.Strings(out[m][e])
			}
		}
	}
	return out
}

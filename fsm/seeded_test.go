package fsm

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The seeded-bug tests place each class of bug at every step the
// exploration reaches, not only one step before where it must be caught: a
// checker that looks one step too late, explores one level too shallow,
// forgets part of what it deduplicates on or stops counting after the first
// occurrence passes a bug placed early but not one placed at the boundary.

type lineSpec = Spec[toyState, toyTrigger, toyFacts]
type lineEdge = Edge[toyState, toyTrigger, toyFacts]

// after holds once at ticks were taken: the edge it guards first fires at
// step at+1, and every path to it has its own tick count, so no two are
// merged by the exploration's deduplication.
func after(at int) *Guard[toyFacts] { return AtLeast[toyFacts]("ticks", at) }

func both(a, b *Guard[toyFacts]) *Guard[toyFacts] {
	return &Guard[toyFacts]{Name: a.Name + "&" + b.Name, OK: func(e Env[toyFacts]) bool { return a.OK(e) && b.OK(e) }}
}

// line is a machine resting in idle, where an unbudgeted tick counts the
// steps, with the seeded edges after it.
func line(maxTransient int, states []toyState, edges ...lineEdge) *lineSpec {
	s := &lineSpec{Name: "line", Title: "Line", Guards: "nothing", Initial: "idle", Stable: []toyState{"idle"}, MaxTransient: maxTransient}
	for _, st := range append([]toyState{"idle"}, states...) {
		s.States = append(s.States, StateDoc[toyState]{st, "A state."})
	}
	s.Edges = append([]lineEdge{{From: "idle", On: "tick", To: "idle", Count: "ticks"}}, edges...)
	return s
}

// explore declares the triggers and effects the edges use, then explores.
func explore(s *lineSpec) error {
	s.Triggers = nil
	for _, e := range s.Edges {
		if !slices.Contains(s.Triggers, e.On) {
			s.Triggers = append(s.Triggers, e.On)
		}
	}
	s.Effects = s.EffectNames()
	_, err := s.Explore()
	return err
}

// seededClass is one class of bug: bug(at) carries it, enabled after at
// ticks, and breaks property at step at+lag; fixed(at) is the same machine
// without the bug, which must pass wherever it is placed.
type seededClass struct {
	name       string
	property   string
	lag        int
	bug, fixed func(at int) *lineSpec
}

var seededClasses = []seededClass{
	{"unbounded loop", "bounded", 4, // idle→spin, then spin→spin until the 4th transient transition
		func(at int) *lineSpec {
			return line(3, []toyState{"spin"},
				lineEdge{From: "idle", On: "go", To: "spin", Guard: after(at)},
				lineEdge{From: "spin", On: "go", To: "spin"},
				lineEdge{From: "spin", On: "stop", To: "idle"})
		},
		func(at int) *lineSpec { // exactly MaxTransient transient transitions, then rest
			return line(3, []toyState{"spin", "spin2", "spin3"},
				lineEdge{From: "idle", On: "go", To: "spin", Guard: after(at)},
				lineEdge{From: "spin", On: "go", To: "spin2"},
				lineEdge{From: "spin2", On: "go", To: "spin3"},
				lineEdge{From: "spin3", On: "stop", To: "idle"})
		}},
	{"budget one too large", "bounded", 3,
		func(at int) *lineSpec {
			s := line(3, nil, lineEdge{From: "idle", On: "try", To: "idle", Guard: both(after(at), Below[toyFacts]("tries", 3)), Effect: "dial", Count: "tries"})
			s.Budgets = Counters{"tries": 2}
			return s
		},
		func(at int) *lineSpec {
			s := line(3, nil, lineEdge{From: "idle", On: "try", To: "idle", Guard: both(after(at), Below[toyFacts]("tries", 2)), Effect: "dial", Count: "tries"})
			s.Budgets = Counters{"tries": 2}
			return s
		}},
	{"second leader", "single flight", 2, leaders(false, false), leaders(false, true)},
	{"second leader after a pause", "single flight", 3, leaders(true, false), leaders(true, true)},
	{"missing invalidation", "generations", 3, connections(1, true, false), connections(1, true, true)},
	{"missing invalidation on the second connection", "generations", 6, connections(2, true, false), connections(2, true, true)},
	{"connection not counted", "generations", 3, connections(1, false, true), connections(1, true, true)},
	{"second connection not counted", "generations", 6, connections(2, false, true), connections(2, true, true)},
	{"re-armed revocation", "revocation final", 2, revocation(0, "idle"), revocation(0, "parked")},
	{"re-armed revocation after a pause", "revocation final", 4, revocation(2, "idle"), revocation(2, "parked")},
	{"revocation left for a state that runs effects", "revocation final", 2, revocation(0, "active"), revocation(0, "parked")},
	{"replayed effect", "no replay", 3, replays(false, false), replays(false, true)},
	{"replayed effect after another effect", "no replay", 3, replays(true, false), replays(true, true)},
}

// leaders: idle --lost--> flying leads a flight; a second lost (after a
// pause when paused) leads again in the same flight unless joined.
func leaders(paused, joined bool) func(at int) *lineSpec {
	return func(at int) *lineSpec {
		second := lineEdge{From: "flying", On: "lost", To: "flying2", Effect: "lead", Count: "losses"}
		if paused {
			second.From = "paused"
		}
		if joined {
			second.Effect, second.Count = "", ""
		}
		s := line(3, []toyState{"flying", "paused", "flying2"},
			lineEdge{From: "idle", On: "lost", To: "flying", Guard: after(at), Effect: "lead", Count: "losses"},
			lineEdge{From: "flying", On: "wait", To: "paused"},
			second,
			lineEdge{From: "flying", On: "land", To: "idle"},
			lineEdge{From: "paused", On: "land", To: "idle"},
			lineEdge{From: "flying2", On: "land", To: "idle"})
		s.Flight = "lead"
		return s
	}
}

// connections: idle --lost--> down --up--> fresh --done--> idle, the n-th
// connection (through fresh2) counted or not and invalidating or not; the
// ones before it (through fresh) do both.
func connections(n int, counted, invalidates bool) func(at int) *lineSpec {
	return func(at int) *lineSpec {
		nth := AtLeast[toyFacts]("losses", n)
		up := lineEdge{From: "down", On: "up", To: "fresh2", Guard: nth}
		if counted {
			up.Count = "gen"
		}
		done := lineEdge{From: "fresh2", On: "done", To: "idle"}
		if invalidates {
			done.Effect, done.Count = "inval", "invals"
		}
		edges := []lineEdge{{From: "idle", On: "lost", To: "down", Guard: after(at), Count: "losses"}, up, done}
		if n > 1 {
			edges = append(edges,
				lineEdge{From: "down", On: "up", To: "fresh", Guard: Not(nth), Count: "gen"},
				lineEdge{From: "fresh", On: "done", To: "idle", Effect: "inval", Count: "invals"})
		}
		s := line(3, []toyState{"down", "fresh", "fresh2"}, edges...)
		s.Generation, s.Invalidate = "gen", "inval"
		return s
	}
}

// revocation: idle --revoke--> gone, through pause more revoked-side
// states, then back to `to`: idle is armed, active runs an effect, parked
// is neither.
func revocation(pause int, to toyState) func(at int) *lineSpec {
	return func(at int) *lineSpec {
		states := []toyState{"gone", "parked", "active"}
		edges := []lineEdge{
			{From: "idle", On: "revoke", To: "gone", Guard: after(at)},
			{From: "active", On: "work", To: "active", Effect: "work", Count: "works"},
		}
		from := toyState("gone")
		for i := range pause {
			st := toyState(fmt.Sprintf("limbo%d", i))
			states = append(states, st)
			edges = append(edges, lineEdge{From: from, On: "wait", To: st})
			from = st
		}
		edges = append(edges, lineEdge{From: from, On: "back", To: to})
		if to != "active" {
			edges = append(edges, lineEdge{From: "parked", On: "wake", To: "active"}) // active reachable, never from a revocation
		}
		s := line(3, states, edges...)
		s.Stable = append(s.Stable, "gone", "parked", "active")
		for i := range pause {
			s.Stable = append(s.Stable, toyState(fmt.Sprintf("limbo%d", i)))
		}
		s.Revoked, s.Armed = []toyState{"gone"}, []toyState{"idle"}
		if to == "parked" { // fixed: parked is final, and active not reachable from it
			s.Edges = slices.DeleteFunc(s.Edges, func(e lineEdge) bool { return e.On == "wake" })
			s.Edges = append(s.Edges, lineEdge{From: "idle", On: "start", To: "active"})
		}
		return s
	}
}

// replays: idle --send--> sent runs send, one-shot (no counter, no
// flight); back in idle (after another effect when ack), a second send
// repeats its ID unless counted.
func replays(ack, counted bool) func(at int) *lineSpec {
	return func(at int) *lineSpec {
		send := lineEdge{From: "idle", On: "send", To: "sent", Guard: after(at), Effect: "send"}
		if counted {
			send.Count = "sends"
		}
		back := lineEdge{From: "sent", On: "back", To: "idle"}
		if ack {
			back.Effect, back.Count = "ack", "acks"
		}
		s := line(3, []toyState{"sent"}, send, back)
		s.Stable = append(s.Stable, "sent")
		return s
	}
}

func TestExploreCatchesEachBugAtEveryStep(t *testing.T) {
	for _, c := range seededClasses {
		t.Run(c.name, func(t *testing.T) {
			depth := c.bug(0).ExploreDepth()
			last := depth - c.lag // the bug's last placement the exploration reaches
			if last < 2 {
				t.Fatalf("depth %d leaves no room for a bug of lag %d", depth, c.lag)
			}
			for at := 0; at <= last+1; at++ {
				place := "late"
				switch at {
				case 0:
					place = "early"
				case last:
					place = "boundary"
				case last + 1:
					place = "beyond"
				}
				t.Run(fmt.Sprintf("%s at step %d", place, at+c.lag), func(t *testing.T) {
					err := explore(c.bug(at))
					reported := err != nil && strings.HasPrefix(err.Error(), c.property+":")
					if place == "beyond" {
						// One step past the depth is not explored: the depth is exactly ExploreDepth.
						if reported {
							t.Fatalf("a bug at step %d, past the depth %d, was reported: %v", at+c.lag, depth, err)
						}
						return
					}
					if !reported {
						t.Fatalf("a %s at step %d (depth %d) was not reported as %q: %v", c.name, at+c.lag, depth, c.property, err)
					}
					// Without the bug it passes (an edge placed past the depth may go untaken).
					if err := explore(c.fixed(at)); err != nil && !strings.HasPrefix(err.Error(), "exploration:") {
						t.Fatalf("the same machine without the bug failed: %v", err)
					}
				})
			}
		})
	}
}

// TestValidateCatchesEachDeclarationBugAtEveryEdge: a duplicate edge and an
// effect outside the allowlist, seeded at every edge of the toy (the first,
// every middle one, the last), each reported.
func TestValidateCatchesEachDeclarationBugAtEveryEdge(t *testing.T) {
	n := len(goodToy().Edges)
	for i := range n {
		place := fmt.Sprintf("edge %d of %d", i+1, n)
		t.Run("duplicate of "+place+" appended", func(t *testing.T) {
			s := goodToy()
			s.Edges = append(s.Edges, s.Edges[i])
			wantProblem(t, s, "declared twice")
		})
		t.Run("duplicate of "+place+" prepended", func(t *testing.T) {
			s := goodToy()
			s.Edges = append([]lineEdge{s.Edges[i]}, s.Edges...)
			wantProblem(t, s, "declared twice")
		})
		t.Run("effect outside the allowlist on "+place, func(t *testing.T) {
			s := goodToy()
			s.Edges[i].Effect = "kill_process_group"
			wantProblem(t, s, "kill_process_group, which is not in the allowlist")
		})
		t.Run("forbidden effect on "+place, func(t *testing.T) {
			s := goodToy()
			s.Edges[i].Effect = "kill_process_group"
			s.Effects = append(s.Effects, "kill_process_group")
			s.Forbidden = []Effect{"kill_process_group"}
			wantProblem(t, s, "carries forbidden effect kill_process_group")
		})
	}
	t.Run("duplicate with another guard", func(t *testing.T) {
		s := goodToy()
		dup := s.Edges[3]
		dup.Guard = AtLeast[toyFacts]("generation", 99)
		s.Edges = append(s.Edges, dup)
		wantProblem(t, s, "declared twice")
	})
}

func wantProblem(t *testing.T, s *lineSpec, want string) {
	t.Helper()
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate() = %v, want a problem containing %q", err, want)
	}
}

// TestExplorationKeyCoversEveryField: two points that differ in any one
// field of what the properties remember have different keys, so the
// exploration never merges them. A field added to tracked without a case
// here fails.
func TestExplorationKeyCoversEveryField(t *testing.T) {
	tr := goodToy().NewTracker()
	base := tr.at
	tr.restore(base)
	k0 := tr.key()
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		t.Run(f.Name, func(t *testing.T) {
			at := base
			at.counters, at.dispatched = base.counters.clone(), map[string]bool{}
			fv := reflect.ValueOf(&at).Elem().Field(i)
			fv = reflect.NewAt(fv.Type(), fv.Addr().UnsafePointer()).Elem()
			switch fv.Kind() {
			case reflect.String:
				fv.SetString(fv.String() + "x")
			case reflect.Int:
				fv.SetInt(fv.Int() + 1)
			case reflect.Bool:
				fv.SetBool(!fv.Bool())
			case reflect.Map:
				switch m := fv.Addr().Interface().(type) {
				case *Counters:
					(*m)["attempts"] = 1
				case *map[string]bool:
					(*m)["lead"] = true
				default:
					t.Fatalf("field %s: no case for %s", f.Name, fv.Type())
				}
			default:
				t.Fatalf("field %s: no case for %s", f.Name, fv.Type())
			}
			tr.restore(at)
			if tr.key() == k0 {
				t.Fatalf("changing %s leaves the key %q unchanged: the exploration would merge two different futures", f.Name, k0)
			}
		})
	}
}

package fsm

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Record is one transition a machine took, as the trace keeps it.
type Record struct {
	Machine  string `json:"machine"`  // the declaration's name
	Instance uint64 `json:"instance"` // which built machine, unique in the process
	Seq      int    `json:"seq"`      // 0 for the machine's first transition
	From     string `json:"from"`
	On       string `json:"on"`
	To       string `json:"to"`
	Effect   string `json:"effect,omitempty"`
	EffectID string `json:"effectId,omitempty"`
}

// MaxTrace bounds the transitions one machine keeps in its own trace; the
// oldest go first.
const MaxTrace = 256

// Recorder receives every transition of every machine in the process. Test
// suites install one (internal/tracecheck) to replay real runs against the
// declarations; production installs none.
type Recorder interface {
	Record(Record)
}

var (
	recorder  atomic.Pointer[Recorder]
	instances atomic.Uint64
)

// SetRecorder installs r process-wide (nil removes it) and returns the one
// it replaced.
func SetRecorder(r Recorder) Recorder {
	var old *Recorder
	if r == nil {
		old = recorder.Swap(nil)
	} else {
		old = recorder.Swap(&r)
	}
	if old == nil {
		return nil
	}
	return *old
}

// trace is a machine's bounded ring of its latest transitions.
type trace struct {
	buf  []Record
	next int // Seq of the next record
}

func (t *trace) add(r Record, record bool) {
	r.Seq = t.next
	t.next++
	if len(t.buf) == MaxTrace {
		copy(t.buf, t.buf[1:])
		t.buf = t.buf[:MaxTrace-1]
	}
	t.buf = append(t.buf, r)
	if p := recorder.Load(); p != nil && record {
		(*p).Record(r)
	}
}

// Conformer replays recorded transitions against a declaration without
// knowing its Go types. Every built declaration registers one under its name.
type Conformer interface {
	// Conform reports the first record of one machine instance's trace
	// (in Seq order, possibly with a dropped prefix) that is not a path of
	// the declaration.
	Conform(records []Record) error
	// EdgeKeys lists every declared edge as "from --on--> to".
	EdgeKeys() []string
}

var conformers sync.Map // declaration name → Conformer

// LookupConformer returns the conformer registered for a declaration name.
func LookupConformer(name string) (Conformer, bool) {
	c, ok := conformers.Load(name)
	if !ok {
		return nil, false
	}
	return c.(Conformer), true
}

// EdgeKey is how records and edges are matched in coverage tables.
func EdgeKey(from, on, to string) string { return from + " --" + on + "--> " + to }

type specConformer[S, T ~string, F any] struct{ s *Spec[S, T, F] }

func (c specConformer[S, T, F]) EdgeKeys() []string {
	out := make([]string, 0, len(c.s.Edges))
	for _, e := range c.s.Edges {
		out = append(out, EdgeKey(string(e.From), string(e.On), string(e.To)))
	}
	return out
}

// Conform checks that the records are consecutive transitions along
// declared edges, starting at the initial state when the trace is whole,
// with the effect and effect ID the declaration gives (counters are
// replayed; guards are not, since facts are not recorded).
func (c specConformer[S, T, F]) Conform(records []Record) error {
	if len(records) == 0 {
		return nil
	}
	s := c.s
	whole := records[0].Seq == 0
	var counters Counters
	var flight string
	if whole {
		counters = Counters{}
		if records[0].From != string(s.Initial) {
			return fmt.Errorf("%s#%d: first transition leaves %s, not the initial state %s", s.Name, records[0].Instance, records[0].From, s.Initial)
		}
	}
	for i, r := range records {
		if i > 0 {
			prev := records[i-1]
			if r.Seq != prev.Seq+1 {
				return fmt.Errorf("%s#%d: transition %d follows %d: the trace has a gap", s.Name, r.Instance, r.Seq, prev.Seq)
			}
			if r.From != prev.To {
				return fmt.Errorf("%s#%d: transition %d leaves %s but the machine was in %s", s.Name, r.Instance, r.Seq, r.From, prev.To)
			}
		}
		var edge *Edge[S, T, F]
		for j := range s.Edges {
			e := &s.Edges[j]
			if string(e.From) == r.From && string(e.On) == r.On && string(e.To) == r.To {
				edge = e
				break
			}
		}
		if edge == nil {
			return fmt.Errorf("%s#%d: transition %d %s is not declared", s.Name, r.Instance, r.Seq, EdgeKey(r.From, r.On, r.To))
		}
		if string(edge.Effect) != r.Effect {
			return fmt.Errorf("%s#%d: transition %d %s ran effect %q, the declaration says %q", s.Name, r.Instance, r.Seq, EdgeKey(r.From, r.On, r.To), r.Effect, edge.Effect)
		}
		if counters != nil {
			counters, flight = s.advance(counters, flight, *edge)
			if id := s.EffectID(*edge, counters, flight); id != r.EffectID {
				return fmt.Errorf("%s#%d: transition %d effect id %q, the declaration gives %q", s.Name, r.Instance, r.Seq, r.EffectID, id)
			}
		}
	}
	return nil
}

func register[S, T ~string, F any](s *Spec[S, T, F]) {
	conformers.LoadOrStore(s.Name, specConformer[S, T, F]{s})
}

package fsm

// Place builds a quiet machine resting in st with counters c, as a run that
// reached st would leave it: a machine's example table (fsm/fsmtest) fires
// one trigger in a named state without replaying a path to it. Like the
// property harness's machines, its transitions reach no [Recorder], so
// example tables never count as edge coverage by a real run.
func (s *Spec[S, T, F]) Place(st S, c Counters, facts func() F) *Machine[S, T, F] {
	m := s.build(facts, true)
	if c == nil {
		c = Counters{}
	}
	m.restore(st, c, "")
	return m
}

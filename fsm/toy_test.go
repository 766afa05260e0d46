package fsm

type toyState string
type toyTrigger string
type toyFacts struct{ OK bool }

func drawToyFacts(d Drawer) toyFacts { return toyFacts{OK: d.Bool("ok")} }

var toyOK = &Guard[toyFacts]{Name: "ok", OK: func(e Env[toyFacts]) bool { return e.Facts.OK }}

// goodToy is a small reconnecting machine that passes every property.
func goodToy() *Spec[toyState, toyTrigger, toyFacts] {
	return &Spec[toyState, toyTrigger, toyFacts]{
		Name: "toy", Title: "Toy", Guards: "nothing", Initial: "ready",
		States: []StateDoc[toyState]{
			{"ready", "Connected."},
			{"dialing", "Dialing, within a budget of attempts."},
			{"invalidating", "Connected again; older capabilities still to refuse."},
			{"failed", "Gave up."},
			{"revoked", "Revoked for good."},
		},
		Triggers: []toyTrigger{"lost", "dialed", "retry", "done", "request", "revoke"},
		Edges: []Edge[toyState, toyTrigger, toyFacts]{
			{From: "ready", On: "lost", To: "dialing", Effect: "lead", Count: "losses", Reset: []string{"attempts"}},
			{From: "dialing", On: "retry", To: "dialing", Guard: Below[toyFacts]("attempts", 3), Effect: "dial", Count: "attempts"},
			{From: "dialing", On: "retry", To: "failed", Guard: AtLeast[toyFacts]("attempts", 3)},
			{From: "dialing", On: "dialed", To: "invalidating", Guard: toyOK, Count: "generation"},
			{From: "dialing", On: "dialed", To: "failed", Guard: Not(toyOK)},
			{From: "dialing", On: "revoke", To: "revoked"},
			{From: "invalidating", On: "done", To: "ready", Effect: "invalidate", Count: "invalidations"},
		},
		Effects: []Effect{"lead", "dial", "invalidate"},
		Stable:  []toyState{"ready"}, Terminal: []toyState{"failed", "revoked"},
		Budgets: Counters{"attempts": 3}, MaxTransient: 6,
		Generation: "generation", Invalidate: "invalidate",
		Revoked: []toyState{"revoked"}, Armed: []toyState{"ready"},
		Flight:    "lead",
		DrawFacts: drawToyFacts,
	}
}

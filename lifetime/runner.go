// Package lifetime declares the machines of the Runner's own lifetimes —
// the Runner itself and a page's raw CDP session — beside consent/,
// reconnect/ and lease/, whose lifetimes it composes. It imports nothing but
// fsm: spec/ draws these declarations, and the Runner owns them through
// fsm.Owner.
package lifetime

import "github.com/webcodex/webcodex/fsm"

// RunnerState is a state of the Runner's own life.
type RunnerState string

// Runner states. Their exits are rendered from the declared edges (spec/).
const (
	RunnerServing  RunnerState = "serving"  // launches, attaches and sessions are accepted.
	RunnerDraining RunnerState = "draining" // every browser is being closed or detached.
	RunnerClosed   RunnerState = "closed"   // nothing of the Runner is left running.
)

// RunnerTrigger is an event in the Runner's life.
type RunnerTrigger string

// Runner triggers.
const (
	RunnerStop    RunnerTrigger = "stop"    // the stop route, a signal, or the serve loop ended
	RunnerIdle    RunnerTrigger = "idle"    // no browser, client or offer for the whole idle period
	RunnerDrained RunnerTrigger = "drained" // every browser is closed or detached
)

// Runner effects.
const (
	// EffectCloseBrowsers closes every owned browser (Browser.close, reap)
	// and detaches from every attached one, each by its attachment machine.
	EffectCloseBrowsers fsm.Effect = "close_browsers"
	// EffectReleaseRunner stops the extension bridge and the session
	// watcher, discards every grant and closes the consent adapter.
	EffectReleaseRunner fsm.Effect = "release_runner"
)

type runnerEdge = fsm.Edge[RunnerState, RunnerTrigger, struct{}]

// RunnerSpec is the life of the Runner process's one Runner: it serves
// until stopped or idle, then drains every browser before it releases what
// it holds.
var RunnerSpec = (&fsm.Spec[RunnerState, RunnerTrigger, struct{}]{
	Name:  "runner",
	Title: "Runner: serving, draining, closed",
	Guards: "The life of the Runner. A browser is registered only while it serves: once stopped (the stop route, a " +
		"signal) or idle (no browser, no client connection and no pending offer for the whole idle period), a launch or " +
		"attach still in flight is refused and its browser torn down by its own machine, and every listed browser is " +
		"closed (owned) or detached (attached) before the bridge, the session watcher and the grants go. A second stop " +
		"is refused by the machine and waits for the first.",
	Initial: RunnerServing,
	States: []fsm.StateDoc[RunnerState]{
		fsm.Doc(RunnerServing, "Launches, attaches and MCP sessions are accepted."),
		fsm.Doc(RunnerDraining, "No new browser is registered; every listed browser is being closed or detached by its attachment machine."),
		fsm.Doc(RunnerClosed, "Every browser is closed or detached; the bridge and session watcher are stopped and every grant is discarded."),
	},
	Triggers: []RunnerTrigger{RunnerStop, RunnerIdle, RunnerDrained},
	Edges: []runnerEdge{
		{From: RunnerServing, On: RunnerStop, To: RunnerDraining, Effect: EffectCloseBrowsers},
		{From: RunnerServing, On: RunnerIdle, To: RunnerDraining, Effect: EffectCloseBrowsers},
		{From: RunnerDraining, On: RunnerDrained, To: RunnerClosed, Effect: EffectReleaseRunner},
	},
	Effects:      []fsm.Effect{EffectCloseBrowsers, EffectReleaseRunner},
	Stable:       []RunnerState{RunnerServing},
	Terminal:     []RunnerState{RunnerClosed},
	MaxTransient: 1,
}).MustValidate()

// Package waitfor is the one way a test waits for a condition another
// goroutine or process makes true: a clock started before the event it
// waits for, whose bound stretches with the machine's measured load
// (internal/slow) for as long as the wait lasts, and a poll that backs off.
//
//	clock := waitfor.Start(10 * time.Second) // before the event
//	h.dial.cut()
//	clock.Until(t, "reconnected", func() bool { return b.state() == "ready" })
//
// or, where the event already happened, waitfor.Until(t, d, what, cond).
// Sleeping here is polling state that announces no change; where it does,
// [Clock.UntilWoken] waits on the announcement instead.
package waitfor

import (
	"context"
	"fmt"
	"time"

	"github.com/webcodex/webcodex/internal/slow"
)

// Poll intervals: the first check comes soon, later ones back off so a
// long wait does not spin on a loaded machine.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// TB is the part of testing.TB a failed wait uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Clock is a bound on one wait, started before the event waited for.
type Clock struct {
	start time.Time
	bound time.Duration
}

// Start starts a clock of bound, as measured on an idle machine.
func Start(bound time.Duration) Clock { return Clock{start: time.Now(), bound: bound} }

// Bound is the clock's bound stretched by the machine's load now.
func (c Clock) Bound() time.Duration { return slow.Scale(c.bound) }

// Deadline is when the clock runs out, at the load measured now.
func (c Clock) Deadline() time.Time { return c.start.Add(c.Bound()) }

// Left is the time left before the deadline (≤ 0 once it passed).
func (c Clock) Left() time.Duration { return time.Until(c.Deadline()) }

// Passed reports whether the clock ran out.
func (c Clock) Passed() bool { return c.Left() <= 0 }

// Context returns a context that ends at the clock's deadline as measured
// now (a context cannot stretch later).
func (c Clock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(parent, c.Deadline())
}

// Wait polls cond until it holds (true) or the clock runs out (false).
func (c Clock) Wait(cond func() bool) bool {
	return c.wait(cond, func(max time.Duration) { time.Sleep(max) })
}

// Until polls cond until it holds, and fails tb naming what it waited for
// when the clock runs out.
func (c Clock) Until(tb TB, what string, cond func() bool) {
	tb.Helper()
	if !c.Wait(cond) {
		tb.Fatalf("%s", c.failure(what))
	}
}

// UntilWoken is Until for state that announces its changes: between two
// checks it calls wake, which returns when the state may have changed or
// after max at the latest.
func (c Clock) UntilWoken(tb TB, what string, cond func() bool, wake func(max time.Duration)) {
	tb.Helper()
	if !c.wait(cond, wake) {
		tb.Fatalf("%s", c.failure(what))
	}
}

func (c Clock) wait(cond func() bool, pause func(time.Duration)) bool {
	every := firstPoll
	for !cond() {
		left := c.Left()
		if left <= 0 {
			return cond() // one last look: the pause may have ended on the change
		}
		pause(min(every, left))
		every = min(2*every, maxPoll)
	}
	return true
}

func (c Clock) failure(what string) string {
	msg := fmt.Sprintf("%s: not within %s", what, c.Bound().Round(time.Millisecond))
	if f := slow.Factor(); f > 1 {
		msg += fmt.Sprintf(" (%s stretched %.1f× for the machine's load)", c.bound, f)
	}
	return msg
}

// Until polls cond until it holds, for at most bound (stretched with the
// load), and fails tb naming what it waited for. The clock starts now: use
// [Start] before the event where the event is the caller's.
func Until(tb TB, bound time.Duration, what string, cond func() bool) {
	tb.Helper()
	Start(bound).Until(tb, what, cond)
}

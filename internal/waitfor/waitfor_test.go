package waitfor

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// failTB records a failed wait instead of ending the test.
type failTB struct{ msg string }

func (f *failTB) Helper()                        {}
func (f *failTB) Fatalf(format string, a ...any) { f.msg = fmt.Sprintf(format, a...) }

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			time.Sleep(time.Millisecond)
			n.Add(1)
		}
	}()
	Until(t, time.Minute, "three steps", func() bool { return n.Load() == 3 })
}

func TestUntilFailsNamingTheWait(t *testing.T) {
	tb := &failTB{}
	start := time.Now()
	Until(tb, 20*time.Millisecond, "the impossible", func() bool { return false })
	if !strings.HasPrefix(tb.msg, "the impossible: not within ") {
		t.Fatalf("failure %q, want it to name the wait and its bound", tb.msg)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Fatalf("gave up after %s, before its bound", took)
	}
}

// TestClockStartsBeforeTheEvent: the time spent between Start and Until
// (causing the event) counts against the bound.
func TestClockStartsBeforeTheEvent(t *testing.T) {
	c := Start(30 * time.Millisecond)
	for !c.Passed() {
		time.Sleep(time.Millisecond)
	}
	tb := &failTB{}
	checks := 0
	c.Until(tb, "late", func() bool { checks++; return false })
	if tb.msg == "" || checks != 2 {
		t.Fatalf("a wait on a spent clock: failure %q after %d checks, want a failure after the first check and one last look", tb.msg, checks)
	}
}

func TestUntilWokenWaitsOnTheAnnouncement(t *testing.T) {
	changed := make(chan struct{}, 1)
	var v atomic.Bool
	go func() {
		time.Sleep(10 * time.Millisecond)
		v.Store(true)
		changed <- struct{}{}
	}()
	var pauses []time.Duration
	Start(time.Minute).UntilWoken(t, "the change", v.Load, func(max time.Duration) {
		pauses = append(pauses, max)
		select {
		case <-changed:
		case <-time.After(max):
		}
	})
	for _, p := range pauses {
		if p > maxPoll {
			t.Fatalf("paused up to %s, more than %s", p, maxPoll)
		}
	}
}

func TestWaitBacksOff(t *testing.T) {
	var pauses []time.Duration
	c := Start(time.Minute)
	n := 0
	c.wait(func() bool { n++; return n > 8 }, func(d time.Duration) { pauses = append(pauses, d) })
	want := []time.Duration{5, 10, 20, 40, 80, 100, 100, 100}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if fmt.Sprint(pauses) != fmt.Sprint(want) {
		t.Fatalf("pauses %v, want %v", pauses, want)
	}
}

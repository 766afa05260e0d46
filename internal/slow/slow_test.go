package slow

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestLoadFactor(t *testing.T) {
	for _, c := range []struct {
		load float64
		cpus int
		want float64
	}{
		{-1, 2, 1},   // no /proc/loadavg: idle
		{0.3, 2, 1},  // idle
		{2, 2, 1},    // every CPU busy, nobody waits
		{11, 2, 5.5}, // the load a red CI run saw
		{22, 2, 11},
		{500, 2, MaxFactor},
		{4, 0, 4}, // no CPU count: one CPU
	} {
		if got := loadFactor(c.load, c.cpus); got != c.want {
			t.Errorf("loadFactor(%v, %d) = %v, want %v", c.load, c.cpus, got, c.want)
		}
	}
}

func TestParseLoad(t *testing.T) {
	for in, want := range map[string]float64{
		"11.42 8.06 3.40 15/163 19783\n": 11.42,
		"0.00 0.01 0.05 1/80 1":          0,
		"":                               -1,
		"x 1 2":                          -1,
		"-3 1 2":                         -1,
	} {
		if got := parseLoad(in); got != want {
			t.Errorf("parseLoad(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseFactor(t *testing.T) {
	for in, want := range map[string]float64{"": 1, "3": 3, "0.5": 1, "x": 1, "2.5": 2.5} {
		if got := parseFactor(in); got != want {
			t.Errorf("parseFactor(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestFactorFollowsThisMachine: Factor is this machine's load per CPU as
// the kernel reports it (within what the load moves between two reads).
func TestFactorFollowsThisMachine(t *testing.T) {
	if _, err := os.Stat(loadPath); err != nil {
		t.Skipf("no %s on this system: the factor is 1 by construction", loadPath)
	}
	before := loadFactor(readLoad(), runtime.NumCPU())
	measured.Lock()
	measured.at = time.Time{} // measure now
	measured.Unlock()
	got := Factor() / envFactor()
	after := loadFactor(readLoad(), runtime.NumCPU())
	lo, hi := min(before, after), max(before, after)
	if got < lo-0.5 || got > hi+0.5 || got < 1 || got > MaxFactor {
		t.Fatalf("Factor = %v, the load says %v..%v", got, lo, hi)
	}
	if d := Scale(time.Second); d < time.Duration(float64(time.Second)*got*envFactor()*0.5) || d < time.Second {
		t.Fatalf("Scale(1s) = %v with factor %v", d, got)
	}
}

// Package slow stretches the timing bounds of tests to the machine they
// run on: a bound that holds on an idle workstation fails on a loaded
// two-core CI runner under -race. The machine's load is measured, so no
// one has to know a variable; [Env] only raises the factor further.
package slow

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Env names the variable that multiplies every bound on top of the measured
// load: WEBCODEX_TEST_SLOW=3 on a machine slower than its load says. Unset,
// empty or not a number ≥ 1 means 1.
const Env = "WEBCODEX_TEST_SLOW"

// MaxFactor bounds the measured factor: a bound stretched further than this
// no longer tells a hang from slowness.
const MaxFactor = 20

// loadPath is the kernel's load average (runnable and uninterruptible
// tasks, averaged over 1, 5 and 15 minutes).
const loadPath = "/proc/loadavg"

// remeasure is how long a measured factor is reused: the 1-minute load
// average moves slower than that.
const remeasure = time.Second

var envFactor = sync.OnceValue(func() float64 { return parseFactor(os.Getenv(Env)) })

var measured struct {
	sync.Mutex
	at     time.Time
	factor float64
}

// Factor returns the multiplier now: the machine's load per CPU (the
// 1-minute load average over the CPUs this process may use; each task gets
// about that share less of a CPU), at least 1 and at most [MaxFactor],
// times [Env]'s factor. It is measured again at most once a second, so a
// bound set while other jobs start stretches with them.
func Factor() float64 {
	measured.Lock()
	defer measured.Unlock()
	if now := time.Now(); now.Sub(measured.at) >= remeasure {
		measured.at, measured.factor = now, loadFactor(readLoad(), runtime.NumCPU())
	}
	return measured.factor * envFactor()
}

// Scale returns d stretched by [Factor].
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * Factor()) }

// loadFactor turns a load average and a CPU count into a factor in
// [1, MaxFactor]. An unreadable load (load < 0) counts as an idle machine.
func loadFactor(load float64, cpus int) float64 {
	if cpus < 1 {
		cpus = 1
	}
	f := load / float64(cpus)
	switch {
	case f < 1:
		return 1
	case f > MaxFactor:
		return MaxFactor
	}
	return f
}

// readLoad returns the 1-minute load average, or -1 where there is none
// (not Linux, or /proc not mounted).
func readLoad() float64 {
	data, err := os.ReadFile(loadPath)
	if err != nil {
		return -1
	}
	return parseLoad(string(data))
}

func parseLoad(s string) float64 {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return -1
	}
	l, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || l < 0 {
		return -1
	}
	return l
}

func parseFactor(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 1 {
		return 1
	}
	return f
}

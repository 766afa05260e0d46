// Package slow stretches the timing bounds of tests to the machine they
// run on: a bound that holds on an idle workstation fails on a loaded
// two-core CI runner under -race.
package slow

import (
	"os"
	"strconv"
	"sync"
	"time"
)

// Env names the variable that multiplies every bound: WEBCODEX_TEST_SLOW=3
// on a slow machine. Unset, empty or not a number ≥ 1 means 1.
const Env = "WEBCODEX_TEST_SLOW"

// Factor returns the multiplier from [Env], read once.
var Factor = sync.OnceValue(func() float64 {
	f, err := strconv.ParseFloat(os.Getenv(Env), 64)
	if err != nil || f < 1 {
		return 1
	}
	return f
})

// Scale returns d stretched by [Factor].
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * Factor()) }

package slow

import (
	"testing"
	"time"
)

func TestScale(t *testing.T) {
	t.Setenv(Env, "") // Factor is read once; this checks the default path only
	if f := Factor(); f < 1 {
		t.Fatalf("Factor = %v, want ≥ 1", f)
	}
	if got := Scale(time.Second); got < time.Second {
		t.Fatalf("Scale(1s) = %v, want ≥ 1s", got)
	}
}

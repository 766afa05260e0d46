package surface

import "fmt"

// diffLines returns a line diff of a and b: "@@ line N" hunk headers, then
// "- " removed and "+ " added lines. It reports false when the edit distance
// exceeds maxDiffEdits, in which case the caller shows the whole outline.
// Myers' O((N+M)D) algorithm; refs are stable within a document, so an
// unchanged node keeps an identical line.
func diffLines(a, b []string) ([]string, bool) {
	// Trim the common prefix and suffix: most changes are local.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	x, y := a[pre:len(a)-suf], b[pre:len(b)-suf]
	ops, ok := myers(x, y)
	if !ok {
		return nil, false
	}
	var out []string
	ai, bi := 0, 0
	inHunk := false
	for _, op := range ops {
		switch op {
		case '=':
			ai++
			bi++
			inHunk = false
		case '-':
			if !inHunk {
				out = append(out, fmt.Sprintf("@@ line %d", pre+bi+1))
				inHunk = true
			}
			out = append(out, "- "+x[ai])
			ai++
		case '+':
			if !inHunk {
				out = append(out, fmt.Sprintf("@@ line %d", pre+bi+1))
				inHunk = true
			}
			out = append(out, "+ "+y[bi])
			bi++
		}
	}
	return out, true
}

// myers returns the edit script turning x into y as '=', '-', '+' ops.
func myers(x, y []string) ([]byte, bool) {
	n, m := len(x), len(y)
	max := n + m
	if max == 0 {
		return nil, true
	}
	limit := maxDiffEdits
	if limit > max {
		limit = max
	}
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		// Keep only diagonals -d..d, which step d's backtrack reads.
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(trace, x, y, d), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int, x, y []string, d int) []byte {
	var ops []byte
	i, j := len(x), len(y)
	for ; d > 0; d-- {
		v := trace[d] // diagonal k is v[k+d]
		k := i - j
		var pk int
		if k == -d || (k != d && v[k-1+d] < v[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		pi := v[pk+d]
		pj := pi - pk
		for i > pi && j > pj {
			ops = append(ops, '=')
			i--
			j--
		}
		if i == pi {
			ops = append(ops, '+')
			j--
		} else {
			ops = append(ops, '-')
			i--
		}
	}
	for i > 0 && j > 0 {
		ops = append(ops, '=')
		i--
		j--
	}
	for l, r := 0, len(ops)-1; l < r; l, r = l+1, r-1 {
		ops[l], ops[r] = ops[r], ops[l]
	}
	return ops
}

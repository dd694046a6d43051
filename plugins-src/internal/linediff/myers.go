package linediff

// MaxRound is the most edits one round of the search explores (Myers'
// D). A round that finds the end gives a shortest diff; one that does not
// keeps the part of the furthest path it reached (which is optimal as far
// as it goes) and the next round starts there. So work and memory are
// bounded — O((N+M)·MaxRound) steps, MaxRound² positions (int32) kept per round —
// and texts that differ in more than MaxRound lines get a valid diff that
// may not be the shortest.
const MaxRound = 500

// change is one run of differences: old lines [Start, End) replaced by new
// lines [ReplStart, ReplEnd).
type change struct{ Start, End, ReplStart, ReplEnd int }

// diffLines returns the changes that turn a into b, in order: Myers'
// O(ND) greedy algorithm ("An O(ND) Difference Algorithm and Its
// Variations", Algorithmica 1, 1986), on the lines interned to numbers,
// after the common start and end are set aside.
func diffLines(a, b []string) []change {
	ids := make(map[string]int32, len(a)+len(b))
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	x, y = x[pre:len(x)-suf], y[pre:len(y)-suf]

	var ops []byte // '=', '-', '+', one per line, in order
	for len(x) > 0 || len(y) > 0 {
		round, dx, dy := search(x, y)
		ops = append(ops, round...)
		x, y = x[dx:], y[dy:]
	}
	var out []change
	i, j := pre, pre
	for k := 0; k < len(ops); {
		if ops[k] == '=' {
			i, j, k = i+1, j+1, k+1
			continue
		}
		c := change{Start: i, ReplStart: j}
		for ; k < len(ops) && ops[k] != '='; k++ {
			if ops[k] == '-' {
				i++
			} else {
				j++
			}
		}
		c.End, c.ReplEnd = i, j
		out = append(out, c)
	}
	return out
}

// search runs one round from the start of x and y: the operations of the
// path it keeps and how far along x and y that path ends.
func search(x, y []int32) ([]byte, int, int) {
	n, m := len(x), len(y)
	off := MaxRound + 1
	v := make([]int32, 2*MaxRound+3) // v[off+k]: furthest x on diagonal k
	var trace [][]int32              // trace[d][d+k]: v after round d
	endX, endK, endD := -1, 0, 0
	for d := 0; d <= MaxRound && endX < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var px int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				px = int(v[off+k+1]) // down: an insertion
			} else {
				px = int(v[off+k-1]) + 1 // right: a deletion
			}
			py := px - k
			for px < n && py < m && x[px] == y[py] {
				px, py = px+1, py+1
			}
			v[off+k] = int32(px)
			if px >= n && py >= m {
				endX, endK, endD = px, k, d
				break
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	if endX < 0 {
		// No end within MaxRound: keep the in-grid point of the last round
		// furthest along (largest x+y).
		endD = MaxRound
		best := -1
		for k := -endD; k <= endD; k += 2 {
			px := int(v[off+k])
			if py := px - k; px <= n && py >= 0 && py <= m && px+py > best {
				best, endX, endK = px+py, px, k
			}
		}
	}
	// Walk back from the end to (0, 0), collecting operations in reverse.
	var rev []byte
	px, k := endX, endK
	for d := endD; d > 0; d-- {
		prev := trace[d-1] // prev[d-1+k] is v[k] after round d-1
		at := func(k int) int { return int(prev[d-1+k]) }
		var pk, sx int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
			sx = at(pk) // the insertion leaves x unchanged
		} else {
			pk = k - 1
			sx = at(pk) + 1
		}
		for ; px > sx; px-- {
			rev = append(rev, '=')
		}
		if pk == k+1 {
			rev = append(rev, '+')
		} else {
			rev = append(rev, '-')
		}
		px, k = at(pk), pk
	}
	for ; px > 0; px-- {
		rev = append(rev, '=')
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, endX, endX - endK
}

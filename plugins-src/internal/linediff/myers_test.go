package linediff

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// apply turns a into b with the changes, failing on an inconsistent script.
func apply(t *testing.T, a, b []string, cs []change) []string {
	t.Helper()
	var out []string
	i := 0
	for _, c := range cs {
		if c.Start < i || c.End < c.Start || c.ReplEnd < c.ReplStart {
			t.Fatalf("changes out of order: %+v", cs)
		}
		out = append(out, a[i:c.Start]...)
		out = append(out, b[c.ReplStart:c.ReplEnd]...)
		i = c.End
	}
	return append(out, a[i:]...)
}

// lcsLen is the textbook dynamic-programming LCS length, the reference
// for the shortest diff's size (n + m - 2·LCS).
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

func TestDiffLinesShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		gen := func() []string {
			s := make([]string, r.IntN(12))
			for i := range s {
				s[i] = string(rune('a' + r.IntN(3)))
			}
			return s
		}
		a, b := gen(), gen()
		cs := diffLines(a, b)
		if got := apply(t, a, b, cs); !slices.Equal(got, b) {
			t.Fatalf("%q → %q: applying %+v gives %q", a, b, cs, got)
		}
		edits := 0
		for _, c := range cs {
			edits += c.End - c.Start + c.ReplEnd - c.ReplStart
		}
		if want := len(a) + len(b) - 2*lcsLen(a, b); edits != want {
			t.Fatalf("%q → %q: %d edits, the shortest has %d", a, b, edits, want)
		}
	}
}

// Past MaxRound edits the search goes round by round: still a valid diff.
func TestDiffLinesBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var a, b []string
	for i := range 4000 {
		a = append(a, strconv.Itoa(r.IntN(50)))
		if i%3 != 0 {
			b = append(b, strconv.Itoa(r.IntN(50)))
		} else {
			b = append(b, a[i])
		}
	}
	cs := diffLines(a, b)
	if got := apply(t, a, b, cs); !slices.Equal(got, b) {
		t.Fatal("bounded diff does not turn a into b")
	}
	totally := diffLines([]string{"x", "y"}, []string{"p", "q", "r"})
	if len(totally) != 1 || totally[0] != (change{0, 2, 0, 3}) {
		t.Errorf("disjoint texts: %+v", totally)
	}
}

// FuzzDiff holds the diff to what it must be on any two texts: applying the
// changes turns the old lines into the new ones, and equal texts have none.
func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\nd")
	f.Add("", "x\n")
	f.Add("1\n2\n3\n4\n5\n", "0\n2\n3\n6\n5\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		a, b := split(old), split(new)
		cs := diffLines(a, b)
		if got := apply(t, a, b, cs); !slices.Equal(got, b) {
			t.Fatalf("applying %+v gives %q, want %q", cs, got, b)
		}
		if (len(cs) == 0) != slices.Equal(a, b) {
			t.Fatalf("%d changes for equal=%v", len(cs), slices.Equal(a, b))
		}
		Unified(old, new, "a", "b", 3)
	})
}

package linetext

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/seeded"
)

// SortOptions choose the order of Sort.
type SortOptions struct {
	Descending bool
	IgnoreCase bool // compare simple lower-case forms (strings.ToLower)
	// Numeric sorts lines that start with a decimal number (after
	// horizontal white space; sign, digits, optional fraction) by that
	// number, before every line that does not, which sort as text.
	Numeric bool
}

// Sort orders the lines, stably: lines that compare equal keep their
// order. Text compares by code point (byte order of UTF-8), not by a
// locale's collation.
func Sort(lines []string, o SortOptions) {
	type keyed struct {
		key    string
		num    float64
		hasNum bool
		line   string
	}
	ks := make([]keyed, len(lines))
	for i, l := range lines {
		k := keyed{key: l, line: l}
		if o.IgnoreCase {
			k.key = strings.ToLower(l)
		}
		if o.Numeric {
			k.num, k.hasNum = leadingNumber(l)
		}
		ks[i] = k
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		c := 0
		switch {
		case a.hasNum && b.hasNum:
			c = cmp.Compare(a.num, b.num)
		case a.hasNum:
			return -1 // numbers first, whatever the direction
		case b.hasNum:
			return 1
		}
		if c == 0 {
			c = strings.Compare(a.key, b.key)
		}
		if o.Descending {
			c = -c
		}
		return c
	})
	for i, k := range ks {
		lines[i] = k.line
	}
}

// leadingNumber parses the decimal number a line starts with.
func leadingNumber(l string) (float64, bool) {
	l = strings.TrimLeftFunc(l, horizontal)
	end := 0
	if end < len(l) && (l[end] == '-' || l[end] == '+') {
		end++
	}
	digits := 0
	for end < len(l) && l[end] >= '0' && l[end] <= '9' {
		end, digits = end+1, digits+1
	}
	if end < len(l) && l[end] == '.' {
		frac := end + 1
		for frac < len(l) && l[frac] >= '0' && l[frac] <= '9' {
			frac++
		}
		if frac > end+1 {
			digits += frac - end - 1
			end = frac
		}
	}
	if digits == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(l[:end], 64)
	return f, err == nil
}

// Dedupe keeps the first of equal lines and reports how many it removed.
// IgnoreCase makes lines equal that have the same lower-case form.
func Dedupe(lines []string, ignoreCase bool) ([]string, int) {
	seen := make(map[string]struct{}, len(lines))
	out := lines[:0:0]
	for _, l := range lines {
		k := l
		if ignoreCase {
			k = strings.ToLower(l)
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, l)
	}
	return out, len(lines) - len(out)
}

// Reverse puts the lines in the opposite order.
func Reverse(lines []string) { slices.Reverse(lines) }

// Shuffle permutes the lines with the seeded generator: the same seed and
// lines give the same order everywhere.
func Shuffle(lines []string, seed uint64) {
	seeded.New(seed).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
}

// Package linediff compares two texts line by line and writes the
// differences as a unified diff (the format of GNU diff -u and git diff).
// The diff is Myers' algorithm with a bounded search (myers.go), written
// here rather than taken from a library: github.com/aymanbagabas/go-udiff
// (gopls' diff) does the same job but links fmt and log, half a megabyte
// of the WASM module, and its formatter counts newlines from the start of
// the text for every edit, quadratic on texts of many small changes.
package linediff

import (
	"strconv"
	"strings"
)

// Result is a diff and its counts.
type Result struct {
	Text    string // the unified diff; "" when the texts are equal
	Added   int    // lines only in the new text
	Removed int    // lines only in the old text
	Hunks   int
}

// split cuts text into lines that keep their "\n": "a\nb" is "a\n", "b".
func split(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Unified compares old and new and writes their unified diff with context
// lines of context around each change (hunks closer than twice that
// merge), under the headers "--- oldLabel" and "+++ newLabel". A line
// ends at LF; a CR before it is part of the line. A last line without LF
// is marked "\ No newline at end of file", as GNU diff does.
func Unified(old, new, oldLabel, newLabel string, context int) Result {
	a, b := split(old), split(new)
	diffs := diffLines(a, b)
	var r Result
	if len(diffs) == 0 {
		return r
	}
	var out strings.Builder
	out.WriteString("--- " + oldLabel + "\n+++ " + newLabel + "\n")
	for first := 0; first < len(diffs); {
		last := first
		for last+1 < len(diffs) && diffs[last+1].Start-diffs[last].End <= 2*context {
			last++
		}
		f, l := diffs[first], diffs[last]
		oldStart := max(0, f.Start-context)
		oldEnd := min(len(a), l.End+context)
		newStart := f.ReplStart - (f.Start - oldStart)
		newEnd := l.ReplEnd + (oldEnd - l.End)
		out.WriteString("@@ -" + hunkRange(oldStart, oldEnd-oldStart) + " +" + hunkRange(newStart, newEnd-newStart) + " @@\n")
		i := oldStart
		for _, d := range diffs[first : last+1] {
			writeLines(&out, ' ', a[i:d.Start])
			writeLines(&out, '-', a[d.Start:d.End])
			writeLines(&out, '+', b[d.ReplStart:d.ReplEnd])
			r.Removed += d.End - d.Start
			r.Added += d.ReplEnd - d.ReplStart
			i = d.End
		}
		writeLines(&out, ' ', a[i:oldEnd])
		r.Hunks++
		first = last + 1
	}
	r.Text = out.String()
	return r
}

// hunkRange is a hunk header's "start,length" (GNU diff's rules): the
// length is left out when it is 1, and an empty range starts at the line
// before it.
func hunkRange(start, length int) string {
	switch length {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(length)
}

// writeLines writes each line after its mark.
func writeLines(out *strings.Builder, mark byte, lines []string) {
	for _, l := range lines {
		out.WriteByte(mark)
		out.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

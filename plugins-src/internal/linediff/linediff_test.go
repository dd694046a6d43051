package linediff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The expected diffs are GNU diff's: `diff -u old new` with the two
// header lines' dates removed (vectors made with GNU diffutils 3.x and
// checked by TestAgainstGNUDiff where diff is installed).
func TestUnified(t *testing.T) {
	tests := []struct {
		name, old, new string
		context        int
		want           string
		added, removed int
	}{
		{"equal", "a\nb\n", "a\nb\n", 3, "", 0, 0},
		{"both empty", "", "", 3, "", 0, 0},
		{"one change", "a\nb\nc\n", "a\nB\nc\n", 3, "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 1, 1},
		{"no context", "a\nb\nc\n", "a\nB\nc\n", 0, "--- old\n+++ new\n@@ -2 +2 @@\n-b\n+B\n", 1, 1},
		{"from empty", "", "x\ny\n", 3, "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0},
		{"to empty", "x\n", "", 3, "--- old\n+++ new\n@@ -1 +0,0 @@\n-x\n", 0, 1},
		{"no newline at end", "a\nb", "a\nb\n", 3, "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", 1, 1},
		{"insert in middle, context 1", "1\n2\n3\n4\n5\n", "1\n2\nx\n3\n4\n5\n", 1, "--- old\n+++ new\n@@ -2,2 +2,3 @@\n 2\n+x\n 3\n", 1, 0},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n2\n3\n4\n5\n6\n7\n8\n9x\n", 1,
			"--- old\n+++ new\n@@ -1,2 +1,2 @@\n-1\n+0\n 2\n@@ -8,2 +8,2 @@\n 8\n-9\n+9x\n", 2, 2},
		{"merged hunks", "1\n2\n3\n4\n5\n", "0\n2\n3\n6\n5\n", 1,
			"--- old\n+++ new\n@@ -1,5 +1,5 @@\n-1\n+0\n 2\n 3\n-4\n+6\n 5\n", 2, 2},
		{"hunks three lines apart stay apart", "1\n2\n3\n4\n5\n", "0\n2\n3\n4\n6\n", 1,
			"--- old\n+++ new\n@@ -1,2 +1,2 @@\n-1\n+0\n 2\n@@ -4,2 +4,2 @@\n 4\n-5\n+6\n", 2, 2},
		{"crlf is part of the line", "a\r\nb\r\n", "a\nb\r\n", 3, "--- old\n+++ new\n@@ -1,2 +1,2 @@\n-a\r\n+a\n b\r\n", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Unified(tt.old, tt.new, "old", "new", tt.context)
			if r.Text != tt.want || r.Added != tt.added || r.Removed != tt.removed {
				t.Errorf("got %q (+%d -%d)\nwant %q (+%d -%d)", r.Text, r.Added, r.Removed, tt.want, tt.added, tt.removed)
			}
			if (r.Hunks == 0) != (tt.want == "") {
				t.Errorf("%d hunks", r.Hunks)
			}
		})
	}
}

// TestAgainstGNUDiff compares with `diff -u` on texts whose minimal diff
// is unique, where GNU diff is installed (diffutils).
func TestAgainstGNUDiff(t *testing.T) {
	diff, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("GNU diff is not installed")
	}
	var old, new strings.Builder
	for i := range 200 {
		old.WriteString("line " + strconv.Itoa(i) + "\n")
		switch {
		case i%37 == 0:
			new.WriteString("changed " + strconv.Itoa(i) + "\n")
		case i%53 == 0:
		default:
			new.WriteString("line " + strconv.Itoa(i) + "\n")
		}
		if i%61 == 0 {
			new.WriteString("inserted " + strconv.Itoa(i) + "\n")
		}
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(pa, []byte(old.String()), 0o600)
	os.WriteFile(pb, []byte(new.String()), 0o600)
	out, _ := exec.Command(diff, "-u", "--label", "old", "--label", "new", pa, pb).Output()
	if got := Unified(old.String(), new.String(), "old", "new", 3).Text; got != string(out) {
		t.Errorf("got\n%s\nGNU diff\n%s", got, out)
	}
}

func BenchmarkUnifiedManyChanges(b *testing.B) {
	var old, new strings.Builder
	for i := range 6000 {
		old.WriteString("line " + strconv.Itoa(i) + "\n")
		if i%2 == 0 {
			new.WriteString("other " + strconv.Itoa(i) + "\n")
		} else {
			new.WriteString("line " + strconv.Itoa(i) + "\n")
		}
	}
	for b.Loop() {
		Unified(old.String(), new.String(), "a", "b", 3)
	}
}
